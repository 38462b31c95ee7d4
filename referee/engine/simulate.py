"""Simulation for search bots and learning: random playouts from any state, in one call.

States are immutable: :func:`referee.engine.apply` returns a new state and never changes the one it is given, so a
clone of a state is the state itself. ``root = state`` copies nothing, and any number of playouts may start from the
same root, in any order::

    rng = random.Random(7)
    for action in legal_actions(root):
        wins = sum(random_playout(apply(root, action), rng)[0].winner == me for _ in range(100))

In the compiled build the whole playout loop runs in C, without the interpreter between steps, and no step builds
event objects that nobody reads.
"""

from __future__ import annotations

import random
from typing import Final

from referee.engine.state import Phase, State, apply, legal_actions

_OVER: Final = Phase.MATCH_OVER


def random_playout(state: State, rng: random.Random) -> tuple[State, int]:
    """Uniformly random legal actions from ``state`` to the end of the match: the final state and the number of
    decisions made. Deterministic for a given ``rng`` state; ``state`` itself is left as it was. No event is built
    on the way (``apply(..., record=False)``): the final state's ``events`` is empty; its ``winner``, ``scores`` and
    ``history`` tell the result."""
    steps = 0
    while state.phase is not _OVER:
        legal = legal_actions(state)
        state = apply(state, legal[int(rng.random() * len(legal))], record=False)
        steps += 1
    return state, steps
