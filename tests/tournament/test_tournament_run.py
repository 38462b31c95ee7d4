"""Tournaments end to end: the ``koikoi-referee tournament`` command with real subprocess bots.

Matches use the single-deal cardavia rules so that every tournament here takes seconds. A small scripted bot
(written to the test folder) plays the first or the last legal action, optionally slowly, or misbehaves: it
crashes, hangs, or plays an illegal action. ``bots/greedy_bot.py`` and ``bots/random_bot.py`` play the SPRT.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.helpers import FAST, ROOT, cli, merge, referee, standings

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("signing_key_home")]


def result_lines(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]


def test_round_robin_of_three_bots(tmp_path: Path, bot: str) -> None:
    out = tmp_path / "rr"
    proc = referee(
        "tournament",
        "-b",
        f"first={bot} first",
        "-b",
        f"last={bot} last",
        "-b",
        "greedy=bots/greedy_bot.py",
        *FAST,
        "--pairs",
        "2",
        "--seed",
        "11",
        "-j",
        "2",
        "-o",
        out,
    )
    doc = json.loads((out / "standings.json").read_text())
    assert doc["matches"] == 3 * 2 * 2 and doc["complete"] is True
    rows = {r["name"]: r for r in doc["standings"]}
    assert set(rows) == {"first", "last", "greedy"}
    for r in rows.values():
        assert r["games"] == 8 and r["wins"] + r["draws"] + r["losses"] == 8
        assert r["points"] == r["wins"] + r["draws"] / 2
        assert r["score_low"] <= r["score"] <= r["score_high"]
    assert sum(r["points"] for r in rows.values()) == 12  # every match hands out one point
    assert [(p["first"], p["second"]) for p in doc["pairings"]] == [
        ("first", "last"),
        ("first", "greedy"),
        ("last", "greedy"),
    ]
    assert len(list((out / "replays").glob("*.jsonl"))) == 12
    assert len((out / "matches.csv").read_text().splitlines()) == 13
    assert (out / "standings.csv").read_text().startswith("rank,name,games,wins,draws,losses,points,score")
    assert "score (95%)" in proc.stdout and "Elo" in proc.stdout and "[12/12]" in proc.stdout


def test_gauntlet_plays_one_bot_against_the_field(tmp_path: Path, bot: str) -> None:
    out = tmp_path / "g"
    referee(
        "tournament",
        "-b",
        f"first={bot} first",
        "-b",
        f"last={bot} last",
        "-b",
        "greedy=bots/greedy_bot.py",
        "--gauntlet",
        "greedy",
        *FAST,
        "--pairs",
        "2",
        "--seed",
        "12",
        "-j",
        "1",
        "-o",
        out,
    )
    lines = result_lines(out)
    assert len(lines) == 2 * 2 * 2
    assert all("greedy" in line["seats"] for line in lines)
    rows = {r["name"]: r["games"] for r in json.loads((out / "standings.json").read_text())["standings"]}
    assert rows == {"greedy": 8, "first": 4, "last": 4}


def test_duplicate_pairs_deal_the_same_cards_with_seats_swapped(tmp_path: Path, bot: str) -> None:
    out = tmp_path / "dup"
    referee(
        "tournament",
        "-b",
        f"first={bot} first",
        "-b",
        "greedy=bots/greedy_bot.py",
        *FAST,
        "--pairs",
        "3",
        "--seed",
        "13",
        "-j",
        "2",
        "-o",
        out,
    )
    dealers = set()
    for pair in range(3):
        replays = []
        for game in "ab":
            path = out / "replays" / f"01-first-vs-greedy-{pair:03d}{game}.jsonl"
            replays.append([json.loads(line) for line in path.read_text().splitlines()])
        a, b = replays
        deals = [[e for e in r if e.get("event") in ("round_start", "misdeal")] for r in (a, b)]
        starts = [[{k: v for k, v in e.items() if k != "mac"} for e in d] for d in deals]  # signatures differ
        assert starts[0] and starts[0] == starts[1]
        ha, hb = a[0], b[0]
        assert ha["seed"] == hb["seed"] and ha["first_dealer"] == hb["first_dealer"] is not None
        assert [x["command"] for x in ha["bots"]] == [x["command"] for x in reversed(hb["bots"])]
        assert a[-1]["type"] == b[-1]["type"] == "result"
        dealers.add(ha["first_dealer"])
    doc = json.loads((out / "standings.json").read_text())
    assert [p["complete"] for p in doc["pairs"]] == [True] * 3
    assert all(p["first_points"] + p["second_points"] == 2 for p in doc["pairs"])


def _processes_running(marker: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if marker in line and "ps -eo" not in line and " Z" not in line]


def test_resume_after_sigkill_plays_each_match_exactly_once(tmp_path: Path, bot: str) -> None:
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    args = ["--pairs", "10", "--seed", "9", *FAST]
    exe = Path(sys.executable).parent / "koikoi-referee"
    cmd = [
        str(exe),
        "tournament",
        "-b",
        f"first={bot} first 0.05",  # slow enough that 17 matches are left when the kill lands
        "-b",
        f"last={bot} last 0.05",
        *args,
        "-j",
        "2",
        "-o",
        str(killed),
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log = killed / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= 3:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = len(result_lines(killed))
    assert 3 <= done_before < 20, "the kill should land mid-tournament"
    with open(log, "a") as f:  # as if killed in the middle of writing a line
        f.write('{"match_id":"01-first-vs-last-009b","index":19,"seats":["last","fir')
    deadline = time.monotonic() + 10  # the workers notice and take their bots down with them
    while _processes_running(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_running(str(tmp_path))

    proc2 = referee("tournament", "--resume", killed, "-j", "2")
    assert "incomplete last line" in proc2.stderr
    done = json.loads((killed / "standings.json").read_text())
    assert done["matches"] == 20 and done["complete"] is True
    referee("tournament", "-b", f"first={bot} first", "-b", f"last={bot} last", *args, "-j", "1", "-o", clean)
    redealt = {m.stem.split(".")[0][:-1] for m in (killed / "replays").glob("*.interrupted-*.jsonl")}
    for kept in (killed / "replays").glob("*.interrupted-*.jsonl"):  # a match started but unrecorded: dealt anew
        if kept.read_text():  # (a replay killed before its header has no deal to compare)
            assert _header(kept)["seed"] != _header(kept.with_name(kept.name.split(".")[0] + ".jsonl"))["seed"]
    for folder in (killed, clean):  # every other match has the result of an uninterrupted run
        rows = (folder / "matches.csv").read_text().splitlines()[1:]
        assert len(rows) == 20
    kept = [r for r in (killed / "matches.csv").read_text().splitlines()[1:] if r.split(",")[0][:-1] not in redealt]
    assert set(kept) <= set((clean / "matches.csv").read_text().splitlines()[1:])
    for replay in (killed / "replays").glob("??-*[ab].jsonl"):  # every counted replay is whole
        assert json.loads(replay.read_text().splitlines()[-1])["type"] == "result"
    assert "ok: 20 match(es)" in referee("tournament", "verify", killed).stdout  # a kill is not a tampering
    before = (killed / "results.jsonl").read_text()
    again = referee("tournament", "--resume", killed)  # nothing left to play: the same standings again
    assert "(standings.json publishes the seed)" in again.stdout.splitlines()[0]
    assert (killed / "results.jsonl").read_text() == before
    assert json.loads((killed / "standings.json").read_text())["standings"] == done["standings"]


HANG_ONCE = r"""
import json, os, sys, time
flag, target = sys.argv[1], sys.argv[2]
match = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] in ("hello", "new_match"):
        match = msg["match"]["id"]
        if msg["type"] == "hello":
            print(json.dumps({"type": "hello", "name": "hangs"}), flush=True)
    elif msg["type"] == "request":
        if match == target and os.path.exists(flag):
            time.sleep(3600)
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


