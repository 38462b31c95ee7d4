"""bots/learned_bot.py: the learned card play as a bot of its own, through its real requests and the referee."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.engine import PRESETS, apply, legal_actions, new_match, observe, policies
from referee.engine.state import Phase
from referee.protocol.messages import request_message
from referee.protocol.text import encode
from tests.helpers import ROOT, benchmark_module, short_matches

BOT = ROOT / "bots" / "learned_bot.py"
sys.path.insert(0, str(ROOT / "bots"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import greedy_bot  # noqa: E402
import learned_bot  # noqa: E402
import search_bot  # noqa: E402
import strength  # noqa: E402

pool = benchmark_module("pool")


def requests_of_matches(rules_name: str, seeds: range) -> list[tuple[dict[str, Any], Any]]:
    """The real request (decoded, as a bot reads it) and the state of every decision with a choice in the matches of
    ``seeds``, played by the engine's learned policy mixed with random moves (seeded: the same decisions each run)."""
    engine = policies.Policy(None, policies.cautious, policies.learned_play())
    out = []
    for seed in seeds:
        rng = random.Random(seed)
        state = new_match(PRESETS[rules_name], seed)
        while state.phase is not Phase.MATCH_OVER:
            legal = legal_actions(state)
            if len(legal) > 1:
                out.append((json.loads(encode(request_message(1, observe(state, state.to_move), 1000, 0))), state))
            state = apply(state, rng.choice(legal) if rng.random() < 0.5 else engine.act(state, legal))
    return out


@pytest.mark.parametrize("rules_name", sorted(PRESETS))
def test_it_plays_as_the_engines_learned_policy_from_its_request_alone(rules_name: str) -> None:
    engine = policies.Policy(None, policies.cautious, policies.learned_play())
    choose = learned_bot.chooser(policies.learned_play())
    seen = {"play": 0, "capture": 0, "koikoi": 0}
    for request, state in requests_of_matches(rules_name, range(12)):
        assert choose(request) == search_bot.wire(engine.act(state, legal_actions(state)))
        seen[request["decision"]] += 1
    assert seen["play"] > 100 and seen["koikoi"] > 5


def test_its_koikoi_rule_is_the_greedy_bots() -> None:
    koikoi = [(r, s) for r, s in requests_of_matches("koikoi-japan", range(40)) if r["decision"] == "koikoi"]
    calls = [learned_bot.koikoi(r["view"]) for r, _ in koikoi]
    assert calls == [greedy_bot.choose(r)["koikoi"] for r, _ in koikoi]
    assert True in calls and False in calls


def test_other_weights_play_another_fit(tmp_path: Path) -> None:
    only_greedy = tmp_path / "greedy.json"
    weights = [1.0 if f == "greedy" else 0.0 for f in policies.FEATURES]
    only_greedy.write_text(json.dumps({"features": list(policies.FEATURES), "weights": weights}))
    choose = learned_bot.chooser(policies.load_learned(str(only_greedy)))
    plays = [r for r, _ in requests_of_matches("nintendo", range(6)) if r["decision"] != "koikoi"]
    assert [choose(r) for r in plays] == [greedy_bot.choose(r) for r in plays]  # greedy's value alone: greedy


@pytest.mark.slow
def test_it_plays_legal_matches_through_the_referee_in_both_seats(tmp_path: Path) -> None:
    bot = f"{sys.executable} {BOT}"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
    for result in short_matches((("nintendo", [bot, greedy]), ("cardavia", [greedy, bot])), tmp_path, 5):
        assert result["forfeit"] is None and "learned" in result["names"]


@pytest.mark.slow
def test_a_bad_weights_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "w.json"
    bad.write_text('{"features": ["greedy"], "weights": [1.0]}')
    for path, why in ((bad, "its features are not those"), (tmp_path / "missing.json", "No such file")):
        run = subprocess.run([sys.executable, str(BOT), "--weights", str(path)], capture_output=True, text=True,
                             input="", timeout=60, cwd=ROOT)  # fmt: skip
        assert run.returncode == 2 and why in run.stderr and "Traceback" not in run.stderr


def test_it_beats_the_greedy_bot_on_fixed_deals() -> None:
    # Both bots are deterministic: these 150 duplicate deal pairs (seeds 0 to 149) always end the same way.
    # benchmarks/pool.py --player learned measures the edge over thousands of pairs.
    rate, half = pool.duel("nintendo", learned_bot.chooser(policies.learned_play()), 150, 0)
    assert rate - half > 0.5


def test_the_benchmarks_take_it_as_a_house_bot_and_an_opponent() -> None:
    assert strength.house_command("learned") == ("bots/learned_bot.py", 0)
    assert strength.OPPONENTS["learned"] == "bots/learned_bot.py"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pool.py"), "--player", "learned", "--rules",
                          "guide", "--styles", "holder", "--pairs", "3", "--format", "json"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["style"], r["opponent"]) for r in rows] == [("learned", "greedy"), ("learned", "holder")]
    mine = learned_bot.chooser(policies.learned_play())
    assert rows[1]["rate"] == pool.duel("guide", mine, 3, 0, pool.pool_bot.chooser("holder"))[0]
