"""The search bot: it plays whole matches through the referee, keeps to its time, and decides only on what its seat
saw (a spy on its input: two deals that differ in hidden cards give it the same lines, and it answers the same)."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.engine import (
    PRESETS,
    STOP,
    Deal,
    HandYakuMade,
    Phase,
    State,
    apply,
    ids_of,
    legal_actions,
    new_match,
    score,
    shuffled_deal,
)
from referee.engine.determinize import determinize
from referee.engine.opponents import FLOOR
from referee.engine.policies import GREEDY_POLICY, KOIKOI_RULES, VALUATIONS, Policy, bold, learned_play
from referee.engine.rules import rules_from_dict
from referee.engine.simulate import MatchOdds
from tests.helpers import ROOT, TESHI_ORDER, benchmark_module, deal_of, random_match, seat_event

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

BOT = ROOT / "bots" / "search_bot.py"
sys.path.insert(0, str(ROOT / "bots"))
import greedy_bot  # noqa: E402
import search_bot  # noqa: E402

SPY = """
import subprocess, sys, threading
inp, out = open(sys.argv[1], "wb"), open(sys.argv[2], "wb")
bot = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def pump():
    for line in bot.stdout:
        out.write(line); out.flush()
        sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
threading.Thread(target=pump, daemon=True).start()
for line in sys.stdin.buffer:
    inp.write(line); inp.flush()
    bot.stdin.write(line); bot.stdin.flush()
bot.stdin.close(); bot.wait()
"""


def play(referee: Path, bots: list[str], *args: str) -> list[dict[str, Any]]:
    """Run ``koikoi-referee play`` and return its JSON results."""
    out = subprocess.run([str(referee), "play", *bots, "--json", *args], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


@pytest.mark.parametrize("rules", ["guide", "cardavia", "koikoi-japan", "nintendo"])
def test_it_plays_whole_matches_in_both_seats(referee_exe: Path, rules: str) -> None:
    search = f"{sys.executable} {BOT} --ms 20 --seed 1"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
    results = play(referee_exe, [search, greedy], "--rules", rules, "--rounds", "2", "--seed", "5")
    results += play(referee_exe, [greedy, search], "--rules", rules, "--rounds", "2", "--seed", "5")
    for result in results:
        assert result["forfeit"] is None
        assert "search" in result["names"]


def test_it_keeps_to_a_short_clock(referee_exe: Path) -> None:
    # Thinking time is a share of move_ms plus a share of the bank: the bank never runs out.
    search = f"{sys.executable} {BOT} --seed 2"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
    results = play(referee_exe, [search, greedy], "--rules", "cardavia", "--seed", "9", "--move-ms", "200",
                   "--bank-ms", "5000")  # fmt: skip
    assert results[0]["forfeit"] is None


def test_the_thinking_budget_follows_the_clock_and_the_cap() -> None:
    request = {"time": {"move_ms": 1000, "bank_ms": 30000}}
    assert search_bot.Searcher(None, None, 0).budget_s(request) == pytest.approx(
        (search_bot.MOVE_SHARE * 1000 + search_bot.BANK_SHARE * 30000) / 1000
    )
    assert search_bot.Searcher(100, None, 0, wall=True).budget_s(request) == pytest.approx(0.1)
    assert search_bot.Searcher(None, None, 0).budget_s({"time": {"move_ms": 0, "bank_ms": 0}}) > 0
    # by default --ms counts CPU time, checked in the search loop; the wall budget is the clock's share alone
    assert search_bot.Searcher(100, None, 0).budget_s(request) == pytest.approx(1.1)


def test_a_cpu_capped_search_stops() -> None:
    rules = PRESETS["koikoi-japan"]
    state = new_match(rules, 2, first_dealer=0)
    searcher = search_bot.Searcher(30, None, 0)
    searcher.observe({"type": "hello", "seat": 1, "rules": rules.to_dict()})
    for event in state.events:
        searcher.observe({"type": "event", **seat_event(event, 0)})
    legal = [search_bot.wire(a) for a in legal_actions(state)]
    request = {"type": "request", "id": 1, "decision": "play", "view": {}, "legal": legal,
               "time": {"move_ms": 600000, "bank_ms": 0}}  # fmt: skip
    assert searcher.choose(request) in legal  # without the CPU cap it would think for 300 s


def spied_run(referee: Path, tmp: Path, tag: str, deal: Deal) -> tuple[list[bytes], list[bytes]]:
    """One match of the search bot (seat 2) against greedy on ``deal``; the bot's input and output lines."""
    spy = tmp / "spy.py"
    spy.write_text(SPY)
    deals = tmp / f"{tag}.jsonl"
    deals.write_text(json.dumps(deal.to_json()) + "\n")
    inp, out = tmp / f"{tag}.in", tmp / f"{tag}.out"
    bot = f"{sys.executable} {spy} {inp} {out} {sys.executable} {BOT} --playouts 6 --ms 600000 --seed 3"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
    play(referee, [greedy, bot], "--rules", "koikoi-japan", "--rounds", "1", "--deals", str(deals),
         "--first-dealer", "1", "--move-ms", "600000", "--bank-ms", "0",
         "--sandbox", "none")  # fmt: skip  (the spy writes to host files)
    return inp.read_bytes().splitlines(), out.read_bytes().splitlines()


