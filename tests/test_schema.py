"""The golden JSON Schema of koikoi/1 matches the code, and ``koikoi-referee schema`` prints it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

from referee import protocol as P
from referee.engine import CARD_IDS, PRESETS, new_match, observe
from referee.protocol import PROTOCOL_VERSION, json_schema, schema_text

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "referee" / "koikoi-1.schema.json"
REGEN = "python scripts/regen_schema.py"
_START = new_match(PRESETS["guide"], seed=1)
_VIEW = observe(_START, _START.to_move).to_json()


def test_golden_schema_is_current() -> None:
    assert GOLDEN.exists(), f"missing {GOLDEN}; create it with `{REGEN}`"
    assert GOLDEN.read_text(encoding="utf-8") == schema_text(), (
        f"{GOLDEN.name} is stale: the wire models changed. Regenerate it with `{REGEN}` and commit it."
    )


def test_golden_schema_ships_as_package_data() -> None:
    shipped = resources.files("referee").joinpath("koikoi-1.schema.json")
    assert json.loads(shipped.read_text(encoding="utf-8")) == json_schema()


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
