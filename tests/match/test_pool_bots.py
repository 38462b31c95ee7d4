"""The opponent pool of bots/pool_bot.py: each style plays whole matches through the referee, and plays its style."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, benchmark_module, short_matches

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

BOT = ROOT / "bots" / "pool_bot.py"
sys.path.insert(0, str(ROOT / "bots"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import pool_bot  # noqa: E402
import strength  # noqa: E402

pool = benchmark_module("pool")

NAMES = ("aggressive", "stopper", "brights", "ribbons", "denier", "holder", "sweeper", "reacher")


def test_the_benchmark_measures_against_every_style() -> None:
    assert sorted(pool_bot.STYLES) == sorted(NAMES) == sorted(strength.POOL)


@pytest.mark.parametrize("name", NAMES)
def test_each_style_plays_legal_matches_through_the_referee(name: str, tmp_path: Path) -> None:
    bot = f"{sys.executable} {BOT} --style {name}"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
    for result in short_matches((("koikoi-japan", [bot, greedy]), ("guide", [greedy, bot])), tmp_path, 3):
        assert result["forfeit"] is None  # every action it sent was legal and in time
        assert name in result["names"]


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


def test_the_reacher_takes_the_card_that_spoils_a_yaku_within_reach() -> None:
    # Seat 2 holds two poetry ribbons: the reacher takes the third, where greedy takes the deer (worth more alone).
    legal = [{"play": "cherry-chaff-1"}, {"play": "maple-chaff-1"}]
    ask = request("play", legal, hand=["cherry-chaff-1", "maple-chaff-1"], field=["cherry-ribbon", "maple-deer"],
                  captured=[[], ["pine-ribbon", "plum-ribbon"]], opponent_hand_size=5)  # fmt: skip
    assert pool_bot.chooser("reacher")(ask) == {"play": "cherry-chaff-1"}
    assert pool_bot.chooser("aggressive")(ask) == {"play": "maple-chaff-1"}  # greedy: the deer


def test_the_reacher_discards_what_the_opponent_cannot_use() -> None:
    # Nothing matches the field. Greedy gives up its least valuable card, the ribbon that would complete the
    # opponent's poetry ribbons; the reacher gives up the animal, which brings the opponent nothing near a yaku.
    legal = [{"play": "cherry-ribbon"}, {"play": "willow-swallow"}]
    ask = request("play", legal, hand=["cherry-ribbon", "willow-swallow"], field=["iris-chaff-1"],
                  captured=[[], ["pine-ribbon", "plum-ribbon"]], opponent_hand_size=5)  # fmt: skip
    assert pool_bot.chooser("reacher")(ask) == {"play": "willow-swallow"}
    assert pool_bot.chooser("aggressive")(ask) == {"play": "cherry-ribbon"}


def test_the_reacher_plays_on_only_while_the_opponent_is_far_from_a_yaku() -> None:
    hand = ["pine-chaff-1", "plum-chaff-1", "iris-chaff-1"]
    # It holds the sake cup, so both viewing yaku are out of the opponent's reach, and the opponent has one chaff.
    far = request("koikoi", KOIKOI, hand=hand, yaku=[{"total": 1}, {"total": 0}],
                  captured=[["chrysanthemum-sake", "pampas-geese"], ["pine-chaff-2"]])  # fmt: skip
    assert pool_bot.chooser("reacher")(far)["koikoi"]
    near = request("koikoi", KOIKOI, hand=hand, yaku=[{"total": 1}, {"total": 0}],
                   captured=[["chrysanthemum-sake", "pampas-geese"], ["pine-ribbon", "plum-ribbon"]])  # fmt: skip
    assert not pool_bot.chooser("reacher")(near)["koikoi"]  # one ribbon from the poetry ribbons
    short = request("koikoi", KOIKOI, hand=hand[:2], yaku=[{"total": 1}, {"total": 0}],
                    captured=[["chrysanthemum-sake", "pampas-geese"], ["pine-chaff-2"]])  # fmt: skip
    assert not pool_bot.chooser("reacher")(short)["koikoi"]  # two cards left


def test_the_reacher_beats_the_greedy_bot_on_fixed_deals() -> None:
    # Both players are deterministic: these 150 duplicate deal pairs (seeds 0 to 149) always end the same way. Its
    # edge is a few points (benchmarks/pool.py measures it over thousands of pairs), so the test holds it above
    # greedy with confidence on these deals under koikoi-japan, where the edge is largest.
    rate, half = pool.duel("koikoi-japan", pool_bot.chooser("reacher"), 150, 0)
    assert rate - half > 0.5


def test_the_pool_benchmark_prints_a_row_a_style_and_refuses_bad_arguments() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pool.py"), "--rules", "cardavia", "--styles",
                          "reacher", "holder", "--pairs", "3", "--format", "json"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    want = [("cardavia", "reacher", 3), ("cardavia", "holder", 3)]
    assert [(r["rules"], r["style"], r["pairs"]) for r in rows] == want
    for row in rows:
        rate, _ = pool.duel("cardavia", pool_bot.chooser(row["style"]), 3, 0)
        assert row["rate"] == rate and 0.0 <= rate <= 1.0
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pool.py"), "--pairs", "1"], capture_output=True,
                         text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert bad.returncode == 2 and "--pairs must be 2 or more" in bad.stderr