def test_the_same_view_gives_the_same_choices_whatever_the_hidden_cards(referee_exe: Path, tmp_path: Path) -> None:
    base = shuffled_deal(21, 0)
    stock = list(base.stock)
    stock[22], stock[23] = stock[23], stock[22]  # the last two stock cards: hidden until the 15th turn
    other = Deal(base.hands, base.field, tuple(stock))
    in1, out1 = spied_run(referee_exe, tmp_path, "one", base)
    in2, out2 = spied_run(referee_exe, tmp_path, "two", other)
    common = 0
    while common < min(len(in1), len(in2)) and in1[common] == in2[common]:
        common += 1
    asked = sum(1 for line in in1[:common] if json.loads(line)["type"] == "request")
    assert asked >= 3  # several decisions were made on identical input
    assert out1[: asked + 1] == out2[: asked + 1]  # hello, then the same answer to each of them
    assert len(out1) > asked  # and the bot did answer them


def test_its_search_sees_only_the_record_of_its_seat() -> None:
    # In process: the same events from two deals that differ in hidden cards give the same decision.
    rules = PRESETS["koikoi-japan"]
    base = shuffled_deal(4, 0)
    stock = list(base.stock)
    rng = random.Random(1)
    tail = stock[12:]
    rng.shuffle(tail)
    swapped = Deal(base.hands, base.field, tuple(stock[:12] + tail))
    choices = []
    for deal in (base, swapped):
        state = new_match(rules, 0, [deal], first_dealer=0)
        searcher = search_bot.Searcher(None, 12, 7)
        searcher.observe({"type": "hello", "seat": 1, "rules": rules.to_dict()})
        for event in state.events:
            searcher.observe({"type": "event", **seat_event(event, 0)})
        while not (state.turn >= 5 and state.to_move == 0 and state.phase is Phase.PLAY):  # four turns: 4 draws
            state = apply(state, search_bot.greedy_action(state, legal_actions(state)))
            for event in state.events:
                searcher.observe({"type": "event", **seat_event(event, 0)})
        legal = [search_bot.wire(a) for a in legal_actions(state)]
        assert state.to_move == 0 and len(legal) > 1
        request = {"type": "request", "id": 9, "decision": "play", "view": {}, "legal": legal,
                   "time": {"move_ms": 600000, "bank_ms": 0}}  # fmt: skip
        choices.append(searcher.choose(request))
    assert choices[0] == choices[1]


def test_without_a_record_it_falls_back_to_the_heuristic_on_the_view() -> None:
    searcher = search_bot.Searcher(None, 4, 0)  # no hello: nothing to search from
    view = {"seat": 1, "hand": ["pine-crane", "plum-chaff-1"], "field": ["pine-chaff-1", "iris-bridge"],
            "captured": [[], []]}  # fmt: skip
    legal = [{"play": "pine-crane"}, {"play": "plum-chaff-1"}]
    request = {"type": "request", "id": 1, "decision": "play", "view": view, "legal": legal}
    assert searcher.choose(request) == {"play": "pine-crane"}  # the capture of a bright, not a discard
    koikoi = {"type": "request", "id": 2, "decision": "koikoi", "view": view,
              "legal": [{"koikoi": False}, {"koikoi": True}]}  # fmt: skip
    assert searcher.choose(koikoi) == {"koikoi": False}


def greedy_request(state: State) -> dict[str, Any]:
    """The parts of a request that ``greedy_bot.choose`` reads, for the seat to move."""
    p = state.to_move
    totals = [score(state.captured[s], state.rules, state.koikoi[s]).total for s in (0, 1)]
    view = {"seat": p + 1, "round": state.round, "rounds": state.rules.rounds, "hand": ids_of(state.hands[p]),
            "field": ids_of(state.field), "captured": [ids_of(state.captured[0]), ids_of(state.captured[1])],
            "scores": list(state.scores), "yaku": [{"total": t} for t in totals]}  # fmt: skip
    decision = {Phase.PLAY: "play", Phase.DRAW_CHOICE: "capture", Phase.KOIKOI: "koikoi"}[state.phase]
    return {"decision": decision, "view": view, "legal": [search_bot.wire(a) for a in legal_actions(state)]}


