"""The koi-koi rules of the policy family: a cashing rule stops exactly where stopping wins the match. A rollout
plays its round to the end as the policies play it move by move, and deals no next round."""

from __future__ import annotations

import random

import pytest

from referee.engine import KOIKOI, PRESETS, Phase, State, apply, legal_actions, new_match, score
from referee.engine.policies import (
    GREEDY_POLICY,
    KOIKOI_RULES,
    VALUATIONS,
    PlayCheck,
    Policy,
    bold,
    cashing,
    play_round,
    stop_wins,
)
from referee.engine.rules import Rules, rules_from_dict


def koikoi_choices(rules_name: str, rounds: int, matches: int) -> list[State]:
    """Every koi-koi choice in ``matches`` matches of the greedy heuristic against a bold caller."""
    rules = rules_from_dict({"base": rules_name, "rounds": rounds})
    found = []
    for seed in range(matches):
        state = new_match(rules, seed)
        while not state.is_over:
            if state.phase is Phase.KOIKOI:
                found.append(state)
            legal = legal_actions(state)
            calls = state.to_move == 1 and state.phase is Phase.KOIKOI and bold(state, 1)
            state = apply(state, KOIKOI if calls else GREEDY_POLICY.act(state, legal))
    return found


def test_in_a_one_round_match_every_stop_wins_and_a_cashing_rule_always_stops() -> None:
    # cardavia is a single deal and nobody has points before it: the first stop with a yaku wins the match.
    assert PRESETS["cardavia"].rounds == 1
    choices = koikoi_choices("cardavia", 1, 60)
    assert len(choices) > 20
    for state in choices:
        p = state.to_move
        assert stop_wins(state, p)
        for _, rule in KOIKOI_RULES:
            assert cashing(rule)(state, p) is False
    assert any(bold(state, state.to_move) for state in choices)  # so the cashing rule did change a call


@pytest.mark.parametrize("rules_name", ["koikoi-japan", "guide", "nintendo"])
def test_a_stop_wins_only_in_the_last_round_and_only_with_enough_points(rules_name: str) -> None:
    rules = rules_from_dict({"base": rules_name, "rounds": 3})
    choices = koikoi_choices(rules_name, 3, 40)
    seen = {True: 0, False: 0}
    for state in choices:
        p = state.to_move
        wins = stop_wins(state, p)
        if state.round < rules.rounds:
            assert not wins
            assert cashing(bold)(state, p) == bold(state, p)
            continue
        t = score(state.captured[p], rules, state.koikoi[p], state.koikoi[1 - p]).total
        mine, theirs = state.scores[p] + t, state.scores[1 - p] - (t if rules.transfer_points else 0)
        assert wins == (mine > theirs)
        assert cashing(bold)(state, p) == (bold(state, p) and not wins)
        seen[wins] += 1
    assert seen[True] > 0 and seen[False] > 0


@pytest.mark.parametrize("rules_name", sorted(PRESETS))
def test_a_rollout_ends_the_round_as_the_policies_moves_do_and_deals_nothing(rules_name: str) -> None:
    bolder = Policy(GREEDY_POLICY.valuation, bold)
    for seed in range(10):
        start = new_match(PRESETS[rules_name], seed)
        for _ in range(seed % 4):  # some rollouts from the middle of a round
            if start.is_over:
                break
            start = apply(start, legal_actions(start)[-1])
        if start.is_over:
            continue
        end = play_round(start, 1, bolder, GREEDY_POLICY)
        state = start
        while len(state.history) == len(start.history):
            legal = legal_actions(state)
            mover = bolder if state.to_move == 1 else GREEDY_POLICY
            state = apply(state, legal[0] if len(legal) == 1 else mover.act(state, legal), record=False)
        assert end.history == state.history[: len(end.history)] and len(end.history) == len(start.history) + 1
        assert end.is_over or (end.hands, end.field, end.stock) == ((0, 0), 0, ())


def _with_hand(state: State, hand: int) -> State:
    s = state._copy()
    p = s.to_move
    s.hands = (hand, s.hands[1]) if p == 0 else (s.hands[0], hand)
    return s


CHECK_RULES = [
    *(PRESETS[name] for name in sorted(PRESETS)),
    rules_from_dict({"base": "koikoi-japan", "must_match_from_hand": True}),
    rules_from_dict({"base": "koikoi-japan", "capture_three": "choose"}),
    rules_from_dict({"base": "nintendo", "must_match_from_hand": True, "capture_three": "choose"}),
]


@pytest.mark.parametrize("rules", CHECK_RULES, ids=lambda r: r.name or "custom")
def test_a_play_check_answers_as_the_valuation_chooses_for_any_hand(rules: Rules) -> None:
    """PlayCheck: at each play of random matches, for the real hand and many random hands holding the played card
    (of every size a decision can have), `explains` says whether the valuation's own choice, at that state with that
    hand, is the play; for every valuation of the family. Agreeing and disagreeing hands both come up often."""
    rng = random.Random(7)
    agreed = disagreed = 0
    for seed in range(10):
        state = new_match(rules, seed)
        while not state.is_over:
            legal = legal_actions(state)
            action = rng.choice(legal) if seed % 2 else GREEDY_POLICY.act(state, legal)
            if state.phase is Phase.PLAY:
                p = state.to_move
                hidden = [c for c in range(48) if not (state.field | state.captured[0] | state.captured[1]) >> c & 1
                          and c != action.card]  # fmt: skip
                size = state.hands[p].bit_count()
                hands = [state.hands[p]] + [
                    sum(1 << c for c in rng.sample(hidden, size - 1)) | 1 << action.card for _ in range(12)
                ]
                for valuation in (v for v in VALUATIONS if v is not None):
                    check = PlayCheck(valuation, state, action)
                    for hand in hands:
                        here = _with_hand(state, hand)
                        want = valuation.choose(here, legal_actions(here)) == action
                        assert check.explains(hand) == want, (valuation.name, seed, action, hand)
                        agreed += want
                        disagreed += not want
            state = apply(state, action)
    assert agreed > 500 and disagreed > 500
