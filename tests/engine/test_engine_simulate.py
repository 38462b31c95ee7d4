"""Simulation: states shared as clones, ``apply(record=False)`` and random playouts."""

from __future__ import annotations

import random

import pytest

from referee.engine import PRESETS, State, apply, legal_actions, new_match
from referee.engine.simulate import random_playout

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