def _played_order(seed: int, first: str, second: str, pair: int) -> str:
    """The game letters of pair ``pair`` of the pairing ``first``-vs-``second`` in the order they are played."""
    from referee.tournament.schedule import Pairing, order_of, pair_seed

    pair_s = pair_seed(seed, Pairing(0, first, second), pair)
    return "ab" if order_of(pair_s, "a") == 1 else "ba"


def _header(replay: Path) -> dict[str, object]:
    header: dict[str, object] = json.loads(replay.read_text().splitlines()[0])
    return header


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_pair_is_dealt_afresh_on_resume(tmp_path: Path, bot: str, stop: signal.Signals) -> None:
    script, flag, out = tmp_path / "hang_once.py", tmp_path / "hang", tmp_path / "t"
    script.write_text(HANG_ONCE)
    flag.touch()
    played = [_played_order(21, "hangs", "last", pair) for pair in (0, 1)]  # each pair's games, first-played first
    target = f"01-hangs-vs-last-001{played[1][1]}"  # the second-played game of the second pair: the other is done
    exe = Path(sys.executable).parent / "koikoi-referee"
    cmd = [str(exe), "tournament", "-b", f"hangs={sys.executable} {script} {flag} {target}", "-b",
           f"last={bot} last", "--rules", "cardavia", "--startup-ms", "20000", "--move-ms", "600000",
           "--pairs", "3", "--seed", "21", "-j", "1", "--no-html", "-o", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    replay = out / "replays" / f"{target}.jsonl"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "round_start" not in (replay.read_text() if replay.exists() else ""):
            time.sleep(0.05)  # the target match is dealt: the bots have seen their hands, and one of them hangs
        assert "round_start" in replay.read_text()
        proc.send_signal(stop)  # wherever it lands, even in an asyncio callback, the run stops
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # a failed stop: end the referee and its bots (all in its session) here
            ps = subprocess.run(["ps", "-eo", "pid=,sid="], capture_output=True, text=True, check=True).stdout
            for pid, sid in (map(int, line.split()) for line in ps.splitlines()):
                if sid == proc.pid:
                    os.kill(pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130 and f"--resume {out}" in err and "Traceback" not in err
    old_seed = _header(replay)["seed"]
    assert [json.loads(line)["match_id"] for line in (out / "results.jsonl").read_text().splitlines()] == [
        *(f"01-hangs-vs-last-000{g}" for g in played[0]), f"01-hangs-vs-last-001{played[1][0]}"]  # fmt: skip
    flag.unlink()

    resumed = referee("tournament", "--resume", out, "--no-html")
    assert "01-hangs-vs-last-001a and 01-hangs-vs-last-001b interrupted: dealt afresh" in resumed.stderr
    kept = sorted(p.name for p in (out / "replays").glob("*.interrupted-*"))
    assert kept == ["01-hangs-vs-last-001a.interrupted-1.jsonl", "01-hangs-vs-last-001b.interrupted-1.jsonl"]
    assert _header(out / "replays" / f"{target}.interrupted-1.jsonl")["seed"] == old_seed  # the partial replay
    new_a, new_b = (_header(out / "replays" / f"01-hangs-vs-last-001{g}.jsonl")["seed"] for g in "ab")
    assert new_a == new_b != old_seed  # both games of the pair on one new deal
    doc = json.loads((out / "standings.json").read_text())
    assert doc["matches"] == 6 and doc["complete"] is True
    rows = {r["match_id"]: r for r in csv.DictReader((out / "matches.csv").read_text().splitlines())}
    assert rows["01-hangs-vs-last-001a"]["seed"] == rows["01-hangs-vs-last-001b"]["seed"] == str(new_a)
    seeds = [r["seed"] for r in rows.values()]
    assert len(set(seeds)) == 3 and str(old_seed) not in seeds
    # the kept replays hold one finished game and the interrupted one: verify tells that from a pair re-dealt
    # after it had finished
    assert "ok: 6 match(es)" in referee("tournament", "verify", out).stdout


def test_a_run_stopped_by_sigterm_records_the_games_its_workers_finished(tmp_path: Path, bot: str) -> None:
    # at the stop, the match each worker is playing runs to its end: its result is recorded with the others,
    # so the stopped folder verifies (no finished replay missing from results.jsonl)
    out = tmp_path / "t"
    exe = Path(sys.executable).parent / "koikoi-referee"
    cmd = [str(exe), "tournament", "-b", f"first={bot} first 0.1", "-b", f"last={bot} last 0.1", "--rules",
           "cardavia", "--startup-ms", "20000", "--move-ms", "5000", "--pairs", "6", "--seed", "21", "-j", "2",
           "--no-html", "-o", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(result_lines(out) if (out / "results.jsonl").exists() else []) < 1:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    recorded = {str(r["match_id"]) for r in result_lines(out)}
    assert 1 <= len(recorded) < 12
    verified = referee("tournament", "verify", out)
    assert "ok: " in verified.stdout
    finished = [p.name for p in (out / "replays").glob("*.jsonl") if '"type":"result"' in p.read_text()]
    assert {name.removesuffix(".jsonl") for name in finished} == recorded


def test_a_resume_says_which_recorded_games_lost_their_replays(tmp_path: Path, bot: str) -> None:
    out = tmp_path / "t"
    referee("tournament", "-b", f"first={bot} first", "-b", f"last={bot} last", *FAST, "--pairs", "2", "--seed", "3",
            "--no-html", "-o", out)  # fmt: skip
    (out / "replays" / "01-first-vs-last-001b.jsonl").unlink()
    resumed = referee("tournament", "--resume", out, "--no-html")
    assert "01-first-vs-last-001b: recorded, but the replay is missing from" in resumed.stderr
    (out / "replays" / "01-first-vs-last-001b.jsonl").write_text("")  # a replay there, even empty: not missing
    assert "is missing" not in referee("tournament", "--resume", out, "--no-html").stderr


def test_shards_merge_into_the_unsharded_standings(tmp_path: Path, bot: str) -> None:
    bots = ["-b", f"first={bot} first", "-b", f"last={bot} last", "-b", "greedy=bots/greedy_bot.py"]
    common = [*bots, *FAST, "--pairs", "2", "--seed", "5", "-j", "1"]
    referee("tournament", *common, "-o", tmp_path / "whole")
    shards = [tmp_path / f"s{k}" for k in (1, 2)]
    for k, folder in enumerate(shards, 1):
        referee("tournament", *common, "--shard", f"{k}/2", "-o", folder)
    sizes = [len(result_lines(s)) for s in shards]
    assert sizes == [6, 6]
    merge(*shards, "-o", tmp_path / "merged")
    assert standings(tmp_path / "merged") == standings(tmp_path / "whole")
    assert len(list((tmp_path / "merged" / "replays").glob("*.jsonl"))) == 12
    home = (tmp_path / "merged" / "index.html").read_text()  # the merged folder's home page and match pages
    assert "greedy" in home and len(list((tmp_path / "merged").glob("*/*.html"))) >= 12

    stdout, stderr = merge(shards[1], "--json", "--partial")
    assert "6 scheduled match(es) missing" in stderr and json.loads(stdout)["matches"] == 6
    assert "both shard 1/2" in merge(shards[0], shards[1], shards[0], check=2)[1]
    referee("tournament", *bots, *FAST, "--pairs", "1", "--seed", "5", "--shard", "2/2", "-o", tmp_path / "other")
    assert "different tournament" in merge(shards[0], tmp_path / "other", check=2)[1]


def test_sprt_decides_for_the_stronger_bot_and_sets_the_exit_code(tmp_path: Path) -> None:
    greedy, rnd = "greedy=bots/greedy_bot.py", "random=bots/random_bot.py --seed 3"
    sprt = ["--sprt", "0,150,0.05,0.05", "--fail-if-worse", "--pairs", "200", "--seed", "14", *FAST, "-j", "2"]
    win = referee("tournament", "-b", greedy, "-b", rnd, *sprt, "-o", tmp_path / "h1", "--json", check=0)
    doc = json.loads(win.stdout)
    assert doc["sprt"]["state"] == "H1" and doc["sprt"]["llr"] >= doc["sprt"]["upper"]
    assert doc["matches"] < 400  # stopped once decided
    lose = referee("tournament", "-b", rnd, "-b", greedy, *sprt, "-o", tmp_path / "h0", check=1)
    assert "SPRT accepted H0" in lose.stderr
    assert "SPRT [0, 150]: LLR" in lose.stdout and "H0 accepted" in lose.stdout


def test_an_sprt_that_decides_nothing_fails_only_the_gate_that_asks_for_h1(tmp_path: Path, bot: str) -> None:
    # two equal bots, two pairs: the LLR stays between the bounds
    two = ["-b", f"one={bot} first", "-b", f"two={bot} first", *FAST, "--pairs", "2", "--seed", "5",
           "--sprt", "0,150"]  # fmt: skip
    worse = referee("tournament", *two, "--fail-if-worse", "-o", tmp_path / "w", "--json", check=0)
    doc = json.loads(worse.stdout)
    assert doc["sprt"]["state"] == "continue" and doc["sprt"]["pairs"] == 2
    assert (doc["sprt"]["elo0"], doc["sprt"]["elo1"]) == (0, 150)
    assert doc["exit_code"] == 0 and doc["gates_failed"] == []
    better = referee("tournament", *two, "--fail-unless-better", "-o", tmp_path / "b", check=1)
    assert "SPRT [0, 150]: LLR" in better.stdout and "no decision (neither bound reached)" in better.stdout
    assert "CI gate failed: SPRT reached no decision after 2 pairs" in better.stderr
    as_json = referee("tournament", *two, "--fail-unless-better", "-o", tmp_path / "j", "--json", check=1)
    assert json.loads(as_json.stdout)["exit_code"] == 1
    assert json.loads(as_json.stdout)["gates_failed"][0].startswith("SPRT reached no decision")


def test_broken_bots_lose_with_the_reason_and_the_tournament_finishes(tmp_path: Path, bot: str) -> None:
    out = tmp_path / "broken"
    proc = referee(
        "tournament",
        "-b",
        f"first={bot} first",
        "-b",
        f"crash={bot} crash",
        "-b",
        f"hang={bot} hang",
        "-b",
        f"illegal={bot} illegal",
        "-b",
        f"invalid={bot} invalid",
        "--rules",
        "cardavia",
        "--startup-ms",
        "20000",
        "--move-ms",
        "3000",  # the hang bot's timeout costs this per match; the others answer at once (even on a busy machine)
        "--bank-ms",
        "0",
        "--pairs",
        "1",
        "--seed",
        "15",  # fixed: under cardavia about 1.2% of deals end the match by a hand yaku before any bot is asked
        "-j",
        "2",
        "-o",
        out,
        timeout=180,
    )
    doc = json.loads((out / "standings.json").read_text())
    rows = {r["name"]: r for r in doc["standings"]}
    assert doc["matches"] == 10 * 2
    assert rows["first"]["wins"] == 8 and rows["first"]["losses"] == 0
    kinds = {"crash": "crashes", "hang": "timeouts", "illegal": "illegal", "invalid": "invalid"}
    failures = 0
    for name, row in rows.items():
        for column in kinds.values():
            expected_min = 2 if kinds.get(name) == column else 0  # it loses both games against "first"
            assert expected_min <= row[column] <= (8 if expected_min else 0), (name, column, row)
            failures += row[column]
    assert failures == 20  # exactly one forfeit in every match
    csv_text = (out / "matches.csv").read_text()
    assert "crash" in csv_text and "timeout" in csv_text and "illegal_action" in csv_text
    assert "invalid_message" in csv_text
    header = (out / "standings.csv").read_text().splitlines()[0]
    assert header.endswith("crashes,timeouts,invalid,illegal")
    head = next(line for line in proc.stdout.splitlines() if line.startswith("#"))
    assert head.split()[-4:] == ["crash", "timeout", "invalid", "illegal"]


def test_ci_gates_and_bad_input(tmp_path: Path, bot: str) -> None:
    # A fixed seed: under cardavia some deals end the match by a hand yaku before the crashing bot is asked.
    two = ["-b", f"crash={bot} crash", "-b", f"first={bot} first", *FAST, "--pairs", "1", "--seed", "16", "-j", "1"]
    gate = referee("tournament", *two, "--min-score", "0.5", "-o", tmp_path / "gate", check=1)
    assert "crash scored 0.000, below --min-score 0.5" in gate.stderr
    # first scores 1.0, but against a bot that crashed in every game: the result says nothing of strength
    crashed = referee("tournament", *two, "--gauntlet", "first", "--min-score", "0.9", "-o", tmp_path / "f", check=1)
    assert "crash forfeited 2 of its 2 games (crash 2), more than --max-forfeits 0.1" in crashed.stderr
    referee("tournament", *two, "--gauntlet", "first", "--min-score", "0.9", "--max-forfeits", "1",
            "-o", tmp_path / "pass", check=0)  # fmt: skip
    assert "between 0 and 1" in cli("tournament", *two, "--min-score", "0.5", "--max-forfeits", "2", check=2)[1]
    assert "already holds" in cli("tournament", *two, "-o", tmp_path / "gate", check=2)[1]
    assert "NAME=COMMAND" in cli("tournament", "-b", "nonsense", "-b", "x=y", check=2)[1]
    refused = cli("tournament", "--resume", tmp_path / "gate", "--pairs", "3", check=2)[1]
    assert "--pairs describes the tournament" in refused
    added = cli("tournament", "--resume", tmp_path / "gate", "-b", f"x={bot} first", check=2)[1]
    assert "--bot describes the tournament" in added and "tournament add DIR" in added
    toml = tmp_path / "pairs.toml"
    toml.write_text(f'pairs = -3\n[bots]\nfirst = "{bot} first"\nlast = "{bot} last"\n')
    assert f"{toml}: pairs: -3 is outside" in cli("tournament", "--config", toml, check=2)[1]
    assert "not a tournament folder" in cli("tournament", "--resume", tmp_path, check=2)[1]
    assert "not found" in cli("tournament", "-b", "a=no/such/bot", "-b", f"b={bot} first", check=2)[1]
    assert "needs --sprt" in cli("tournament", *two, "--fail-if-worse", check=2)[1]
    assert "needs --sprt" in cli("tournament", *two, "--fail-unless-better", check=2)[1]
    assert "exactly two bots" in cli("tournament", *two, "-b", "c=bots/greedy_bot.py", "--sprt", "0,5", check=2)[1]
    assert "Exit codes" in cli("tournament", "--help")[0]


def test_quiet_leaves_out_the_line_a_match_and_keeps_the_rest(tmp_path: Path, bot: str) -> None:
    two = ["-b", f"first={bot} first", "-b", f"last={bot} last", *FAST, "--pairs", "2", "--seed", "3", "--no-html"]
    loud = referee("tournament", *two, "-o", tmp_path / "loud")
    assert "[1/4] " in loud.stdout
    quiet = referee("tournament", *two, "-o", tmp_path / "quiet", "-q", "--rating-interval", "1")
    assert "[1/4] " not in quiet.stdout and "interim standings after 1 pair:" in quiet.stdout
    assert "seed commitment" in quiet.stdout and "first vs last: " in quiet.stdout


def test_live_progress_bar_on_a_terminal(tmp_path: Path, bot: str) -> None:
    exe = Path(sys.executable).parent / "koikoi-referee"
    args = [
        "tournament",
        "-b",
        f"first={bot} first",
        "-b",
        f"last={bot} last",
        *FAST,
        "--pairs",
        "2",
        "--seed",
        "17",
        "-j",
        "1",
        "-o",
        str(tmp_path / "tty"),
    ]
    child = pexpect.spawn(
        str(exe),
        args,
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=60,
        env={**os.environ, "COLUMNS": "100", "TERM": "xterm"},
        dimensions=(30, 100),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before or "")
    assert "matches" in screen and "ETA" in screen and "4/4 elapsed" in screen  # the live bar's columns
    assert "[1/4]" not in screen  # not the plain log lines of a pipe
    assert "results in" in screen


def test_the_seed_is_drawn_at_random_unless_given_and_shards_need_one(tmp_path: Path, bot: str) -> None:
    bots = ["-b", f"first={bot} first", "-b", f"last={bot} last"]
    seeds = []
    for k in (1, 2):
        proc = referee("tournament", *bots, *FAST, "--pairs", "1", "-j", "1", "-o", tmp_path / f"r{k}")
        seeds.append(json.loads((tmp_path / f"r{k}" / "tournament.json").read_text())["config"]["seed"])
        assert "seed drawn at random" in proc.stderr and str(seeds[-1]) not in proc.stderr + proc.stdout
    assert seeds[0] != seeds[1]
    err = referee("tournament", *bots, *FAST, "--shard", "1/2", "-o", tmp_path / "s", check=2).stderr
    assert "--shard needs the seed every shard shares: --seed-file FILE or $KOIKOI_SEED" in err
    # a small seed can be searched out of the published commitment: said; a drawn or large one is not
    small = referee("tournament", *bots, *FAST, "--pairs", "1", "--seed", "42", "-o", tmp_path / "small").stderr
    assert "seed 42 is small enough to be found from the seed commitment" in small
    large = referee("tournament", *bots, *FAST, "--pairs", "1", "--seed", str(1 << 40), "-o", tmp_path / "l").stderr
    assert "small enough" not in large
    assert "small enough" not in proc.stderr
    for command in ("tournament", "play"):  # a seed is a whole number from 0 to 2**64 - 1
        err = referee(command, *(bots if command == "tournament" else [f"{bot} first", f"{bot} last"]), *FAST,
                      "--seed", "-5", "-o" if command == "tournament" else "--replay", tmp_path / f"neg-{command}",
                      check=2).stderr  # fmt: skip
        assert "--seed" in err and "greater than or equal to 0" in err
    toml = tmp_path / "neg.toml"
    toml.write_text(f'seed = -3\n[bots]\nfirst = "{bot} first"\nlast = "{bot} last"\n')
    err = referee("tournament", "--config", toml, "-o", tmp_path / "neg-file", check=2).stderr
    assert "seed must be a whole number from 0 to 18446744073709551615" in err


# The end of every spy bot here: it plays the first legal action and leaves at bye.
ANSWER_FIRST = r"""
    elif msg["type"] == "request":
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""

ENV_SPY = r"""
import json, os, sys
open(sys.argv[1], "a").write(json.dumps(sorted(k for k in os.environ if "SEED" in k)) + "\n")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "spy"}), flush=True)""" + ANSWER_FIRST


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_shards_share_a_secret_seed_that_no_bot_sees(tmp_path: Path, bot: str, jobs: str) -> None:
    spy, seen, seed_file = tmp_path / "env_spy.py", tmp_path / "seen.jsonl", tmp_path / "seed"
    spy.write_text(ENV_SPY)
    seed_file.write_text("8675309\n")
    bots = ["-b", f"spy={sys.executable} {spy} {seen}", "-b", f"first={bot} first", *FAST, "--pairs", "2", "-j", jobs,
            "--sandbox", "none", "--bot-env", "KOIKOI_SEED_NOTE=other names pass"]  # the spy writes to a host file
    referee("tournament", *bots, "--seed-file", seed_file, "--shard", "1/2", "-o", tmp_path / "s1")
    exe = Path(sys.executable).parent / "koikoi-referee"
    shard2 = [str(exe), "tournament", *map(str, bots), "--shard", "2/2", "-o", str(tmp_path / "s2")]
    env = {**os.environ, "KOIKOI_SEED": "8675309"}
    done = subprocess.run(shard2, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    for k in (1, 2):
        text = (tmp_path / f"s{k}" / "tournament.json").read_text()
        assert json.loads(text)["config"]["seed"] == 8675309
    assert merge(tmp_path / "s1", tmp_path / "s2", "-o", tmp_path / "all")[1] == ""  # one tournament, signed
    views = [json.loads(line) for line in seen.read_text().splitlines()]
    assert views and all(v in ([], ["KOIKOI_SEED_NOTE"]) for v in views)  # no bot inherits the seed
    assert ["KOIKOI_SEED_NOTE"] in views
    assert "8675309" not in " ".join(map(str, bots))  # and it is not on the command line
    bad = referee("tournament", *bots, "--seed-file", tmp_path / "nothing", "-o", tmp_path / "x", check=2).stderr
    assert "--seed-file" in bad and "cannot read" in bad
    seed_file.write_text("12ab")
    assert "a seed is a whole number" in referee("tournament", *bots, "--seed-file", seed_file, check=2).stderr


SPY = r"""
import json, os, sys
log = open(os.path.join(sys.argv[1], f"{os.getpid()}.log"), "a")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] in ("hello", "new_match"):
        log.write(msg["match"]["id"] + "\n")
        log.flush()
        if msg["type"] == "hello":
            print(json.dumps({"type": "hello", "name": "spy"}), flush=True)""" + ANSWER_FIRST


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_no_bot_process_plays_both_games_of_a_duplicate_pair(tmp_path: Path, bot: str, jobs: str) -> None:
    spy, logs = tmp_path / "spy.py", tmp_path / "seen"
    spy.write_text(SPY)
    logs.mkdir()
    spy_bot = f"spy={sys.executable} {spy} {logs}"
    referee("tournament", "-b", spy_bot, "-b", f"first={bot} first", *FAST, "--pairs", "3", "--seed", "4",
            "-j", jobs, "-o", tmp_path / "out", "--sandbox", "none")  # fmt: skip  # the spy writes to a host folder
    seen = {log.name: log.read_text().split() for log in logs.iterdir()}
    preflight = [name for name, ids in seen.items() if ids == ["preflight"]]
    assert len(preflight) == 1  # the preflight started the spy once, to its hello, and no match went to it
    seen.pop(preflight[0])
    assert sum(len(ids) for ids in seen.values()) == 6  # every match was seen by one spy process
    assert any(len(ids) > 1 for ids in seen.values())  # processes are still reused across pairs
    for ids in seen.values():
        pairs = [m[:-1] for m in ids]  # match ids end in the game letter a or b
        assert len(pairs) == len(set(pairs)), f"one process saw both games of a pair: {ids}"


def test_a_folder_in_use_is_refused_to_a_second_run(tmp_path: Path, bot: str) -> None:
    out = tmp_path / "busy"
    exe = Path(sys.executable).parent / "koikoi-referee"
    args = ["tournament", "-b", f"first={bot} first 0.05", "-b", f"last={bot} last 0.05", *FAST, "--pairs", "200",
            "--seed", "2", "-j", "1", "-o", str(out)]  # fmt: skip
    proc = subprocess.Popen([str(exe), *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / "results.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = referee("tournament", "--resume", out, check=2)
        assert "is in use by another koikoi-referee run" in second.stderr and "Traceback" not in second.stderr
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_the_output_folder_gets_viewer_pages_and_an_index(tmp_path: Path, bot: str) -> None:
    bots = ["-b", f"first={bot} first", "-b", f"last={bot} last"]
    out = referee("tournament", *bots, *FAST, "--pairs", "2", "--seed", "3", "-j", "1", "-o", tmp_path / "t").stdout
    index = tmp_path / "t" / "index.html"
    assert f"replays to view: {index}" in out
    text = index.read_text()
    for replay in (tmp_path / "t" / "replays").glob("*.jsonl"):
        assert replay.with_suffix(".html").exists() and replay.stem in text
    referee("tournament", *bots, *FAST, "--pairs", "1", "--seed", "3", "--no-html", "-o", tmp_path / "n")
    assert not (tmp_path / "n" / "index.html").exists()
