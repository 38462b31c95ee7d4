"""The opponent pool of bots/pool_bot.py: each style plays whole matches through the referee, and plays its style."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

BOT = ROOT / "bots" / "pool_bot.py"
sys.path.insert(0, str(ROOT / "bots"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import pool_bot  # noqa: E402
import strength  # noqa: E402

NAMES = ("aggressive", "stopper", "brights", "ribbons", "denier", "holder", "sweeper")


def test_the_benchmark_measures_against_every_style() -> None:
    assert sorted(pool_bot.STYLES) == sorted(NAMES) == sorted(strength.POOL)


@pytest.mark.parametrize("name", NAMES)
def test_each_style_plays_legal_matches_through_the_referee(referee_exe: Path, name: str, tmp_path: Path) -> None:
    bot = f"{sys.executable} {BOT} --style {name}"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
    for i, (rules, seats) in enumerate((("koikoi-japan", [bot, greedy]), ("guide", [greedy, bot]))):
        replay = tmp_path / f"{i}.replay.jsonl"
        out = subprocess.run([str(referee_exe), "play", *seats, "--json", "--rules", rules, "--rounds", "3",
                              "--seed", "3", "--replay", str(replay)], capture_output=True, text=True,
                             timeout=300, cwd=ROOT)  # fmt: skip
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout.splitlines()[-1])
        assert result["forfeit"] is None  # every action it sent was legal and in time
        assert name in result["names"]
        verify = subprocess.run([str(referee_exe), "replay", "verify", str(replay)], capture_output=True, text=True,
                                timeout=120, cwd=ROOT)  # fmt: skip
        assert verify.returncode == 0, verify.stdout + verify.stderr


def request(decision: str, legal: list[dict[str, Any]], **view: Any) -> dict[str, Any]:
    """A request of seat 1 with the given view fields (the rest empty)."""
    base = {"seat": 1, "round": 1, "rounds": 12, "hand": [], "field": [], "captured": [[], []], "scores": [0, 0],
            "yaku": [{"total": 0}, {"total": 0}]}  # fmt: skip
    return {"decision": decision, "view": {**base, **view}, "legal": legal}


KOIKOI = [{"koikoi": False}, {"koikoi": True}]


def test_the_koikoi_styles_differ() -> None:
    hand = ["pine-chaff-1", "plum-chaff-1", "iris-chaff-1"]  # three cards left, a small yaku, nobody else scored
    ask = request("koikoi", KOIKOI, hand=hand, yaku=[{"total": 1}, {"total": 0}])
    calls = {name: pool_bot.chooser(name)(ask)["koikoi"] for name in NAMES}
    assert calls["aggressive"] and calls["sweeper"]
    assert not calls["stopper"] and not calls["denier"] and not calls["holder"] and not calls["ribbons"]
    last = request("koikoi", KOIKOI, hand=hand, round=12, scores=[20, 10], yaku=[{"total": 1}, {"total": 0}])
    assert not pool_bot.chooser("aggressive")(last)["koikoi"]  # keeps a lead in the last round


def test_the_collectors_and_the_holder_choose_by_their_style() -> None:
    legal = [{"play": "pine-crane"}, {"play": "cherry-ribbon"}]
    ask = request("play", legal, hand=["pine-crane", "cherry-ribbon"], field=["pine-chaff-1", "cherry-chaff-1"])
    assert pool_bot.chooser("brights")(ask) == {"play": "pine-crane"}
    assert pool_bot.chooser("ribbons")(ask) == {"play": "cherry-ribbon"}
    chaff = [{"play": "pine-chaff-1"}, {"play": "iris-chaff-1"}]
    ask = request("play", chaff, hand=["pine-chaff-1", "iris-chaff-1"], field=["pine-chaff-2"])
    assert pool_bot.chooser("aggressive")(ask) == {"play": "pine-chaff-1"}  # greedy: take the chaff
    assert pool_bot.chooser("holder")(ask) == {"play": "iris-chaff-1"}  # holds its pine back


def test_the_denier_takes_what_the_opponent_needs() -> None:
    # Seat 2 holds two poetry ribbons: the denier takes the third although the chaff pair would do it as much good.
    legal = [{"play": "cherry-chaff-1"}, {"play": "maple-chaff-1"}]
    theirs = ["pine-ribbon", "plum-ribbon"]
    ask = request("play", legal, hand=["cherry-chaff-1", "maple-chaff-1"], field=["cherry-ribbon", "maple-ribbon"],
                  captured=[["peony-ribbon"], theirs])  # fmt: skip
    assert pool_bot.chooser("denier")(ask) == {"play": "cherry-chaff-1"}
    assert pool_bot.chooser("aggressive")(ask) == {"play": "maple-chaff-1"}  # greedy: the blue ribbon it began
