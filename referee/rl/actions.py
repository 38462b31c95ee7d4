"""The fixed action space of the learning environments: every engine action as one index of ``Discrete(242)``.

=========  ==========================================================================================
index      action
=========  ==========================================================================================
0..47      play hand card ``c`` (``c`` = the index): it captures what the rules take, or stays on the field
48..191    play hand card ``c`` naming its capture ``t``: ``48 + 3 * c + k``, where ``t`` is the ``k``-th
           (0..2) of the three other cards of ``c``'s month in card order
192..239   capture field card ``t`` with the drawn card (``t`` = index - 192); the drawn card is the one
           pending, so the index names only the target
240        stop
241        koi-koi
=========  ==========================================================================================

Cards are the engine's ints 0..47 (``(month - 1) * 4 + slot``, :data:`referee.engine.CARD_IDS`). The tables
here are built once; :func:`index_of` and :func:`legal_mask` are dictionary look-ups.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from referee.engine import KOIKOI, STOP, Action, ActionKind

N_ACTIONS: Final = 242
"""The size of the action space."""

PLAY_BASE: Final = 0
PLAY_CAPTURE_BASE: Final = 48
CHOOSE_BASE: Final = 192
STOP_INDEX: Final = 240
KOIKOI_INDEX: Final = 241


def _others(c: int) -> list[int]:
    """The three other cards of ``c``'s month, in card order."""
    first = c - c % 4
    return [t for t in range(first, first + 4) if t != c]


def _table() -> dict[Action, int]:
    out: dict[Action, int] = {STOP: STOP_INDEX, KOIKOI: KOIKOI_INDEX}
    for c in range(48):
        out[Action(ActionKind.PLAY, c, -1)] = PLAY_BASE + c
        for k, t in enumerate(_others(c)):
            out[Action(ActionKind.PLAY, c, t)] = PLAY_CAPTURE_BASE + 3 * c + k
            out[Action(ActionKind.CHOOSE, c, t)] = CHOOSE_BASE + t
    return out


INDEX: Final[dict[Action, int]] = _table()
"""The index of every engine action (a capture choice by its target: all drawn cards share the 48 indexes)."""


def index_of(action: Action) -> int:
    """The index of ``action`` in the action space."""
    return INDEX[action]


def describe(index: int) -> str:
    """What an index means, in words (``play pine-crane``, ``capture pine-ribbon`` ...); ``ValueError`` out of
    range."""
    from referee.engine import CARD_IDS

    if not 0 <= index < N_ACTIONS:
        raise ValueError(f"action index {index} is not in 0..{N_ACTIONS - 1}")
    if index < PLAY_CAPTURE_BASE:
        return f"play {CARD_IDS[index]}"
    if index < CHOOSE_BASE:
        c, k = divmod(index - PLAY_CAPTURE_BASE, 3)
        return f"play {CARD_IDS[c]} capture {CARD_IDS[_others(c)[k]]}"
    if index < STOP_INDEX:
        return f"capture {CARD_IDS[index - CHOOSE_BASE]}"
    return "stop" if index == STOP_INDEX else "koi-koi"


def legal_by_index(legal: Iterable[Action]) -> dict[int, Action]:
    """The legal actions of a view keyed by their index (in the engine's sorted order)."""
    table = INDEX
    return {table[a]: a for a in legal}
