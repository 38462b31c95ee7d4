"""The Python bot helper (``referee.bot.run``): whole matches through the real referee, and bad input survived."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.bot import answer, run
from tests.helpers import ROOT

BOT = """
import sys
from referee.bot import run

seen = {"events": 0, "matches": 0}

def observe(msg):
    if msg["type"] == "event":
        seen["events"] += 1
    else:
        seen["matches"] += 1

def choose(request):
    return request["legal"][-1]

run(choose, name="last-legal", version="2.0", observe=observe)
print(f"matches={seen['matches']} events={seen['events']}", file=sys.stderr)
"""


@pytest.mark.slow
def test_a_helper_bot_plays_whole_matches_through_the_referee(tmp_path: Path, referee_exe: Path) -> None:
    bot = tmp_path / "last_bot.py"
    bot.write_text(BOT)
    logs = tmp_path / "logs"
    cmd = f"{sys.executable} {bot}"
    out = subprocess.run(
        [str(referee_exe), "play", cmd, cmd, "--rules", "koikoi-japan", "--seed", "11", "--games", "2", "--json",
         "--log-dir", str(logs)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(results) == 2
    for result in results:
        assert result["forfeit"] is None
        assert result["names"] == ["last-legal", "last-legal"]
        assert result["decisions"] > 0
    stderr = "".join(p.read_text() for p in sorted(logs.rglob("*")) if p.is_file())
    assert "matches=2 events=" in stderr  # one process, hello then new_match, all events; bye ended the loop
    assert "events=0" not in stderr


def drive(lines: list[Any], choose: Any, observe: Any = None) -> tuple[list[dict[str, Any]], str]:
    """Run the helper on scripted input lines (dicts are encoded, strings sent as they are)."""
    raw = b"".join((json.dumps(x) if not isinstance(x, str) else x).encode() + b"\n" for x in lines)
    out, err = io.StringIO(), io.StringIO()
    assert run(choose, name="t", observe=observe, stdin=io.BytesIO(raw), stdout=out, stderr=err) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


REQUEST = {"type": "request", "id": 4, "decision": "koikoi", "view": {}, "legal": [{"koikoi": False},
           {"koikoi": True}], "time": {"move_ms": 1000, "bank_ms": 30000}}  # fmt: skip


def test_bad_lines_and_unexpected_messages_are_logged_and_skipped() -> None:
    seen: list[str] = []
    sent, err = drive(
        [{"type": "hello", "protocol": "koikoi/1", "seat": 1}, "not json {", [1, 2], {"type": "surprise"},
         {"type": "event", "event": "play"}, {"type": "error", "message": "you lost"}, REQUEST, {"type": "bye"},
         REQUEST],
        lambda r: r["legal"][1],
        lambda m: seen.append(m["type"]),
    )  # fmt: skip
    assert sent == [
        {"type": "hello", "name": "t", "protocol": "koikoi/1"},
        {"type": "action", "id": 4, "action": {"koikoi": True}},
    ]  # nothing after bye
    assert seen == ["hello", "event"]
    assert "not JSON" in err and "unexpected message" in err and "you lost" in err


def test_a_failing_policy_or_observer_still_answers_legally() -> None:
    def boom(_: Any) -> Any:
        raise RuntimeError("policy bug")

    sent, err = drive([{"type": "event", "event": "x"}, REQUEST, REQUEST | {"id": 5}], boom, boom)
    assert [m["action"] for m in sent] == [{"koikoi": False}, {"koikoi": False}]
    assert [m["id"] for m in sent] == [4, 5]
    assert "policy bug" in err and "observer raised" in err
    err_io = io.StringIO()
    assert answer(REQUEST, lambda r: {"play": "pine-crane"}, err_io)["action"] == {"koikoi": False}
    assert "not a legal action" in err_io.getvalue()


def test_end_of_input_ends_the_loop() -> None:
    sent, _ = drive([REQUEST], lambda r: r["legal"][0])
    assert sent == [{"type": "action", "id": 4, "action": {"koikoi": False}}]