@pytest.mark.parametrize("rules", ["guide", "cardavia", "koikoi-japan"])
def test_the_rollout_policy_is_the_greedy_bot(rules: str) -> None:
    # The search's model of both seats is greedy_bot.py's policy, move for move.
    checked = 0
    for seed in range(6):
        for state, action in random_match(PRESETS[rules], seed, seed):
            if action is None:
                break
            mine = search_bot.wire(search_bot.greedy_action(state, legal_actions(state)))
            assert mine == greedy_bot.choose(greedy_request(state))
            checked += 1
    assert checked > 50


def test_the_match_odds_follow_from_the_rules_and_the_round_results() -> None:
    # One kind of round: the dealer gains 1 point of lead and deals again. Over two rounds the dealer is sure to
    # gain 2; the other player is then behind unless it led by more than 2.
    rules = rules_from_dict({"base": "guide", "rounds": 2})
    odds = MatchOdds(rules, {(1, True): 5}, tie=0.5)
    assert odds.value(0, 0, True) == 0.5 and odds.value(1, 0, False) == 1.0 and odds.value(-1, 0, True) == 0.0
    assert odds.value(-2, 2, True) == 0.5  # a tie at the end
    assert odds.value(2, 2, False) == 0.5 and odds.value(3, 2, False) == 1.0 and odds.value(-1, 2, True) == 1.0
    assert odds.value(1, 1, False) == 0.5 and odds.value(0, 1, True) == 1.0


@pytest.mark.parametrize("rules", ["guide", "cardavia", "koikoi-japan"])
def test_the_bots_match_odds_are_a_fair_chance_to_win(rules: str) -> None:
    preset = PRESETS[rules]
    odds = search_bot.match_odds(preset, 0.5)
    leads = range(-40, 41)
    for left in range(preset.rounds + 1):
        for dealing in (False, True):
            values = [odds.value(d, left, dealing) for d in leads]
            assert all(0.0 <= v <= 1.0 for v in values)
            assert values == sorted(values)  # a bigger lead is never worse
            # what one player wins the other loses: the two views of the same situation add up to 1
            assert all(odds.value(d, left, dealing) + odds.value(-d, left, not dealing) == pytest.approx(1.0)
                       for d in leads)  # fmt: skip
    if preset.end_when_broke and preset.transfer_points:  # koikoi-japan: 30 points each; 0 left loses the match
        assert odds.value(-2 * preset.starting_points, preset.rounds, True) == 0.0
        assert odds.value(2 * preset.starting_points, preset.rounds, False) == 1.0


def watch(opponent: Policy, rounds: int, seed: int, model: str = "mixture") -> search_bot.Searcher:
    """A searcher in seat 1 that saw ``rounds`` rounds of greedy (its seat) against ``opponent`` (the other seat)."""
    rules = rules_from_dict({"base": "koikoi-japan", "rounds": rounds})
    state = new_match(rules, seed, first_dealer=0)
    searcher = search_bot.Searcher(None, 4, 0, model=model)
    searcher.observe({"type": "hello", "seat": 1, "rules": rules.to_dict()})
    while True:
        for event in state.events:
            searcher.observe({"type": "event", **seat_event(event, 0)})
        if state.is_over:
            return searcher
        legal = legal_actions(state)
        player = GREEDY_POLICY if state.to_move == 0 else opponent
        state = apply(state, player.act(state, legal))


def round_before_the_opponent_plays(kind: str) -> Deal:
    """A first deal (seat 1 deals and leads) whose round ends before seat 2 plays: ``teshi``, seat 1 holds the four
    pines (scored at the deal); ``stop``, seat 1's first turn takes the sake cup and the moon (moon viewing)."""
    if kind == "teshi":
        return deal_of(TESHI_ORDER)
    # hands of single months, the field without three of a month, the moon on top of the stock
    return deal_of([32, 0, 4, 8, 12, 16, 20, 24, 36, 40, 44, 2, 6, 10, 14, 18, 34, 30, 1, 5, 9, 13, 17, 21, 28])


