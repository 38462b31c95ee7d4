"""``benchmarks/paired.py``: two runs compared on the same deals, from real tournament folders and from real files of
``benchmarks/information.py --json``.

Two tournaments with the same seed and the same opponent play the same deals; the house bot differs (greedy in one,
a seeded random bot in the other). The comparison must pair the games by deal, and its figures must agree with the
tournament's own ``pairs.csv`` (the points of each deal pair), read independently here.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("signing_key_home")]

PY = sys.executable
PAIRED = ROOT / "benchmarks" / "paired.py"
CLOCK = ("--rules", "cardavia", "--startup-ms", "30000", "--move-ms", "20000", "--bank-ms", "60000")


def tournament(out: Path, house: str, pairs: int) -> Path:
    """A finished tournament of ``house`` (named ``house``) against the seeded random bot, in ``out``."""
    exe = Path(PY).parent / "koikoi-referee"
    run = subprocess.run([str(exe), "tournament", "--bot", f"house={house}", "--bot",
                          "opp=bots/random_bot.py --seed 3", *CLOCK, "--pairs", str(pairs), "--seed", "5", "-j", "1",
                          "--no-html", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900,
                         check=False, env=dict(os.environ))  # fmt: skip
    assert run.returncode == 0, run.stderr
    return out


def paired(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, str(PAIRED), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)  # fmt: skip


def pair_points(folder: Path) -> dict[str, float]:
    """The house bot's points in each deal pair of a tournament, by pair number, from its ``pairs.csv``."""
    with (folder / "pairs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for row in rows:
        assert row["complete"] == "True"
        points = row["first_points"] if row["first"] == "house" else row["second_points"]
        out[row["pair"]] = float(points)
    return out


def test_two_tournaments_on_the_same_deals_are_compared_pair_by_pair(tmp_path: Path) -> None:
    a = tournament(tmp_path / "a", "bots/greedy_bot.py", 6)
    b = tournament(tmp_path / "b", "bots/random_bot.py --seed 9", 6)
    seeds = [{json.loads(line)["result"]["seed"] for line in (d / "results.jsonl").read_text().splitlines()}
             for d in (a, b)]  # fmt: skip
    assert seeds[0] == seeds[1] and len(seeds[0]) == 6  # the same six deals

    run = paired(a, b, "--format", "json")
    assert run.returncode == 0, run.stderr
    got: dict[str, Any] = json.loads(run.stdout)
    pa, pb = pair_points(a), pair_points(b)
    diffs = [(pa[k] - pb[k]) / 2 for k in sorted(pa)]
    mean = sum(diffs) / 6
    half = 1.96 * math.sqrt(sum((d - mean) ** 2 for d in diffs) / 5) / math.sqrt(6)
    assert (got["pairs"], got["games"], got["only_a"], got["only_b"]) == (6, 12, 0, 0)
    assert got["a"] == pytest.approx(sum(pa.values()) / 12) and got["b"] == pytest.approx(sum(pb.values()) / 12)
    assert got["difference"] == pytest.approx(mean) and got["interval"] == pytest.approx(half)
    assert got["differing_pairs"] >= sum(d != 0 for d in diffs)

    text = paired(b, a)
    assert text.returncode == 0, text.stderr
    assert f"A - B {-100 * mean:+.1f} ± {100 * half:.1f} points" in text.stdout
    same = json.loads(paired(a, a, "--format", "json").stdout)
    assert (same["difference"], same["interval"], same["differing_pairs"]) == (0.0, 0.0, 0)

    # The opponent's side of the same games: --bot names the bot compared.
    theirs = json.loads(paired(a, b, "--bot", "opp", "--format", "json").stdout)
    assert theirs["difference"] == pytest.approx(-mean)


def test_runs_of_the_information_benchmark_are_compared_player_by_player(tmp_path: Path) -> None:
    out = tmp_path / "runs.json"
    run = subprocess.run([PY, str(ROOT / "benchmarks" / "information.py"), "--deals", "3", "--first", "7",
                          "--samples", "4", "--players", "uniform", "omniscient", "--json", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "3 deal pairs from seed 7" in run.stdout
    data = json.loads(out.read_text())
    assert data["first"] == 7 and set(data["players"]) == {"uniform", "omniscient"}
    rates = {name: 100 * sum(map(sum, games)) / 6 for name, games in data["players"].items()}
    for name, rate in rates.items():  # the printed row and the file agree
        assert f"| {name} | 6 |" in run.stdout and f"| {rate:.1f}% [" in run.stdout
    got = json.loads(paired(f"{out}:omniscient", f"{out}:uniform", "--format", "json").stdout)
    assert got["pairs"] == 3 and got["games"] == 6
    assert 100 * got["difference"] == pytest.approx(rates["omniscient"] - rates["uniform"])

    # Unreadable or unpaired runs: one line on stderr, exit 2.
    one = out.with_name("one.json")
    one.write_text(json.dumps({**data, "players": {"uniform": data["players"]["uniform"]}}))
    assert json.loads(paired(one, f"{out}:uniform", "--format", "json").stdout)["difference"] == 0.0
    bad = out.with_name("bad.json")
    bad.write_text("{not json")
    other = out.with_name("other.json")
    other.write_text(json.dumps({**data, "first": 100}))
    cases = [
        ((out, one), "holds 2 players"),
        ((f"{out}:known", one), "no player 'known'"),
        ((bad, one), "not a file of information.py --json"),
        ((tmp_path / "none.json", one), "cannot read"),
        ((tmp_path / "nothing", one), "neither a tournament folder"),
        ((tmp_path, one), "no results.jsonl"),
        ((f"{other}:uniform", one), "share no deal pair"),
    ]
    for args, says in cases:
        failed = paired(*args)
        assert failed.returncode == 2 and failed.stdout == ""
        assert failed.stderr.startswith("paired.py: error: ") and says in failed.stderr
        assert failed.stderr.count("\n") == 1
