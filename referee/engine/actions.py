"""The actions of the game: :class:`Action` and its kinds, the :class:`Phase` that asks for one, and the tables of
every PLAY and CHOOSE action, built once (the state machine's hot path takes its actions from them rather than
building new ones)."""

from __future__ import annotations

from enum import IntEnum
from typing import Final, NamedTuple

from referee.engine import cards as C
from referee.engine.cards import Card, Mask


class Phase(IntEnum):
    """The decision that is due, or the end of the match."""

    PLAY = 0  # hand step: play a hand card (and name the capture when two field cards match)
    DRAW_CHOICE = 1  # the drawn card matched two field cards: choose one
    KOIKOI = 2  # yaku made: stop or koi-koi
    MATCH_OVER = 3


class ActionKind(IntEnum):
    """The kinds of action."""

    PLAY = 0
    CHOOSE = 1
    STOP = 2
    KOIKOI = 3


# Module-level aliases of enum members: enum attribute lookups are slow on the hot path. Final: a compiled build
# reads these (and the tables below) as C constants, not from the module's dict.
_AK_PLAY: Final = ActionKind.PLAY
_AK_CHOOSE: Final = ActionKind.CHOOSE
_AK_STOP: Final = ActionKind.STOP
_AK_KOIKOI: Final = ActionKind.KOIKOI


class Action(NamedTuple):
    """One action. ``card``: the hand card played (PLAY) or the drawn card (CHOOSE); ``target``: the field card
    chosen when there is a choice, else -1. Actions sort by kind, card, target."""

    kind: ActionKind
    card: Card = -1
    target: Card = -1

    def __str__(self) -> str:
        if self.kind is _AK_PLAY:
            tail = f" capture {C.CARD_IDS[self.target]}" if self.target >= 0 else ""
            return f"play {C.CARD_IDS[self.card]}{tail}"
        if self.kind is _AK_CHOOSE:
            return f"capture {C.CARD_IDS[self.target]}"
        return "koi-koi" if self.kind is _AK_KOIKOI else "stop"


STOP: Final = Action(_AK_STOP)
KOIKOI: Final = Action(_AK_KOIKOI)

PLAY_ACTIONS: Final[tuple[tuple[Action, ...], ...]] = tuple(
    tuple(Action(_AK_PLAY, c, t) for t in range(-1, 48)) for c in range(48)
)
"""Every PLAY action, built once: ``PLAY_ACTIONS[card][target + 1]``."""
CHOOSE_ACTIONS: Final[tuple[tuple[Action, ...], ...]] = tuple(
    tuple(Action(_AK_CHOOSE, c, t) for t in range(48)) for c in range(48)
)
"""Every CHOOSE action, built once: ``CHOOSE_ACTIONS[card][target]``."""


def _month_actions(month: int, hand_nibble: int, field_nibble: int, choose3: bool) -> tuple[Action, ...]:
    """The PLAY actions of the hand cards of one month, given that month's hand and field cards."""
    out: list[Action] = []
    targets = [month * 4 + i for i in range(4) if field_nibble >> i & 1]
    for i in range(4):
        if not hand_nibble >> i & 1:
            continue
        c = month * 4 + i
        if len(targets) == 2 or (len(targets) == 3 and choose3):
            out.extend(PLAY_ACTIONS[c][t + 1] for t in targets)
        else:
            out.append(PLAY_ACTIONS[c][0])
    return tuple(out)


MONTH_PLAYS: Final[tuple[tuple[tuple[Action, ...], ...], ...]] = tuple(
    tuple(_month_actions(i >> 8, i >> 4 & 15, i & 15, choose3) for i in range(12 * 256)) for choose3 in (False, True)
)
"""The PLAY actions of one month's hand cards: ``MONTH_PLAYS[choose3][month * 256 + hand_nibble * 16 +
field_nibble]`` (``choose3``: a card matching three field cards names the one it captures)."""
NIBBLE_LOW: Final = 0x111111111111
"""Bit 0 of each month's four bits of a mask."""


def months_of(mask: Mask) -> Mask:
    """All four cards of every month that ``mask`` holds a card of."""
    return ((mask | mask >> 1 | mask >> 2 | mask >> 3) & NIBBLE_LOW) * 15
