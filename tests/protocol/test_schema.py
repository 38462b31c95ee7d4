"""The golden JSON Schema of koikoi/1 matches the code, and ``koikoi-referee schema`` prints it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from referee import protocol as P
from referee.engine import CARD_IDS, PRESETS, new_match, observe
from referee.match import MatchConfig, TimeControl, run_match, run_matches
from referee.protocol import PROTOCOL_VERSION, json_schema, schema_text
from referee.seats.process import BotProcess
from tests.helpers import FIRST, GREEDY, ROOT

GOLDEN = ROOT / "referee" / "koikoi-1.schema.json"
REGEN = "python scripts/regen_schema.py"
_START = new_match(PRESETS["guide"], seed=1)
_VIEW = P.view_json(observe(_START, _START.to_move))


def test_golden_schema_is_current() -> None:
    assert GOLDEN.exists(), f"missing {GOLDEN}; create it with `{REGEN}`"
    assert GOLDEN.read_text(encoding="utf-8") == schema_text(), (
        f"{GOLDEN.name} is stale: the wire models changed. Regenerate it with `{REGEN}` and commit it."
    )


def test_golden_schema_ships_as_package_data() -> None:
    shipped = resources.files("referee").joinpath("koikoi-1.schema.json")
    assert json.loads(shipped.read_text(encoding="utf-8")) == json_schema()


@pytest.mark.slow
def test_schema_command_prints_the_golden_copy() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", "schema"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == GOLDEN.read_text(encoding="utf-8")


def test_schema_names_every_message_of_both_directions() -> None:
    schema = json_schema()
    defs = schema["$defs"]
    assert schema["title"].startswith(PROTOCOL_VERSION)
    to_bot = defs["RefereeToBot"]["discriminator"]["mapping"]
    assert set(to_bot) == {"hello", "new_match", "event", "request", "error", "bye"}
    events = to_bot["event"]["discriminator"]["mapping"]
    assert set(events) == {"round_start", "misdeal", "play", "draw", "draw_capture", "yaku", "koikoi",
                           "hand_yaku", "round_end", "match_end"}  # fmt: skip
    assert set(defs["BotToReferee"]["discriminator"]["mapping"]) == {"hello", "action"}
    assert defs["CardId"]["enum"] == list(CARD_IDS)
    for name, d in defs.items():
        if d.get("type") == "object":
            assert d.get("additionalProperties") is False, f"{name} must forbid unknown fields"


def test_every_reference_resolves() -> None:
    schema = json_schema()
    refs: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append(node["$ref"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert refs
    for ref in refs:
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"], ref


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)


def test_protocol_md_examples_are_real_messages() -> None:
    """Every ``json`` block (one message) and ``jsonl`` line of PROTOCOL.md is a valid message or action."""
    text = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    docs = _blocks(text, "json") + [line for b in _blocks(text, "jsonl") for line in b.splitlines() if line]
    assert len(docs) > 15
    for doc in docs:
        value = json.loads(doc)
        if set(value) <= {"play", "capture", "koikoi"}:  # a bare action object
            P.validate_referee_message({"type": "request", "id": 1, "decision": "play", "view": _VIEW,
                                        "legal": [value], "time": {"move_ms": 1, "bank_ms": 1}})  # fmt: skip
            continue
        line = json.dumps(value).encode()
        try:
            P.validate_referee_message(value)
        except ValueError:
            P.parse_bot_message(line)  # not a referee line: must be a bot line


def test_protocol_md_shows_the_minimal_bot_verbatim() -> None:
    text = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    assert (ROOT / "bots" / "minimal_bot.py").read_text(encoding="utf-8") in _blocks(text, "python")


ILLEGAL_BOT = """\
import json, sys
requests = 0
for raw in sys.stdin:
    msg = json.loads(raw)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "illegal"}), flush=True)
    elif msg["type"] == "request":
        requests += 1
        action = {"play": "pine-crane", "capture": "pine-crane"} if requests == 2 else msg["legal"][-1]
        print(json.dumps({"type": "action", "id": msg["id"], "action": action}), flush=True)
"""


def _referee_to_bot_validator() -> Any:
    """A validator of one referee → bot line, built from what ``koikoi-referee schema`` prints."""
    proc = subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", "schema"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    schema = json.loads(proc.stdout)
    schema["anyOf"] = [{"$ref": "#/$defs/RefereeToBot"}]
    validator = jsonschema.Draft202012Validator(schema)
    validator.check_schema(schema)
    return validator


@pytest.mark.slow
def test_every_byte_written_to_a_bot_in_real_matches_fits_the_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real matches between real bot processes. Every byte the referee writes to a bot's stdin is recorded as it
    goes into the pipe (a bot that forfeits is killed at once, so it could not be trusted to copy its last lines)
    and must be compact ASCII JSON lines that the published schema accepts as referee → bot messages."""
    validator = _referee_to_bot_validator()
    written: dict[BotProcess, bytearray] = {}  # keyed by the process object (kept alive: no id reuse)
    real_write = BotProcess.write

    def recording_write(self: BotProcess, data: bytes) -> None:
        real_write(self, data)
        written.setdefault(self, bytearray()).extend(data)

    monkeypatch.setattr(BotProcess, "write", recording_write)
    illegal = tmp_path / "illegal.py"
    illegal.write_text(ILLEGAL_BOT)
    time = TimeControl(startup_ms=10_000, move_ms=5_000, bank_ms=60_000)
    # a misdeal and a drawn-card choice; an exhausted round; a hand yaku; then two games on the same processes
    for preset, seed in (("koikoi-japan", 7316402915352), ("guide", 7316402915341), ("cardavia", 7316402915461)):
        result = run_match((FIRST, GREEDY), MatchConfig(PRESETS[preset], seed, time=time))
        assert result.forfeit is None
    configs = [MatchConfig(PRESETS["cardavia"], s, match_id=f"m-{s}", time=time) for s in (1, 2)]
    assert all(r.forfeit is None for r in run_matches((FIRST, GREEDY), configs))
    # an illegal answer: the offender gets an error line before it is let go
    result = run_match((f"{sys.executable} {illegal}", FIRST), MatchConfig(PRESETS["guide"], 3, time=time))
    assert result.forfeit is not None and result.forfeit.reason == "illegal_action"
    assert len(written) == 10

    types: set[str] = set()
    events: set[str] = set()
    for raw in written.values():
        assert raw.endswith(b"\n")
        for line in raw.split(b"\n")[:-1]:
            assert line.isascii(), line[:80]
            msg = json.loads(line)
            assert line == json.dumps(msg, separators=(",", ":")).encode(), "not the compact encoding"
            errors = sorted(validator.iter_errors(msg), key=str)
            assert not errors, f"{line[:200]!r}: {errors[0].message[:300]}"
            types.add(msg["type"])
            if msg["type"] == "event":
                events.add(msg["event"])
    assert types == {"hello", "new_match", "event", "request", "error", "bye"}
    assert events >= {"round_start", "misdeal", "play", "draw", "draw_capture", "yaku", "koikoi", "hand_yaku",
                      "round_end", "match_end"}  # fmt: skip
