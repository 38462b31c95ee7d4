"""Pair order and the asymmetry test through real tournaments (``koikoi-referee tournament`` with real bots).

* In a ``-j 2`` tournament, the recorded results show that both games of every pair ran on the same worker, one
  right after the other (consecutive match counts of that worker, the first-played one ending before the other
  starts), and in the order the schedule drew for the pair.
* A bot that carries what it saw in the first-played game of a pair into the second (``tests/hostile/
  carrier_bot.py``: open-file-description locks on its own program file) is flagged in a 20-pair tournament: in
  the terminal standings, ``standings.json`` and the home page. The syscall filter that denies file locks is
  switched off for it (``KOIKOI_REFEREE_SECCOMP=off``), and the first game's processes are kept frozen while the
  second is played (``KOIKOI_REFEREE_TWINS=keep``), to show that the test catches the channel by itself.
* Honest bots (greedy, random, search) are not flagged. The slow 200-pair version is ``benchmarks/asymmetry.py``;
  here fewer pairs, with a fixed seed and bots whose choices repeat, so the outcome is the same every run.

Every run uses the single-deal cardavia rules and a generous clock (no search is cut short by a busy machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("signing_key_home")]

CARRIER = ROOT / "tests" / "hostile" / "carrier_bot.py"
PY = sys.executable
CLOCK = ("--rules", "cardavia", "--startup-ms", "30000", "--move-ms", "20000", "--bank-ms", "60000")


def tournament(*args: str | Path, env: dict[str, str] | None = None) -> str:
    """Run ``koikoi-referee tournament ARGS``; its stdout (exit 0 asserted)."""
    exe = Path(PY).parent / "koikoi-referee"
    proc = subprocess.run([str(exe), "tournament", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=900, check=False, env={**os.environ, **(env or {})})  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def results(folder: Path) -> list[dict[str, Any]]:
    """The result lines of ``results.jsonl``."""
    lines = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    return [line for line in lines if "match_id" in line]


def standings(folder: Path) -> dict[str, dict[str, Any]]:
    """``standings.json``'s entries by bot name."""
    doc = json.loads((folder / "standings.json").read_text())
    return {row["name"]: row for row in doc["standings"]}


def test_both_games_of_every_pair_run_on_one_worker_one_after_the_other(tmp_path: Path) -> None:
    out = tmp_path / "j2"
    tournament("-b", "greedy=bots/greedy_bot.py", "-b", f"random={PY} bots/random_bot.py --seed 3",
               "-b", f"random2={PY} bots/random_bot.py --seed 4", *CLOCK, "--pairs", "8", "--seed", "21",
               "-j", "2", "-o", out, "--no-html")  # fmt: skip
    schedule = {m["match_id"]: m for m in json.loads((out / "tournament.json").read_text())["schedule"]}
    lines = results(out)
    assert len(lines) == len(schedule) == 48
    by_pair: dict[str, dict[int, dict[str, Any]]] = {}
    for line in lines:
        assert line["order"] == schedule[line["match_id"]]["order"]  # played in the order the schedule drew
        by_pair.setdefault(line["match_id"][:-1], {})[line["order"]] = line
    assert len(by_pair) == 24
    letters = set()
    for games in by_pair.values():
        first, second = games[1]["played"], games[2]["played"]
        assert first["worker"] == second["worker"]
        assert second["seq"] == first["seq"] + 1  # nothing else ran on that worker in between
        assert first["start"] <= first["end"] <= second["start"] <= second["end"]
        letters.add(games[1]["match_id"][-1])
    assert letters == {"a", "b"}  # the order is drawn: some pairs play game b first
    pairs = json.loads((out / "standings.json").read_text())["pairs"]
    assert all(p["played_first"] == by_pair[p["games"]["a"]["match_id"][:-1]][1]["match_id"][-1] for p in pairs)
    # every complete pair with its order recorded feeds both bots' asymmetry test: 2 pairings x 8 pairs each
    assert {row["asymmetry_pairs"] for row in standings(out).values()} == {16}


def test_a_bot_that_carries_the_first_game_into_the_second_is_flagged(tmp_path: Path) -> None:
    out = tmp_path / "carrier"
    printed = tournament(
        "-b", f"carrier={PY} {CARRIER} {ROOT / 'bots' / 'search_bot.py'}", "-b", "greedy=bots/greedy_bot.py",
        *CLOCK, "--rounds", "3", "--pairs", "20", "--seed", "3", "-j", "1", "-o", out,
        env={"KOIKOI_REFEREE_SECCOMP": "off", "KOIKOI_REFEREE_TWINS": "keep"},
    )  # fmt: skip
    logs = "".join(p.read_text() for p in (out / "logs").iterdir())
    assert logs.count("CARRIER known round 1") >= 15  # the channel worked: the second game knew the first's cards
    rows = standings(out)
    carrier, greedy = rows["carrier"], rows["greedy"]
    assert carrier["asymmetry_pairs"] == 20 and carrier["asymmetry_mean"] > 0
    assert carrier["asymmetry_p"] <= 0.01 and carrier["asymmetry_flag"] is True
    assert greedy["asymmetry_flag"] is False
    assert "carrier: FLAGGED by the asymmetry test" in printed and "greedy: FLAGGED" not in printed
    home = (out / "index.html").read_text()
    assert '<ul id="asymmetry" class="flagged"><li data-bot="carrier">carrier: FLAGGED' in home
    assert 'data-bot="greedy">greedy: FLAGGED' not in home


def test_honest_bots_are_not_flagged(tmp_path: Path) -> None:
    out = tmp_path / "honest"
    printed = tournament(
        "-b", "greedy=bots/greedy_bot.py", "-b", f"random={PY} bots/random_bot.py --seed 5",
        "-b", f"search={PY} bots/search_bot.py --playouts 4 --seed 1", *CLOCK, "--pairs", "20", "--seed", "8",
        "-j", "1", "-o", out,
    )  # fmt: skip
    rows = standings(out)
    assert {name: row["asymmetry_pairs"] for name, row in rows.items()} == dict.fromkeys(rows, 40)
    assert not any(row["asymmetry_flag"] for row in rows.values()), rows
    assert "FLAGGED" not in printed
    assert '<p id="asymmetry">Asymmetry test: no bot' in (out / "index.html").read_text()
