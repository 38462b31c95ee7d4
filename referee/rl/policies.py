"""Built-in policies for the environments' opponents and for tests: each takes ``(observation, action_mask)``
(the numbers of :mod:`referee.rl.observation`) and returns an action index, the contract of a trained policy.

- :func:`random_policy`: a uniformly random legal action, from a seeded generator.
- :func:`greedy`: the capture of most value (brights 10, animals 5, ribbons 4, chaff 1), else the least valuable
  discard; the most valuable capture choice; always stop at a yaku.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt

from referee.engine.cards import KINDS, Kind
from referee.rl.actions import CHOOSE_BASE, PLAY_CAPTURE_BASE, STOP_INDEX

Observation = npt.NDArray[np.float32]
"""An observation vector (:mod:`referee.rl.observation`)."""
ActionMask = npt.NDArray[np.int8]
"""An action mask."""
Policy = Callable[[Observation, ActionMask], int]
"""``policy(observation, action_mask) -> action index`` (a legal one)."""

_WORTH: Final = {Kind.BRIGHT: 10.0, Kind.ANIMAL: 5.0, Kind.RIBBON: 4.0, Kind.CHAFF: 1.0}
VALUE: Final[tuple[float, ...]] = tuple(_WORTH[k] for k in KINDS)
"""The greedy policy's value of each card."""


def random_policy(rng: np.random.Generator) -> Policy:
    """A policy that picks a uniformly random legal action with ``rng``."""

    def act(observation: Observation, mask: ActionMask) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(len(legal))])

    return act


def _worth(index: int, observation: Observation) -> float:
    if index < PLAY_CAPTURE_BASE:  # a hand card: it takes its month's field cards, or stays (a discard)
        first = index - index % 4
        matched = [t for t in range(first, first + 4) if observation[48 + t]]
        if not matched:
            return -VALUE[index]
        return VALUE[index] + sum(VALUE[t] for t in matched)
    if index < CHOOSE_BASE:
        c, k = divmod(index - PLAY_CAPTURE_BASE, 3)
        first = c - c % 4
        t = [x for x in range(first, first + 4) if x != c][k]
        return VALUE[c] + VALUE[t]
    if index < STOP_INDEX:
        return VALUE[index - CHOOSE_BASE]
    return 1.0 if index == STOP_INDEX else 0.0


def greedy(observation: Observation, mask: ActionMask) -> int:
    """The greedy policy (see the module documentation)."""
    legal = np.flatnonzero(mask)
    return int(max(legal, key=lambda i: _worth(int(i), observation)))
