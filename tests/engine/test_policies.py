"""The koi-koi rules of the policy family: a cashing rule stops exactly where stopping wins the match. A rollout
plays its round to the end as the policies play it move by move, and deals no next round."""

from __future__ import annotations

import pytest

from referee.engine import KOIKOI, PRESETS, Phase, State, apply, legal_actions, new_match, score
from referee.engine.policies import GREEDY_POLICY, KOIKOI_RULES, Policy, bold, cashing, play_round, stop_wins
from referee.engine.rules import rules_from_dict


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