@pytest.mark.parametrize("kind", ["teshi", "stop"])
@pytest.mark.parametrize("model", ["hybrid", "mixture"])
def test_a_round_that_ends_before_the_opponent_plays_is_no_evidence_and_no_error(
    kind: str, model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The opponent made no decision in that round: nothing to weigh, and no replay past the round's end.
    rules = rules_from_dict({"base": "nintendo", "rounds": 3})
    for seat in (0, 1):
        state = new_match(rules, 3, (round_before_the_opponent_plays(kind),), first_dealer=0)
        assert [e.name for e in state.events if isinstance(e, HandYakuMade)] == (["teshi"] if kind == "teshi" else [])
        searcher = search_bot.Searcher(None, 4, 0, model=model)
        searcher.observe({"type": "hello", "seat": seat + 1, "rules": rules.to_dict()})
        while True:
            for event in state.events:
                searcher.observe({"type": "event", **seat_event(event, seat)})
            if state.is_over:
                break
            legal = legal_actions(state)
            if state.round == 1 and state.phase is Phase.PLAY:  # kind "stop": seat 1 plays the sake cup
                action = next(a for a in legal if a.card == 32)
            elif state.round == 1:  # moon viewing made on the first turn: seat 1 stops
                action = STOP
            else:
                action = search_bot.greedy_action(state, legal)
            state = apply(state, action)
            if state.round == 2 and state.turn == 1 and kind == "stop":
                assert state.history[0].winner == 0 and state.history[0].reason == "stop"
        assert state.round == 3 and searcher.record is not None and len(searcher.record.rounds) == 3
        if model == "mixture":
            assert searcher.opponent.choices > 10  # the two rounds played were weighed
    assert "not weighed" not in capsys.readouterr().err


def test_the_model_of_the_opponent_learns_its_style_from_its_choices() -> None:
    # Scripted matches (fixed deals and policies, seeded sampling): a bold sweeper is told from the greedy bot.
    sweeper = Policy(next(v for v in VALUATIONS if v and v.name == "count"), bold)
    rules = [name for name, _ in KOIKOI_RULES]
    names = [v.name if v else "any" for v in VALUATIONS]
    for opponent, valuation, koikoi in ((sweeper, "count", "bold"), (GREEDY_POLICY, "greedy", "cautious")):
        model = watch(opponent, 6, 11).opponent
        wv, wk = model.weights()
        assert model.choices > 20  # the evidence of six settled rounds
        assert names[max(range(len(wv)), key=wv.__getitem__)] == valuation
        assert rules[max(range(len(wk)), key=wk.__getitem__)] == koikoi
        assert min(wv + wk) >= FLOOR / len(VALUATIONS)  # a uniform share is always kept


def test_samples_follow_the_member_drawn_and_its_rollouts_play_it() -> None:
    searcher = watch(Policy(next(v for v in VALUATIONS if v and v.name == "count"), bold), 2, 4)
    wv, _ = searcher.opponent.weights()
    assert abs(sum(wv) - 1) < 1e-9
    draws = [searcher.opponent.draw(random.Random(i)) for i in range(200)]
    share = sum(d.koikoi is bold for d in draws) / len(draws)
    assert share > 0.5  # drawn by the weights, which favour the koi-koi rule it saw


def test_the_hybrid_model_learns_the_koikoi_rule_and_plays_the_greedy_cards() -> None:
    # The hybrid model (the default) weighs only the koi-koi rules, from the opponent's public koi-koi calls.
    bold_greedy = Policy(GREEDY_POLICY.valuation, bold)
    rules = [name for name, _ in KOIKOI_RULES]
    for opponent, koikoi in ((bold_greedy, "bold"), (GREEDY_POLICY, "cautious")):
        searcher = watch(opponent, 6, 11, model="hybrid")
        _, wk = searcher.opponent.weights()
        assert rules[max(range(len(wk)), key=wk.__getitem__)] == koikoi
    searcher = watch(bold_greedy, 6, 11, model="hybrid")
    record = searcher.record
    assert record is not None and record.current is None  # between matches: nothing to sample
    draws = [searcher.opponent.draw_koikoi(random.Random(i)) for i in range(200)]
    assert sum(d is bold for d in draws) > 100  # drawn by the koi-koi weights, which favour what it saw


def koikoi_decision(rounds: int, continuations: str = "greedy") -> tuple[State, search_bot.Searcher]:
    """The first koi-koi decision of seat 1 in greedy self-play under ``koikoi-japan`` cut to ``rounds`` rounds,
    and a searcher (seat 1, with ``continuations``) that saw every event up to it."""
    rules = rules_from_dict({"base": "koikoi-japan", "rounds": rounds})
    for seed in range(100):
        state = new_match(rules, seed, first_dealer=0)
        searcher = search_bot.Searcher(None, 24, 5, continuations=continuations)
        searcher.observe({"type": "hello", "seat": 1, "rules": rules.to_dict()})
        while not state.is_over:
            for event in state.events:
                searcher.observe({"type": "event", **seat_event(event, 0)})
            if state.phase is Phase.KOIKOI and state.to_move == 0:
                return state, searcher
            state = apply(state, search_bot.greedy_action(state, legal_actions(state)))
    raise AssertionError("no koi-koi decision of seat 1 in 100 matches")


def koikoi_request(state: State) -> dict[str, Any]:
    legal = [search_bot.wire(a) for a in legal_actions(state)]
    return {"type": "request", "id": 5, "decision": "koikoi", "view": {}, "legal": legal,
            "time": {"move_ms": 600000, "bank_ms": 0}}  # fmt: skip


def test_the_robust_koikoi_call_stops_when_stopping_wins_the_match() -> None:
    # In the only round, a yaku that is stopped wins the match (the other seat has scored nothing): nothing is
    # worth more, so the robust call stops.
    state, searcher = koikoi_decision(1)
    assert searcher.robust
    assert searcher.choose(koikoi_request(state)) == {"koikoi": False}


@pytest.mark.parametrize("model", ["hybrid", "mixture", "greedy"])
def test_the_opponent_of_the_rollouts_cashes_a_stop_that_wins_the_match(model: str) -> None:
    # In the only round any stop with a yaku wins the match: with --opponent-koikoi cashing (the default) every
    # sampled opponent stops there, whatever koi-koi rule the model drew; with --opponent-koikoi model some play on.
    state, searcher = koikoi_decision(1)
    record = searcher.record
    assert record is not None
    p = state.to_move
    searcher.mixture, searcher.hybrid = model == "mixture", model == "hybrid"
    searcher.opponent.settled_koikoi = [0.0, 0.0, 5.0]  # the evidence of a bold caller (the learned models)
    for cashing in (True, False):
        searcher.cashing = cashing
        rules = [searcher.sample(record, random.Random(i))[1].koikoi for i in range(40)]
        if cashing:
            assert not any(rule(state, p) for rule in rules)
        elif model != "greedy":  # the greedy model always draws the greedy heuristic's own rule
            assert any(rule(state, p) for rule in rules)


class _Rival:
    """An opponent that never plays: the patched rollouts below value every rollout against it ``value``."""

    def __init__(self, value: float) -> None:
        self.value = value


_SURE, _HOPELESS = _Rival(1.0), _Rival(0.0)


def test_the_robust_koikoi_call_values_koikoi_against_the_worst_opponent(monkeypatch: pytest.MonkeyPatch) -> None:
    # Koi-koi is called only when its mean against every opponent (the model's and the racers') beats stopping.
    real = search_bot.values_against

    def values_against(state: State, action: Any, me: int, mine: Any, opponents: list[Any],
                       odds: MatchOdds) -> list[float]:  # fmt: skip
        return [o.value if isinstance(o, _Rival) else real(state, action, me, mine, [o], odds)[0] for o in opponents]

    monkeypatch.setattr(search_bot, "values_against", values_against)
    state, searcher = koikoi_decision(8)
    request = koikoi_request(state)
    monkeypatch.setattr(search_bot, "RACERS", (_SURE,))
    monkeypatch.setattr(searcher, "sample", lambda record, rng: (determinize(record, rng), _SURE))
    assert searcher.choose(request) == {"koikoi": True}  # every opponent: a sure win after koi-koi
    monkeypatch.setattr(search_bot, "RACERS", (_SURE, _HOPELESS, _SURE))
    assert searcher.choose(request) == {"koikoi": False}  # one opponent against whom it always loses
    monkeypatch.setattr(searcher, "sample", lambda record, rng: (determinize(record, rng), _HOPELESS))
    monkeypatch.setattr(search_bot, "RACERS", (_SURE,))
    assert searcher.choose(request) == {"koikoi": False}  # the model's opponent counts too


def test_a_round_the_greedy_model_cannot_explain_is_sampled_without_it() -> None:
    # Against an opponent that plays its highest card, no sampled hand explains its plays as greedy's: after two
    # samples fail, the samples go without that model until it plays again. Against greedy the model holds.
    rules = PRESETS["koikoi-japan"]
    for seed in range(20):
        for opponent in ("greedy", "highest"):
            state = new_match(rules, seed, first_dealer=1)
            searcher = search_bot.Searcher(None, 4, 0)
            searcher.observe({"type": "hello", "seat": 1, "rules": rules.to_dict()})
            plays = 0
            while state.round == 1 and not state.is_over:
                for event in state.events:
                    searcher.observe({"type": "event", **seat_event(event, 0)})
                if state.to_move == 0 and state.phase is Phase.PLAY and plays >= 3:
                    break
                legal = legal_actions(state)
                if state.to_move == 1 and opponent == "highest" and state.phase is Phase.PLAY:
                    action = legal[-1]
                else:
                    action = search_bot.greedy_action(state, legal)
                plays += state.to_move == 1 and state.phase is Phase.PLAY
                state = apply(state, action)
            if state.round != 1 or state.is_over:
                continue
            record = searcher.record
            assert record is not None
            searcher.greedy_sample(record, random.Random(seed))
            fit = searcher.fit
            assert fit is not None and fit.at == (1, 1, 3)
            if opponent == "greedy":
                assert (fit.kept, fit.dropped) == (1, 0) and record.agreed
                assert fit.exclude & state.hands[1] == 0  # the cards ruled out are none of greedy's
                continue
            if record.agreed:
                continue  # its highest cards were also greedy's choices
            searcher.greedy_sample(record, random.Random(seed + 1))
            assert (fit.kept, fit.dropped) == (0, 2) and not record.agreed
            searcher.greedy_sample(record, random.Random(seed + 2))
            assert record.agreed and (fit.kept, fit.dropped) == (0, 2)  # no model: nothing to disagree with
            return
    raise AssertionError("no round where the highest card was not greedy's choice")


@pytest.mark.parametrize(("loop", "continuations"), [(False, "greedy"), (True, "greedy"), (False, "learned")])
def test_the_search_speed_benchmark_prints_its_figures(loop: bool, continuations: str) -> None:
    from referee.engine.policies import GREEDY_POLICY, rollout_in_c

    command = [sys.executable, str(ROOT / "benchmarks" / "search.py"), "--matches", "1", "--samples", "4",
               "--continuations", continuations]  # fmt: skip
    run = subprocess.run([*command, *(["--loop"] if loop else [])], capture_output=True, text=True, timeout=300,
                         check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    where = "C" if rollout_in_c(GREEDY_POLICY) and not loop else "Python"
    assert re.fullmatch(rf"koikoi-japan \({where} round loop, {continuations} continuation\): \d+ decisions of 4 "
                        r"samples, [\d.]+ ms cpu a decision, [\d,]+ samples/s, [\d,]+ rollouts/s \(cpu\)\n",
                        run.stdout), run.stdout  # fmt: skip


def test_the_information_benchmark_ranks_players_by_what_they_are_told() -> None:
    # Four one-deal matches a player (`exact` rolls the stopper itself out, `bot` is the search bot's own Searcher,
    # told its seat's events): the omniscient player sees every card and the stopper's answers, and plays a line
    # that wins whenever one exists, so it never scores below the searches on the same deals.
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "information.py"), "--deals", "2", "--samples",
                          "4"], capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = {}
    for line in run.stdout.splitlines():
        m = re.fullmatch(r"\| (\w+) \| 4 \| (\d+)-(\d+)-(\d+) \| ([\d.]+)% \[[\d.]+, [\d.]+\] "
                         r"\| (\d+) / (\d+) / (\d+) \| \d+ \|", line)  # fmt: skip
        if m:
            rows[m[1]] = float(m[5])
            assert sum(map(int, m.groups()[1:4])) == 4 and sum(map(int, m.groups()[5:8])) == 2
    assert set(rows) == {"uniform", "known", "exact", "bot", "portfolio", "learned", "solver", "omniscient"}
    assert "search:" not in run.stderr  # the bot's search never fell back to greedy
    assert all(f"{name}: 2/2 deal pairs, " in run.stderr for name in rows)  # the progress, on standard error
    assert rows["omniscient"] >= max(rows["uniform"], rows["known"], rows["solver"])


