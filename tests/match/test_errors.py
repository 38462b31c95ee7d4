"""Errors a bot author can act on: the refused line quoted, the key and value named, the legal actions as JSON,
the stderr log kept and named, and a forfeit that reads as one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee import protocol as P
from referee.records import Failure, Forfeit, MatchResult, Termination
from referee.series import Played, result_line, summary_lines
from tests.helpers import GREEDY

CHATTY = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "chatty"}), flush=True)
    elif msg["type"] == "request":
        print("chatty stderr: request", msg["id"], file=sys.stderr, flush=True)  # first: the forfeit kills it
        print("debug: thinking about", msg["legal"][0]["play"], flush=True)
    elif msg["type"] == "bye":
        break
"""
JVM = """\
import sys
print("Could not reserve enough space for object heap", file=sys.stderr, flush=True)
print("Error occurred during initialization of VM", flush=True)
sys.exit(1)
"""


def play(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``play`` in ``cwd``, its temporary log folders made there too."""
    exe = Path(sys.executable).parent / "koikoi-referee"
    return subprocess.run([str(exe), "play", *map(str, args), "--sandbox", "none", "--rules", "cardavia",
                           "--startup-ms", "20000", "--move-ms", "5000"], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TMPDIR": str(cwd)})  # fmt: skip


@pytest.mark.slow
def test_debug_output_on_stdout_is_quoted_in_the_console_the_json_and_the_replay(tmp_path: Path) -> None:
    (tmp_path / "chatty.py").write_text(CHATTY)
    out = play("chatty.py", GREEDY, "--seed", "5", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert 'forfeits: invalid_json: request 1: not a JSON line' in text
    assert '; the line: "debug: thinking about ' in text
    assert "result: seat 1 (chatty) forfeits (invalid_json): seat 2 (greedy) wins in round 1" in text
    log = Path(next(line for line in text.splitlines() if "its stderr: " in line).split("its stderr: ")[1])
    assert log.read_text() == "chatty stderr: request 1\n" and log.parent.parent == tmp_path
    assert [p.name for p in log.parent.iterdir()] == [log.name]  # the other bot's empty log is tidied away

    replay = tmp_path / "games" / "m.jsonl"
    out = play("chatty.py", GREEDY, "--seed", "5", "--json", "--replay", replay, cwd=tmp_path)
    doc = json.loads(out.stdout)
    detail = doc["forfeit"]["detail"]
    assert doc["forfeit"]["reason"] == "invalid_json" and '; the line: "debug: thinking about ' in detail
    assert doc["logs"] == [str(tmp_path / "games" / "m-logs" / f"m-0001-seat{s}.log") for s in (1, 2)]
    assert Path(doc["logs"][0]).read_text() == "chatty stderr: request 1\n"
    last = json.loads(replay.read_text().splitlines()[-1])
    assert last["type"] == "result" and last["forfeit"]["detail"] == detail


@pytest.mark.slow
def test_a_start_up_error_on_stdout_reads_as_what_the_program_said(tmp_path: Path) -> None:
    (tmp_path / "jvm.py").write_text(JVM)
    out = play("jvm.py", GREEDY, "--seed", "1", cwd=tmp_path)
    assert out.returncode == 0
    assert 'hello: not a JSON line' in out.stdout
    assert 'the line: "Error occurred during initialization of VM"' in out.stdout
    log = Path(next(line for line in out.stdout.splitlines() if "its stderr: " in line).split("its stderr: ")[1])
    assert "Could not reserve enough space" in log.read_text()


@pytest.mark.slow
def test_a_series_counts_forfeits(tmp_path: Path) -> None:
    (tmp_path / "chatty.py").write_text(CHATTY)
    out = play("chatty.py", GREEDY, "--seed", "5", "--games", "2", cwd=tmp_path)
    assert out.stdout.splitlines()[-1] == "games: seat 1 won 0, seat 2 won 2, draws 0, seat 1 forfeited 2"


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"play": "pine-cran"}, 'action.play: "pine-cran" is not a card id'),
        ({"play": "pine-crane", "capture": 7}, "action.capture: 7 is not a card id"),
        ({"pley": "pine-crane"}, 'action: unknown key "pley" (value "pine-crane")'),
        ({"koikoi": "yes"}, 'action.koikoi: "yes" is not true or false'),
    ],
)
def test_a_bad_action_names_its_key_and_value(action: dict[str, object], message: str) -> None:
    line = json.dumps({"type": "action", "id": 4, "action": action})
    with pytest.raises(P.InvalidMessage) as err:
        P.parse_answer(line, 4)
    assert message in str(err.value) and str(err.value).endswith(f"; the line: {json.dumps(line)}")


def test_the_quoted_line_is_escaped_and_cut() -> None:
    assert P.quote_line(b"\xff\x1b[31mred\n") == '"\\\\xff\\u001b[31mred"'
    long = "x" * 500
    assert P.quote_line(long) == json.dumps("x" * P.QUOTE_MAX) + "..."
    with pytest.raises(P.InvalidJson) as err:
        P.parse_answer(long, 1)
    assert str(err.value).endswith(json.dumps("x" * 200) + "...")
    with pytest.raises(P.InvalidMessage, match=r'does not answer request 2 .*; the line: "'):
        P.parse_answer('{"type":"action","id":1,"action":{"koikoi":true}}', 2)


def test_illegal_action_lists_the_legal_actions_as_json() -> None:
    answer = P.parse_answer('{"type":"action","id":3,"action":{"koikoi":true}}', 3)
    legal = [{"play": "pine-crane"}, {"play": "maple-deer", "capture": "maple-ribbon"}]
    with pytest.raises(P.IllegalAction) as err:
        P.legal_index(answer, legal)
    text = str(err.value)
    assert text.startswith('request 3: {"koikoi": true} is not one of the legal actions [')
    assert json.loads(text[text.index("[") :]) == legal


def _result(forfeit: Forfeit | None, winner: int | None, scores: tuple[int, int] = (30, 30)) -> MatchResult:
    reason = Termination.FORFEIT if forfeit else Termination.ROUNDS
    return MatchResult("m-0001", winner, scores, 3, reason, forfeit, ("a", "b"), 1, 9)


def test_a_forfeit_reads_as_a_forfeit_not_a_score() -> None:
    timeout = Forfeit(1, Failure.TIMEOUT, "no answer to request 9 within 31000 ms")
    assert result_line(_result(timeout, 0)) == "seat 2 (b) forfeits (timeout): seat 1 (a) wins in round 3"
    both = Forfeit(0, Failure.CRASH, "x (seat 2 failed too: crash: y)")
    assert result_line(_result(both, None)) == "seat 1 (a) forfeits (crash); the other seat failed too: nobody wins"
    assert result_line(_result(None, 1, (10, 40))) == "seat 2 (b) wins 10-40 after 3 rounds (rounds)"
    lines = summary_lines(Played(_result(timeout, 0), None, (Path("l1.log"), Path("l2.log"))))
    assert lines[-3:] == ["  its stderr: l2.log", "  result: seat 2 (b) forfeits (timeout): seat 1 (a) wins in round 3",
                          "  stderr: seat 1 l1.log; seat 2 l2.log"]  # fmt: skip
    assert not any("wins 30-30" in line for line in lines)
