"""benchmarks/rounds.py: each bot's rounds in replays, checked against what the replays say in other ways (the
final scores, the koi-koi decisions), on replays of the engine and of a match the referee played."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers import CLOCK, GREEDY, ROOT, benchmark_module, referee
from tests.replay_factory import write_replay

SCRIPT = ROOT / "benchmarks" / "rounds.py"


def load() -> Any:
    return benchmark_module("rounds")


def calls_of(lines: list[dict[str, Any]], seat: int) -> int:
    """The rounds in which seat ``seat`` (1/2) called koi-koi, from the koi-koi events."""
    return len({(n, e["round"]) for n, e in _rounds(lines) if e.get("event") == "koikoi" and e["seat"] == seat
                and e["koikoi"]})  # fmt: skip


def _rounds(lines: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The event lines with the round each belongs to."""
    out, current = [], 0
    for e in lines:
        if e.get("event") == "round_start":
            current = e["round"]
        if e.get("type") == "event":
            out.append((current, {**e, "round": current}))
    return out


def test_the_tallies_agree_with_the_final_scores_and_the_koikoi_events(tmp_path: Path) -> None:
    # nintendo: no starting points and no transfer, so a bot's points of the rounds it won are its final score.
    rounds = load()
    written = [write_replay(tmp_path / f"m{seed}.jsonl", rules="nintendo", seed=seed, policy_seed=seed)
               for seed in range(6)]  # fmt: skip
    tallies, errors = rounds.gather(tmp_path)
    assert errors == [] and set(tallies) == {"alpha", "beta"}
    alpha, beta = tallies["alpha"], tallies["beta"]
    assert alpha.matches == beta.matches == 6
    assert alpha.points["won"] == sum(lines[-1]["scores"][0] for lines in written) > 0
    assert beta.points["won"] == sum(lines[-1]["scores"][1] for lines in written) > 0
    assert alpha.points["lost"] == beta.points["won"] and alpha.n["won"] == beta.n["lost"]
    assert alpha.n["rounds"] == sum(lines[-1]["rounds"] for lines in written)
    assert alpha.n["won"] + alpha.n["lost"] + alpha.n["nobody"] == alpha.n["rounds"]
    assert alpha.n["calls"] == sum(calls_of(lines, 1) for lines in written) > 0
    assert beta.n["their_calls"] == alpha.n["calls"]
    assert alpha.n["calls_won"] + alpha.n["calls_lost"] + alpha.n["calls_nobody"] == alpha.n["calls"]


def test_a_replay_cut_short_counts_its_rounds_and_a_bad_one_is_named_and_skipped(tmp_path: Path) -> None:
    rounds = load()
    lines = write_replay(tmp_path / "whole" / "m.jsonl", rules="nintendo", seed=3)
    whole, _ = rounds.gather(tmp_path / "whole")
    text = (tmp_path / "whole" / "m.jsonl").read_text()
    ends = [i for i, line in enumerate(lines) if line.get("event") == "round_end"]
    cut = "".join(json.dumps(line) + "\n" for line in lines[: ends[1] + 1]) + text.splitlines()[ends[1] + 1][:20]
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "m.jsonl").write_text(cut)
    bad = [*lines[:3], {"type": "event", "event": "round_end", "nonsense": True}]
    (tmp_path / "cut" / "bad.jsonl").write_text("".join(json.dumps(line) + "\n" for line in bad))
    tallies, errors = rounds.gather(tmp_path / "cut")
    assert tallies["alpha"].n["rounds"] == 2 < whole["alpha"].n["rounds"]
    assert len(errors) == 1 and "bad.jsonl" in errors[0] and "line 4" in errors[0]
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "cut"), "--format", "json"],
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "skipped" in run.stderr and "bad.jsonl" in run.stderr and "Traceback" not in run.stderr
    rows = {row["bot"]: row for row in map(json.loads, run.stdout.splitlines())}
    assert rows["alpha"]["rounds"] == 2 and rows["alpha"]["won"] == rows["beta"]["lost"]
    missing = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nothing")], capture_output=True,
                             text=True, timeout=60, check=False)  # fmt: skip
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "empty")], capture_output=True, text=True,
                           timeout=60, check=False)  # fmt: skip
    assert empty.returncode == 2 and "no readable replay" in empty.stderr


def test_a_match_the_referee_played_is_tallied_by_its_seats_names(tmp_path: Path) -> None:
    reacher = f"{ROOT / 'bots' / 'pool_bot.py'} --style reacher"
    referee("play", GREEDY, reacher, "--rules", "nintendo", "--seed", "11", *CLOCK, "--replay", tmp_path / "m.jsonl",
            timeout=600)  # fmt: skip
    result = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[-1])
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "m.jsonl"), "--format", "json", "--bot",
                          "reacher"], capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    (row,) = map(json.loads, run.stdout.splitlines())
    assert row["bot"] == "reacher" and row["matches"] == 1 and row["rounds"] == result["rounds"]
    assert round(row["points_won"] * round(row["won"] * row["rounds"])) == result["scores"][1]