def test_the_policies_benchmark_plays_each_policy_against_greedy() -> None:
    # Greedy's koi-koi rule with its own thresholds is greedy itself: exactly 50% on every deal pair, which checks
    # the seat swap and the scoring; the rows moved away from it are played on the same deals.
    script = ROOT / "benchmarks" / "policies.py"
    run = subprocess.run([sys.executable, str(script), "--rules", "nintendo", "--pairs", "6", "--random", "2"],
                         capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    rates = dict(re.findall(r"^\| (.+) \| ([\d.]+% ± [\d.]+) \|$", run.stdout, re.M))
    assert len(rates) == 15 and {"spiteful", "greedy, never koi-koi"} <= set(rates)
    assert sum(name.startswith("random ") for name in rates) == 2
    bench = benchmark_module("policies")
    same = bench.Policy(bench.GREEDY, bench.koikoi_rule())
    assert bench.duel(PRESETS["nintendo"], same.act, 6, 0) == (0.5, 0.0)


def test_the_learning_benchmark_gathers_the_search_s_choices_and_fits_weights_to_them(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "learn_play.py"
    data, out = tmp_path / "plays.jsonl", tmp_path / "weights.json"
    gather = [sys.executable, str(script), "gather", "--rules", "cardavia", "--deals", "2", "--first", "40",
              "--samples", "6", "--data", str(data)]  # fmt: skip
    run = subprocess.run(gather, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    assert {line["seed"] for line in lines} == {40, 41} and {line["me"] for line in lines} == {0, 1}
    assert all(len(line["legal"]) > 1 and 0 <= line["chosen"] < len(line["legal"]) for line in lines)
    again = subprocess.run(gather, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0 and data.read_text(encoding="utf-8").count("\n") == len(lines)  # deals not replayed
    fit = subprocess.run([sys.executable, str(script), "fit", str(data), "--out", str(out), "--rules", "cardavia",
                          "--check", "3"], capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert fit.returncode == 0, fit.stderr
    weights = json.loads(out.read_text(encoding="utf-8"))
    assert weights["decisions"] == len(lines) and len(weights["weights"]) == len(weights["features"]) == 14
    assert re.search(r"^fit: \d+ decisions, the search's choice made by greedy's valuation [\d.]+%", fit.stdout, re.M)
    assert re.search(r"^check: the learned play against greedy under cardavia, 3 deal pairs: [\d.]+% ± [\d.]+$",
                     fit.stdout, re.M)  # fmt: skip
    learned = subprocess.run([*gather[:-1], str(tmp_path / "next.jsonl"), "--continuations", "learned"],
                             capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert learned.returncode == 0, learned.stderr
    assert {json.loads(line)["seed"] for line in (tmp_path / "next.jsonl").read_text().splitlines()} == {40, 41}
    empty = tmp_path / "empty.jsonl"
    empty.write_text("not json\n", encoding="utf-8")
    none = subprocess.run([sys.executable, str(script), "fit", str(empty), "--out", str(out)], capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert none.returncode == 2 and "no decision with a choice" in none.stderr


def test_the_bot_file_loads_by_path_as_a_module_nobody_registered() -> None:
    # Other programs load the search by its path (a wrapper bot subclasses its Searcher) without putting the
    # module in sys.modules: nothing at its top level may need that (a dataclass does).
    spec = importlib.util.spec_from_file_location("search_bot_by_path", BOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "search_bot_by_path" not in sys.modules
    assert module.Searcher(None, 4, 0).fit is None


def test_the_choices_benchmark_prints_the_same_hash_with_either_round_loop() -> None:
    # The search's rollouts in C (one call a sample, the koi-koi call's against five opponents in one call) and in
    # the engine's own loop choose alike at every decision of the matches it plays, koi-koi calls included.
    command = [sys.executable, str(ROOT / "benchmarks" / "choices.py"), "--samples", "24"]
    outputs = []
    for extra in ([], ["--loop"]):
        run = subprocess.run([*command, *extra], capture_output=True, text=True, timeout=300, check=False)
        assert run.returncode == 0, run.stderr
        assert re.fullmatch(r"\d{3,} decisions, 24 samples each: [0-9a-f]{16}\n", run.stdout), run.stdout
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]


def test_an_actions_best_continuation_is_its_series() -> None:
    values = [[[0.6, 0.6], [0.5, 0.5], []], [[0.1, 0.1], [0.9, 0.8], []]]  # [continuation][action][sample]
    assert search_bot.best_series(values, [0, 1]) == [[0.6, 0.6], [0.9, 0.8], []]
    assert search_bot.best_series(values, [1]) == [[], [0.9, 0.8], []]


def play_decision() -> tuple[State, dict[str, Any], list[dict[str, Any]]]:
    """The first decision of a match: its state, the request and the legal actions on the wire."""
    rules = PRESETS["koikoi-japan"]
    state = new_match(rules, 2, first_dealer=0)
    legal = [search_bot.wire(a) for a in legal_actions(state)]
    request = {"type": "request", "id": 1, "decision": "play", "view": {}, "legal": legal,
               "time": {"move_ms": 600000, "bank_ms": 0}}  # fmt: skip
    return state, request, legal


@pytest.mark.parametrize("continuations", ["greedy", "all"])
def test_with_the_portfolio_an_action_is_worth_its_best_continuation(monkeypatch: pytest.MonkeyPatch,
                                                                    continuations: str) -> None:  # fmt: skip
    # Action 0 is the better one under the greedy continuation, action 1 under the portfolio's third policy: the
    # search with the greedy continuation alone plays action 0, with the portfolio action 1.
    state, request, legal = play_decision()
    searcher = search_bot.Searcher(None, 40, 0, continuations=continuations)
    searcher.observe({"type": "hello", "seat": 1, "rules": state.rules.to_dict()})
    for event in state.events:
        searcher.observe({"type": "event", **seat_event(event, 0)})
    assert len(searcher.continuations) == (len(search_bot.PORTFOLIO) if continuations == "all" else 1)
    seen: list[Any] = []

    def sample_values(state: State, actions: list[Any], alive: list[int], me: int, mine: Policy, theirs: Policy,
                      odds: MatchOdds, values: list[list[float]]) -> None:  # fmt: skip
        seen.append(mine)
        third = mine is search_bot.PORTFOLIO[2]
        for i in alive:
            values[i].append({0: 0.6, 1: 0.9 if third else 0.5}.get(i, 0.1))

    monkeypatch.setattr(search_bot, "sample_values", sample_values)
    answer = searcher.choose(request)
    assert answer == legal[1 if continuations == "all" else 0]
    assert set(map(id, seen)) == set(map(id, searcher.continuations))  # every continuation, on the same samples


@pytest.mark.parametrize("option", ["model", "koikoi", "rollout_koikoi", "opponent_koikoi", "continuations"])
def test_an_unknown_option_value_is_an_error_not_a_default(option: str) -> None:
    with pytest.raises(ValueError, match=f"^{option} is one of .*, not 'auto'$"):
        search_bot.Searcher(100, None, 0, **{option: "auto"})


def test_the_portfolio_is_an_option() -> None:
    assert len(search_bot.Searcher(100, None, 0, continuations="all").continuations) == 5
    assert len(search_bot.Searcher(100, None, 0).continuations) == 1  # the default: the greedy continuation
    assert len(set(search_bot.PORTFOLIO)) == len(search_bot.PORTFOLIO)
    assert all(p.valuation is not None for p in search_bot.PORTFOLIO)


def test_the_learned_continuation_is_an_option() -> None:
    searcher = search_bot.Searcher(100, None, 0, continuations="learned")
    assert searcher.continuations == searcher.after_call == (searcher.mine,)
    assert searcher.mine.learned is learned_play()  # the shipped weights
    assert searcher.mine.koikoi is search_bot.OWN_KOIKOI["cautious"].koikoi  # its koi-koi rule is unchanged
    never = search_bot.Searcher(100, None, 0, rollout_koikoi="never", continuations="learned")
    assert never.mine.learned is learned_play() and never.mine.koikoi is search_bot.OWN_KOIKOI["never"].koikoi
    assert search_bot.Searcher(100, None, 0).mine.learned is None  # the default: greedy's card play


@pytest.mark.parametrize("continuations", ["all", "learned"])
def test_it_plays_whole_matches_with_other_continuations(referee_exe: Path, continuations: str) -> None:
    search = f"{sys.executable} {BOT} --ms 30 --seed 1 --continuations {continuations}"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
    results = play(referee_exe, [search, greedy], "--rules", "nintendo", "--rounds", "2", "--seed", "7")
    results += play(referee_exe, [greedy, search], "--rules", "nintendo", "--rounds", "2", "--seed", "7")
    for result in results:
        assert result["forfeit"] is None
        assert "search" in result["names"]


@pytest.mark.parametrize("continuations", ["greedy", "all"])
def test_with_the_portfolio_a_koikoi_call_is_worth_its_best_continuation(monkeypatch: pytest.MonkeyPatch,
                                                                         continuations: str) -> None:  # fmt: skip
    # After the call, the greedy heuristic's own koi-koi rule loses against one racer and stopping at the next yaku
    # wins against every opponent: with the portfolio the call is made, with the greedy continuation alone it is not.
    def values_against(state: State, action: Any, me: int, mine: Policy, opponents: list[Any],
                       odds: MatchOdds) -> list[float]:  # fmt: skip
        cashes = mine is search_bot.OWN_KOIKOI["never"]
        return [1.0 if cashes or j != 2 else 0.0 for j in range(len(opponents))]

    monkeypatch.setattr(search_bot, "values_against", values_against)
    state, searcher = koikoi_decision(8, continuations)
    assert len(searcher.after_call) == (len(search_bot.KOIKOI_PORTFOLIO) if continuations == "all" else 1)
    assert searcher.choose(koikoi_request(state)) == {"koikoi": continuations == "all"}
