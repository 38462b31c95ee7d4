"""Simulation: states shared as clones, ``apply(record=False)`` and random playouts."""

from __future__ import annotations

import random

import pytest

from referee.engine import PRESETS, State, apply, legal_actions, new_match
from referee.engine.simulate import random_playout
from tests.helpers import random_match

PRESET_NAMES = sorted(PRESETS)


def everything_but_events(state: State) -> dict[str, object]:
    names = [n for n in dir(state) if not n.startswith("_") and not callable(getattr(state, n)) and n != "events"]
    assert {"hands", "field", "stock", "captured", "scores", "history", "winner"} <= set(names)
    return {name: getattr(state, name) for name in names}


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_unrecorded_steps_reach_the_same_states_without_events(name: str) -> None:
    for seed in range(15):
        recorded = quiet = new_match(PRESETS[name], seed)
        rng = random.Random(seed)
        while not recorded.is_over:
            action = rng.choice(legal_actions(recorded))
            recorded, quiet = apply(recorded, action), apply(quiet, action, record=False)
            assert recorded.events and quiet.events == ()
            assert everything_but_events(quiet) == everything_but_events(recorded)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_playout_ends_the_match_and_leaves_its_root_alone(name: str) -> None:
    root = new_match(PRESETS[name], 3)
    for _ in range(5):
        root = apply(root, legal_actions(root)[-1])
    before = everything_but_events(root), root.events
    ends = [random_playout(root, random.Random(seed)) for seed in range(20)]
    assert (everything_but_events(root), root.events) == before
    for end, steps in ends:
        assert end.is_over and end.winner in (0, 1, None) and steps > 0
        assert len(end.history) >= root.round
    again = [random_playout(root, random.Random(seed)) for seed in range(20)]
    assert [(e.scores, e.history, n) for e, n in again] == [(e.scores, e.history, n) for e, n in ends]
    assert len({(e.scores, n) for e, n in ends}) > 1  # the seeds lead to different games


def test_a_playout_from_a_finished_match_makes_no_step() -> None:
    state = new_match(PRESETS["cardavia"], 1)
    end, steps = random_playout(state, random.Random(1))
    assert random_playout(end, random.Random(2)) == (end, 0)
    assert steps > 0


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_step_that_ends_a_round_without_dealing_leaves_the_match_between_rounds(name: str) -> None:
    ends = 0
    for seed in range(12):
        for state, action in random_match(PRESETS[name], seed, seed):
            if action is None:
                break
            dealt, kept = apply(state, action, record=False), apply(state, action, record=False, deal=False)
            ends += len(dealt.history) > len(state.history)
            if dealt.round == state.round:  # no round ended, or the match did: nothing to deal, the same state
                assert everything_but_events(kept) == everything_but_events(dealt)
            else:
                # the round's result as dealing records it; dealing may then end more rounds with hand yaku
                assert dealt.history[: len(kept.history)] == kept.history == (*state.history, kept.history[-1])
                assert all(r.reason in ("teshi", "kuttsuki") for r in dealt.history[len(kept.history):])
                assert kept.round == state.round + 1 and not kept.is_over
                if len(dealt.history) == len(kept.history):
                    for field in ("scores", "dealer", "round", "winner", "is_over", "first_dealer"):
                        assert getattr(kept, field) == getattr(dealt, field), field
                assert (kept.hands, kept.field, kept.stock, kept.captured) == ((0, 0), 0, (), (0, 0))
    assert ends >= 10  # every preset ends rounds by play on these seeds (cardavia: one round a match)
