"""What happens in a match, as events with full information.

Events are plain slotted records (not frozen, for speed on the match loop's hot path): treat them as read-only. The
two of every turn (:class:`Play`, :class:`Draw`) write out their ``__init__``: a compiled build makes it native,
where a dataclass's generated one would run as interpreted code.

:func:`referee.engine.apply` records the events of each step in ``state.events``. Events carry hidden cards (hands,
stock order); :func:`referee.engine.views.visible_event` is the only function that turns one into what a seat may see:
a deal becomes a :class:`SeatRoundStart` or :class:`SeatMisdeal`, every other event is public as it is. Seats are 0
and 1 here; :mod:`referee.protocol` renumbers them for the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.engine.cards import Card, Mask


@dataclass(slots=True)
class Misdeal:
    """A deal thrown in and dealt again; ``reason``: field_four, field_three (three or four cards of a month on
    the field), field_four_pairs, hand_four, hand_yaku_both."""

    round: int
    reason: str
    hands: tuple[Mask, Mask]
    field: Mask
    stock: tuple[Card, ...]


@dataclass(slots=True)
class RoundStart:
    """A round dealt: both hands, the field and the stock order (first drawn first)."""

    round: int
    dealer: int
    leader: int
    hands: tuple[Mask, Mask]
    field: Mask
    stock: tuple[Card, ...]


@dataclass(slots=True)
class HandYakuMade:
    """An opening hand that scores at once (teshi, kuttsuki); the round ends."""

    seat: int
    name: str
    points: int


@dataclass(slots=True)
class Play:
    """The hand step: ``card`` played; ``captured`` holds it and what it took (0: it stayed on the field)."""

    seat: int
    card: Card
    captured: Mask

    def __init__(self, seat: int, card: Card, captured: Mask) -> None:  # written out: compiled, it is native
        self.seat = seat
        self.card = card
        self.captured = captured

    def __reduce__(self) -> tuple[type[Play], tuple[Any, ...]]:
        """Pickle and copy by the fields (a compiled build has no default way for a class that writes out its
        ``__init__``)."""
        return Play, (self.seat, self.card, self.captured)


@dataclass(slots=True)
class Draw:
    """The draw step: ``card`` turned over; ``choice`` when it matches two field cards and the player must choose."""

    seat: int
    card: Card
    captured: Mask
    choice: bool = False

    def __init__(self, seat: int, card: Card, captured: Mask, choice: bool = False) -> None:  # as Play's
        self.seat = seat
        self.card = card
        self.captured = captured
        self.choice = choice

    def __reduce__(self) -> tuple[type[Draw], tuple[Any, ...]]:
        """Pickle and copy by the fields (as :class:`Play`)."""
        return Draw, (self.seat, self.card, self.captured, self.choice)


@dataclass(slots=True)
class DrawCapture:
    """The player's choice for a drawn card that matched two field cards."""

    seat: int
    card: Card
    captured: Mask

    def __init__(self, seat: int, card: Card, captured: Mask) -> None:  # as Play's
        self.seat = seat
        self.card = card
        self.captured = captured

    def __reduce__(self) -> tuple[type[DrawCapture], tuple[Any, ...]]:
        """Pickle and copy by the fields (a compiled build has no default way for a class that writes out its
        ``__init__``)."""
        return DrawCapture, (self.seat, self.card, self.captured)


@dataclass(slots=True)
class YakuMade:
    """After both steps the player's yaku rose: ``points`` is the yaku total, ``yaku`` the names held."""

    seat: int
    points: int
    yaku: tuple[str, ...]
    last_turn: bool


@dataclass(slots=True)
class KoikoiDecision:
    """The player's answer to the choice: ``koikoi`` True to play on, False to stop."""

    seat: int
    koikoi: bool
    calls: int


@dataclass(slots=True)
class RoundEnd:
    """A round's result. ``winner`` None: nobody scored. ``reason``: stop, auto_stop (a yaku on the last turn, or
    after the round's last koi-koi call allowed), exhausted, teshi, kuttsuki."""

    round: int
    winner: int | None
    points: int
    reason: str
    yaku: tuple[tuple[str, int], ...]
    koikoi_calls: tuple[int, int]
    scores: tuple[int, int]


@dataclass(slots=True)
class MatchEnd:
    """The match result. ``winner`` None: a draw. ``reason``: rounds (all played) or broke (a player ran out)."""

    winner: int | None
    scores: tuple[int, int]
    rounds: int
    reason: str


Event = (
    Misdeal | RoundStart | HandYakuMade | Play | Draw | DrawCapture | YakuMade | KoikoiDecision | RoundEnd | MatchEnd
)
"""Any event."""


@dataclass(slots=True)
class SeatRoundStart:
    """A round dealt, as one seat sees it: its own hand, the field, and counts of the hidden cards."""

    round: int
    dealer: int
    leader: int
    hand: Mask
    field: Mask
    opponent_hand_size: int
    stock_size: int


@dataclass(slots=True)
class SeatMisdeal:
    """A deal thrown in, as a seat sees it: the reason and the field (no hand, no stock)."""

    round: int
    reason: str
    field: Mask


PublicEvent = HandYakuMade | Play | Draw | DrawCapture | YakuMade | KoikoiDecision | RoundEnd | MatchEnd
"""An event that holds no hidden card: every seat sees it as it is."""

SeatEvent = SeatRoundStart | SeatMisdeal | PublicEvent
"""What a seat may see of an event (:func:`referee.engine.views.visible_event`)."""
