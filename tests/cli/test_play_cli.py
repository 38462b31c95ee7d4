"""``koikoi-referee play`` and ``replay verify|show`` in a real terminal (pexpect) and as plain processes."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pexpect
import pytest

from tests.helpers import BROKEN, FIRST, ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast


def spawn(exe: Path, *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        str(exe), list(args), cwd=str(ROOT), encoding="utf-8", timeout=60, dimensions=(40, 200)
    )


def run(exe: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_play_prints_rounds_winner_and_seed_and_the_replay_verifies(
    referee_exe: Path, tmp_path: Path
) -> None:
    replay = tmp_path / "game.jsonl"
    child = spawn(referee_exe, "play", "bots/random_bot.py", "bots/greedy_bot.py", "--seed", "42", "--replay",
                  str(replay))  # fmt: skip
    child.expect(r"seed 42  rules guide  6 rounds  1 game\r?\n")
    child.expect(r"seat 1: random  seat 2: greedy")
    for n in range(1, 7):
        child.expect(rf"round {n}: (seat [12] \+\d+ \(\w+|nobody scores)")
    child.expect(r"result: (seat [12] \((random|greedy)\) wins|draw) \d+-\d+ after 6 rounds")
    child.expect(f"replay: {replay}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    verify = spawn(referee_exe, "replay", "verify", str(replay))
    verify.expect(rf"{replay}: ok \(\d+ lines, \d+ decisions, ")
    verify.expect(pexpect.EOF)
    verify.close()
    assert verify.exitstatus == 0


def test_replay_show_as_a_seat_in_a_terminal(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    assert run(referee_exe, "play", FIRST, FIRST, "--rules", "cardavia", "--seed", "3", "--replay",
               str(replay)).returncode == 0  # fmt: skip
    start = next(json.loads(x) for x in replay.read_text().splitlines() if '"round_start"' in x)
    child = spawn(referee_exe, "replay", "show", str(replay), "--seat", "2")
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect(r"match m-0001: rules cardavia \(1 round\), as seat 2 saw it")
    child.expect(r"your hand \(seat 2\): " + " ".join(start["hands"][1]))
    child.expect(r"opponent holds 8 cards; stock 24 cards")
    child.expect(r"result: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    shown = seen.getvalue()
    assert " ".join(start["hands"][1]) in shown  # the check reads the whole output
    assert " ".join(start["hands"][0]) not in shown
    full = run(referee_exe, "replay", "show", str(replay))
    assert full.returncode == 0 and " ".join(start["stock"]) in full.stdout


def test_a_forfeit_is_a_result_exit_0_and_json_names_the_reason(referee_exe: Path) -> None:
    out = run(referee_exe, "play", FIRST, f"{BROKEN} crash", "--seed", "1", "--json", "--move-ms", "2000")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["reason"] == "forfeit" and result["winner"] == 1 and result["seed"] == "1"
    assert result["forfeit"]["seat"] == 2 and result["forfeit"]["reason"] == "crash"
    text = run(referee_exe, "play", FIRST, f"{BROKEN} illegal", "--seed", "1")
    assert text.returncode == 0
    assert "seat 2 (broken-illegal) forfeits: illegal_action" in text.stdout


def test_a_timeout_counts_in_the_seat_s_stats_as_a_decision_that_spent_its_whole_clock(referee_exe: Path) -> None:
    out = run(referee_exe, "play", FIRST, f"{BROKEN} hang", "--seed", "1", "--json", "--move-ms", "300",
              "--bank-ms", "200")  # fmt: skip
    result = json.loads(out.stdout)
    assert result["forfeit"]["seat"] == 2 and result["forfeit"]["reason"] == "timeout"
    hung = result["seat_stats"][1]
    assert hung["bank_left_ms"] == 0 and hung["max_ms"] == 500 and hung["decisions"] >= 1


def test_a_round_scored_above_its_yaku_says_how_in_the_summary_and_replay_show(
    referee_exe: Path, tmp_path: Path
) -> None:
    replay = tmp_path / "r.jsonl"
    caller, greedy = f"{ROOT / 'bots' / 'pool_bot.py'} --style aggressive", str(ROOT / "bots" / "greedy_bot.py")
    out = run(referee_exe, "play", caller, greedy, "--rules", "guide", "--seed", "1", "--replay", str(replay))
    said = "(stop: animals 2; 2 made 4 by the koi-koi and doubling rules (koi-koi calls: seat 1 1, seat 2 1))"
    assert f"round 1: seat 1 +4 {said}" in out.stdout, out.stdout
    shown = run(referee_exe, "replay", "show", str(replay))
    assert f"round 1 ends: seat 1 scores 4 {said}" in shown.stdout, shown.stdout


def test_games_rounds_and_log_dir(referee_exe: Path, tmp_path: Path) -> None:
    args = ["--games", "3", "--rounds", "2", "--seed", "7", "--json", "--replay", str(tmp_path / "m.jsonl")]
    out = run(
        referee_exe, "play", FIRST, f"{BROKEN} stderr_flood", *args, "--log-dir", str(tmp_path / "logs")
    )
    assert out.returncode == 0, out.stderr
    results = [json.loads(x) for x in out.stdout.splitlines()]
    assert [r["seed"] for r in results] == ["7", "8", "9"]
    assert all(r["rounds"] <= 2 and r["forfeit"] is None for r in results)
    replays = sorted(tmp_path.glob("m-*.jsonl"))
    assert [p.name for p in replays] == ["m-001.jsonl", "m-002.jsonl", "m-003.jsonl"]
    assert run(referee_exe, "replay", "verify", *map(str, replays)).returncode == 0
    log = tmp_path / "logs" / "m-0001-seat2.log"
    assert log.stat().st_size < 1_100_000 and log.read_bytes().endswith(b"[stderr log truncated]\n")


def test_a_random_seed_is_printed_and_recorded(referee_exe: Path, tmp_path: Path) -> None:
    out = run(referee_exe, "play", FIRST, FIRST, "--rules", "cardavia", "--replay", str(tmp_path / "r.jsonl"))
    seed = int(out.stdout.split()[1])
    assert json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])["seed"] == seed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope.py", FIRST], "bot file not found: nope.py"),
        ([FIRST, FIRST, "--rules", "no-such-rules"], "neither a preset"),
        ([FIRST, FIRST, "--deals", "missing.jsonl"], "missing.jsonl: cannot read"),
        ([FIRST, FIRST, "--deals", "pyproject.toml"], "line 1"),
        ([FIRST, FIRST, "--replay", "pyproject.toml/r.jsonl"], "cannot create the replay's folder"),
    ],
)
def test_play_that_cannot_start_is_one_line_and_non_zero(
    referee_exe: Path, args: list[str], message: str
) -> None:
    out = run(referee_exe, "play", *args)
    assert out.returncode != 0
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr


def test_deals_option_sets_the_cards(referee_exe: Path, tmp_path: Path) -> None:
    from referee.engine import shuffled_deal

    deal = shuffled_deal(5, 3).to_json()
    deals = tmp_path / "deals.jsonl"
    deals.write_text(json.dumps(deal) + "\n")
    replay = tmp_path / "r.jsonl"
    args = ["--rules", "cardavia", "--deals", str(deals), "--first-dealer", "2", "--replay", str(replay)]
    out = run(referee_exe, "play", FIRST, FIRST, *args)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in replay.read_text().splitlines()]
    start = next(x for x in lines if x.get("event") in ("round_start", "misdeal"))
    assert {k: start[k] for k in ("hands", "field", "stock")} == deal
    assert lines[0]["first_dealer"] == 2


def test_replay_verify_exit_status_and_one_line_per_file(referee_exe: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    assert (
        run(referee_exe, "play", FIRST, FIRST, "--rules", "cardavia", "--replay", str(good)).returncode == 0
    )
    lines = good.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:-1], lines[-1].replace('"rounds":1', '"rounds":5')]) + "\n")
    out = run(referee_exe, "replay", "verify", str(good), str(bad))
    assert out.returncode == 1
    assert out.stdout.splitlines()[0].startswith(f"{good}: ok")
    assert out.stdout.splitlines()[1].startswith(f"{bad}: line {len(lines)}: result: rounds")
    shown = run(referee_exe, "replay", "show", str(bad))
    assert shown.returncode == 1 and f"line {len(lines)}" in shown.stderr


def test_play_creates_the_replay_folder(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "new" / "sub" / "m.jsonl"
    out = run(referee_exe, "play", FIRST, FIRST, "--rules", "cardavia", "--seed", "3", "--replay", str(replay))
    assert out.returncode == 0, out.stderr
    assert run(referee_exe, "replay", "verify", str(replay)).returncode == 0


def test_game_seeds_follow_the_given_seed_but_a_human_cannot_predict_the_next_game() -> None:
    from referee.series import game_seeds

    assert game_seeds(7, 3, human=False) == game_seeds(7, 3, human=True) == [7, 8, 9]
    bots = game_seeds(None, 3, human=False)
    assert bots[1:] == [bots[0] + 1, bots[0] + 2]  # the printed seed repeats the run
    person = game_seeds(None, 3, human=True)  # each summary shows its seed: the next one must not follow
    assert len(set(person)) == 3 and person[1] != person[0] + 1 and all(0 <= s < 2**52 for s in person)


def _spied_processes(spy: Path) -> list[list[dict[str, object]]]:
    """The messages each process got, from a spy file several processes appended to (a hello starts one)."""
    procs: list[list[dict[str, object]]] = []
    for line in spy.read_text().splitlines():
        msg = json.loads(line)
        if msg["type"] == "hello":
            procs.append([])
        procs[-1].append(msg)
    return procs


@pytest.mark.parametrize("with_deals", [True, False])
def test_no_bot_process_sees_a_deal_twice_over_several_games(
    referee_exe: Path, tmp_path: Path, with_deals: bool
) -> None:
    """With --deals every game opens with the same deals, so each game gets fresh processes; without, a process
    plays every game (each game has its own seed). Either way no process is dealt the same hand twice."""
    from referee.engine import shuffled_deal

    deals = tmp_path / "deals.jsonl"
    deals.write_text("".join(json.dumps(shuffled_deal(5, k).to_json()) + "\n" for k in (3, 4)))
    spies = [tmp_path / "spy1.txt", tmp_path / "spy2.txt"]
    args = ["--sandbox", "none", "--rules", "koikoi-japan", "--rounds", "3", "--games", "3", "--seed", "11", "--json"]
    if with_deals:
        args += ["--deals", str(deals)]
    out = run(referee_exe, "play", f"{BROKEN} spy {spies[0]}", f"{BROKEN} spy {spies[1]}", *args)
    assert out.returncode == 0, out.stderr
    assert [json.loads(x)["forfeit"] for x in out.stdout.splitlines()] == [None, None, None]
    for spy in spies:
        procs = _spied_processes(spy)
        assert len(procs) == (3 if with_deals else 1)
        for msgs in procs:
            kinds = [m["type"] for m in msgs]
            assert kinds.count("new_match") == (0 if with_deals else 2) and kinds[-1] == "bye"
            hands = [tuple(m["hand"]) for m in msgs if m.get("event") == "round_start"]  # type: ignore[arg-type]
            assert len(hands) >= 3 and len(set(hands)) == len(hands)


def test_a_deals_file_with_a_repeated_deal_is_refused(referee_exe: Path, tmp_path: Path) -> None:
    from referee.engine import shuffled_deal

    deals = tmp_path / "deals.jsonl"
    line = json.dumps(shuffled_deal(5, 3).to_json()) + "\n"
    deals.write_text(line + json.dumps(shuffled_deal(5, 4).to_json()) + "\n" + line)
    out = run(referee_exe, "play", FIRST, FIRST, "--deals", str(deals))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == f"koikoi-referee: error: {deals}: deal 3 repeats deal 1: a bot would see it twice\n"


def test_a_result_decided_by_the_tie_break_says_so() -> None:
    from referee.records import MatchResult, Termination
    from referee.series import result_line

    tied = MatchResult("m-0001", 0, (0, 0), 1, Termination.ROUNDS, None, ("a", "b"), 5, 10)
    assert result_line(tied) == (
        "seat 1 (a) wins 0-0 after 1 round (rounds); equal points: the first dealer wins (tie_break)"
    )
    won = MatchResult("m-0002", 1, (2, 7), 1, Termination.ROUNDS, None, ("a", "b"), 5, 10)
    assert result_line(won) == "seat 2 (b) wins 2-7 after 1 round (rounds)"
