"""The C round loop of the compiled engine (``referee/engine/_rollout.c``) plays every round as the engine's own loop
does: from positions of matches of every preset and of rules that move each field a round reads, with every policy
of the family on either seat, the state after the round is the same, field for field. Where it does not know the
rules or a policy, :func:`play_round` falls back to the loop; the pure engine never loads it."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from referee.engine import PRESETS, State, apply, legal_actions, new_match
from referee.engine import policies as P
from referee.engine.rules import (
    CaptureThree,
    KoikoiScoring,
    LastTurn,
    Reopen,
    Rules,
    RulesError,
    SetGrowth,
    TieBreak,
    rules_from_dict,
)
from referee.engine.simulate import MatchOdds, sample_values, values_against
from referee.engine.state import settle
from tests.engine.test_engine_build import COMPILED_BUILD, run_python

FIELDS = (
    "captured", "deal_index", "dealer", "deals", "events", "field", "first_dealer", "hands", "history", "koikoi",
    "last_names", "last_points", "leader", "pending", "phase", "round", "rules", "scores", "seed", "stock",
    "stock_pos", "to_move", "turn", "winner",
)  # fmt: skip
"""Every field of a :class:`State`."""

LEARNED = [P.learned_play(), P.Learned("random", tuple(random.Random(1).uniform(-3, 3) for _ in P.FEATURES))]
FAMILY = (
    [P.Policy(v, rule) for v in P.VALUATIONS for _, rule in P.KOIKOI_RULES]
    + [P.Policy(v, P.cashing(rule)) for v in P.VALUATIONS for _, rule in P.KOIKOI_RULES]
    + [P.Policy(P.GREEDY, rule, play) for play in LEARNED for _, rule in P.KOIKOI_RULES]
    + [P.Policy(None, P.cashing(rule), play) for play in LEARNED for _, rule in P.KOIKOI_RULES]
)
"""Every valuation with every koi-koi rule, plain and cashing, and the learned card play (the shipped weights and
random ones) with each."""

needs_c = pytest.mark.skipif(P._ROLLOUT is None, reason="the C round loop runs in the compiled engine only")


def positions(rules: Rules, at_least: int, seed: int) -> list[State]:
    """Every position of matches of random play (seeded), the matches' last rounds included, until there are
    ``at_least``."""
    rng = random.Random(seed)
    found: list[State] = []
    while len(found) < at_least:
        state = new_match(rules, rng.randrange(1 << 40))
        while not state.is_over:
            found.append(state)
            state = apply(state, rng.choice(legal_actions(state)), record=False)
    return found


def differences(states: list[State], seed: int) -> list[str]:
    """Each position played out by two policies drawn from :data:`FAMILY` (and a seat), both ways; what differs."""
    rng = random.Random(seed)
    out = []
    for state in states:
        mine, theirs, me = rng.choice(FAMILY), rng.choice(FAMILY), rng.randrange(2)
        fast, loop = P.play_round(state, me, mine, theirs), P.play_round_loop(state, me, mine, theirs)
        wrong = [f for f in FIELDS if getattr(fast, f) != getattr(loop, f)]
        if wrong:
            out.append(f"{state!r} ({state.rules.name}), {wrong}: {[getattr(fast, f) for f in wrong]} "
                       f"!= {[getattr(loop, f) for f in wrong]}")  # fmt: skip
    return out


@pytest.mark.skipif(not COMPILED_BUILD, reason="no compiled build installed (KOIKOI_PURE_BUILD or no C compiler)")
def test_the_compiled_engine_rolls_out_in_c_and_the_pure_one_does_not() -> None:
    assert P._ROLLOUT is not None
    assert all(P.rollout_in_c(policy) for policy in FAMILY)
    code = "from referee.engine import policies as p; print(p._ROLLOUT is None, p.rollout_in_c(p.GREEDY_POLICY))"
    assert run_python(code, pure=True) == "True False\n"


@needs_c
def test_the_c_round_loop_plays_the_rounds_and_can_be_turned_off() -> None:
    states = positions(PRESETS["nintendo"], 50, 7)
    greedy = P.GREEDY_POLICY
    before = P._ROLLOUT.played()
    on = [P.play_round(s, 0, greedy, greedy) for s in states]
    assert P._ROLLOUT.played() == before + len(states)
    try:
        P.use_c_round_loop(False)
        assert not P.rollout_in_c(greedy)
        off = [P.play_round(s, 0, greedy, greedy) for s in states]
    finally:
        P.use_c_round_loop(True)
    assert P._ROLLOUT.played() == before + len(states)  # none played in C while it was off
    assert P.rollout_in_c(greedy)
    assert [[getattr(x, f) for f in FIELDS] for x in on] == [[getattr(x, f) for f in FIELDS] for x in off]


@needs_c
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_round_of_every_preset_ends_as_the_engine_loop_ends_it(preset: str) -> None:
    states = positions(PRESETS[preset], 1500, 1)
    assert {s.phase for s in states} >= {P.Phase.PLAY, P.Phase.DRAW_CHOICE, P.Phase.KOIKOI}
    assert differences(states, 2) == []


MOVES: list[tuple[str, list[object]]] = [
    ("capture_three", [CaptureThree.ALL, CaptureThree.CHOOSE]),
    ("must_match_from_hand", [False, True]),
    ("set_growth", list(SetGrowth)),
    ("koikoi_scoring", list(KoikoiScoring)),
    ("reopen", list(Reopen)),
    ("last_turn", list(LastTurn)),
    ("tie_break", list(TieBreak)),
    ("transfer_points", [False, True]),
    ("sake_as_chaff", [False, True]),
    ("koikoi_calls_per_round", [0, 1, 2]),
    ("exhausted_dealer_points", [0, 1, 6]),
    ("double_from", [0, 7, 3]),
    ("double_after_opponent_koikoi", [False, True]),
    ("cherry_viewing_after_koikoi", [0, 3, 5]),
    ("moon_viewing_after_koikoi", [0, 3, 5]),
    ("poetry_and_blue_ribbons", [0, 10]),
    ("poetry_blue_bonus", [0, 2]),
    ("ribbons_extra", [0, 1, 2]),
    ("animals_min", [3, 5]),
    ("chaff_min", [8, 10]),
    ("rounds", [1, 2, 3]),
]
"""Fields that a round reads, and values to move them to."""


def moved_rules(seed: int, count: int) -> list[Rules]:
    """``count`` rule sets: a preset with a few fields of :data:`MOVES` moved at random (the valid ones kept)."""
    rng = random.Random(seed)
    found: list[Rules] = []
    while len(found) < count:
        base = PRESETS[rng.choice(sorted(PRESETS))]
        changes = dict(rng.sample([(k, rng.choice(v)) for k, v in MOVES], 4))
        data = {"base": base.name, **{k: v.value if hasattr(v, "value") else v for k, v in changes.items()}}
        try:
            found.append(rules_from_dict(data))
        except RulesError:
            continue
    return found


@needs_c
def test_rules_that_move_each_field_a_round_reads_end_their_rounds_as_the_engine_loop() -> None:
    states: list[State] = []
    for i, rules in enumerate(moved_rules(3, 40)):
        states += positions(rules, 60, 100 + i)
    assert differences(states, 4) == []


def test_rules_and_policies_it_does_not_know_are_played_by_the_engine_loop() -> None:
    combined = replace(PRESETS["guide"], bright_yaku_combine=True, four_brights_wet=7, three_brights=5)
    assert P._pack_rules(combined) is None
    assert not P.rollout_in_c(P.Policy(P.GREEDY, lambda state, p: True))  # a koi-koi rule outside the family
    odd = P.Policy(P.GREEDY, lambda state, p: state.turn % 2 == 0)
    rng = random.Random(5)
    for state in positions(combined, 300, 6):
        me = rng.randrange(2)
        for mine, theirs in ((odd, P.GREEDY_POLICY), (P.GREEDY_POLICY, P.GREEDY_POLICY)):
            fast, loop = P.play_round(state, me, mine, theirs), P.play_round_loop(state, me, mine, theirs)
            assert [getattr(fast, f) for f in FIELDS] == [getattr(loop, f) for f in FIELDS]


def test_the_koikoi_weights_a_search_draws_from_follow_every_change_of_their_evidence() -> None:
    from referee.engine.opponents import OpponentModel

    model = OpponentModel()
    assert model.koikoi_weights() == model.weights()[1]
    model.settled_koikoi = [0.0, 0.0, 5.0]  # assigned
    assert model.koikoi_weights() == model.weights()[1] != [1 / 3] * 3
    model.current_koikoi[0] = 9.0  # changed in place
    assert model.koikoi_weights() == model.weights()[1]
    assert max(model.koikoi_weights()) == model.koikoi_weights()[0]
    model.new_match()
    assert model.koikoi_weights() == model.weights()[1]
    draws = [model.draw_koikoi(random.Random(k)) for k in range(50)]
    assert draws == [P.KOIKOI_RULES[random.Random(k).choices(range(3), model.weights()[1])[0]][1] for k in range(50)]


def ends_differences(states: list[State], seed: int) -> tuple[list[str], int, int]:
    """Each position's legal actions played out in one call (:func:`round_ends`) by two policies drawn from
    :data:`FAMILY`, against each action applied and its round played by the engine's loop: the round's end (winner,
    points, reason), the match after it (:func:`settle`) and its value (:meth:`MatchOdds.ending` and ``outcome``);
    an action given no end must itself end the round. What differs, and how many ends and root ends were compared."""
    rng = random.Random(seed)
    out: list[str] = []
    compared = at_root = 0
    for state in states:
        if state.is_over:
            continue
        mine, theirs, me = rng.choice(FAMILY), rng.choice(FAMILY), rng.randrange(2)
        odds = MatchOdds(state.rules, {(2, True): 3, (-1, False): 2, (0, True): 1}, 0.5)
        legal = legal_actions(state)
        ends = P.round_ends(state, legal, me, mine, theirs)
        assert ends is not None and len(ends) == len(legal)
        for action, end in zip(legal, ends, strict=True):
            after = apply(state, action, record=False)
            if end is None:
                at_root += 1
                if after.round == state.round and not after.is_over:
                    out.append(f"{state!r} {action}: no end, but the action does not end the round")
                continue
            loop = P.play_round_loop(after, me, mine, theirs)
            last = loop.history[-1]
            got = settle(state.rules, state.scores, state.dealer, state.first_dealer, state.round,
                         end[0] if end[0] >= 0 else None, end[1], end[2])  # fmt: skip
            want = (loop.scores, loop.is_over, loop.winner, loop.dealer)
            if (end[0] if end[0] >= 0 else None, end[1], end[2]) != (last.winner, last.points, last.reason) or (
                got != want or odds.ending(state, end, me) != odds.outcome(loop, me)
            ):
                out.append(f"{state!r} ({state.rules.name}) {action}: {end} {got} != {last} {want}")
            compared += 1
    return out, compared, at_root


@needs_c
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_action_s_round_played_in_one_call_ends_as_the_engine_loop_ends_it(preset: str) -> None:
    wrong, compared, at_root = ends_differences(positions(PRESETS[preset], 1000, 11), 12)
    assert wrong == []
    assert compared > 1000 and at_root > 5


@needs_c
def test_rules_that_move_each_field_end_each_action_s_round_as_the_engine_loop() -> None:
    states: list[State] = []
    for i, rules in enumerate(moved_rules(5, 40)):
        states += positions(rules, 40, 200 + i)
    wrong, compared, _ = ends_differences(states, 13)
    assert wrong == [] and compared > 1000


@needs_c
def test_the_search_s_sample_values_are_those_of_the_engine_loop() -> None:
    """simulate.sample_values (one C call a sample) appends the values the engine's loop gives, action by action."""
    rules = PRESETS["nintendo"]
    odds = MatchOdds(rules, {(3, True): 2, (-2, False): 2, (0, False): 1}, 0.5)
    rng = random.Random(14)
    checked = 0
    for state in positions(rules, 400, 15):
        legal = legal_actions(state)
        if state.is_over or len(legal) < 2:
            continue
        mine, theirs, me = rng.choice(FAMILY), rng.choice(FAMILY), state.to_move
        alive = sorted(rng.sample(range(len(legal)), rng.randint(1, len(legal))))
        values: list[list[float]] = [[] for _ in legal]
        sample_values(state, legal, alive, me, mine, theirs, odds, values)
        want = [[odds.outcome(P.play_round_loop(apply(state, legal[i], record=False), me, mine, theirs), me)]
                if i in alive else [] for i in range(len(legal))]  # fmt: skip
        assert values == want
        checked += 1
    assert checked > 100


@needs_c
@pytest.mark.parametrize("preset", ["nintendo", "koikoi-japan"])
def test_an_action_played_against_several_opponents_in_one_call_has_the_engine_loop_s_values(preset: str) -> None:
    """simulate.values_against (the robust koi-koi call's rollouts: one action, the other seat played by each of
    several policies, in one call) gives the values of the engine's loop, opponent by opponent, koi-koi calls and
    card plays alike."""
    rules = PRESETS[preset]
    odds = MatchOdds(rules, {(4, True): 1, (-3, False): 2, (1, False): 2}, 0.5)
    rng = random.Random(16)
    calls = checked = 0
    for state in positions(rules, 600, 17):
        legal = legal_actions(state)
        if state.is_over or len(legal) < 2:
            continue
        action = rng.choice(legal)
        mine, me = rng.choice(FAMILY), state.to_move
        opponents = rng.sample(FAMILY, rng.randint(1, 8))
        got = values_against(state, action, me, mine, opponents, odds)
        want = [odds.outcome(P.play_round_loop(apply(state, action, record=False), me, mine, rival), me)
                for rival in opponents]  # fmt: skip
        assert got == want
        calls += state.phase is P.Phase.KOIKOI
        checked += 1
    assert checked > 200 and calls > 20
