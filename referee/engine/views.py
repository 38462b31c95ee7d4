"""What a seat may know: the only code that reads hidden cards on a player's behalf.

:func:`observe` builds a seat's view of a state; :func:`visible_event` turns a full-information event into what that
seat may see of it. Both take the seat explicitly, and neither ever copies the opponent's hand or the stock order.
Both return typed values with seats 0 and 1; :mod:`referee.protocol` alone turns them into wire messages.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from referee.engine.cards import Mask
from referee.engine.events import Event, Misdeal, RoundStart, SeatEvent, SeatMisdeal, SeatRoundStart
from referee.engine.state import Action, Phase, State, legal_actions
from referee.engine.yaku import Score, score

DECISIONS = {Phase.PLAY: "play", Phase.DRAW_CHOICE: "capture", Phase.KOIKOI: "koikoi"}
"""The name of the decision due in each phase (as the protocol and replays spell it)."""


@dataclass(slots=True, init=False, unsafe_hash=True)
class View:
    """Everything one seat may know about a match position. Seats are 0 and 1. Treat as read-only: it is not frozen,
    so that its constructor, written out, is native in the compiled engine (a view is built for every decision)."""

    seat: int
    round: int
    rounds: int
    dealer: int
    leader: int
    turn: int
    to_move: int | None
    decision: str | None
    hand: Mask
    field: Mask
    captured: tuple[Mask, Mask]
    opponent_hand_size: int
    stock_size: int
    drawn: int  # the drawn card awaiting a capture choice, else -1
    scores: tuple[int, int]
    koikoi_calls: tuple[int, int]
    yaku: tuple[Score, Score]
    legal: tuple[Action, ...]

    def __init__(
        self, seat: int, round: int, rounds: int, dealer: int, leader: int, turn: int, to_move: int | None,
        decision: str | None, hand: Mask, field: Mask, captured: tuple[Mask, Mask], opponent_hand_size: int,
        stock_size: int, drawn: int, scores: tuple[int, int], koikoi_calls: tuple[int, int],
        yaku: tuple[Score, Score], legal: tuple[Action, ...],
    ) -> None:  # fmt: skip
        self.seat = seat
        self.round = round
        self.rounds = rounds
        self.dealer = dealer
        self.leader = leader
        self.turn = turn
        self.to_move = to_move
        self.decision = decision
        self.hand = hand
        self.field = field
        self.captured = captured
        self.opponent_hand_size = opponent_hand_size
        self.stock_size = stock_size
        self.drawn = drawn
        self.scores = scores
        self.koikoi_calls = koikoi_calls
        self.yaku = yaku
        self.legal = legal

    def __reduce__(self) -> tuple[type[View], tuple[Any, ...]]:
        """Pickle and copy by the fields (a compiled build has no default way for a class that writes out its
        ``__init__``)."""
        return View, tuple(getattr(self, f.name) for f in fields(self))


def observe(state: State, seat: int) -> View:
    """The view of ``seat`` (0 or 1): its own hand, the public cards, and counts of the hidden ones."""
    if seat not in (0, 1):
        raise ValueError("seat must be 0 or 1")
    over = state.phase is Phase.MATCH_OVER
    mine = not over and state.to_move == seat
    rules = state.rules
    return View(
        seat=seat,
        round=state.round,
        rounds=rules.rounds,
        dealer=state.dealer,
        leader=state.leader,
        turn=state.turn,
        to_move=None if over else state.to_move,
        decision=None if over else DECISIONS[state.phase],
        hand=state.hands[seat],
        field=state.field,
        captured=state.captured,
        opponent_hand_size=state.hands[1 - seat].bit_count(),
        stock_size=state.stock_left,
        drawn=state.pending if state.phase is Phase.DRAW_CHOICE else -1,
        scores=state.scores,
        koikoi_calls=state.koikoi,
        yaku=(
            score(state.captured[0], rules, state.koikoi[0], state.koikoi[1]),
            score(state.captured[1], rules, state.koikoi[1], state.koikoi[0]),
        ),
        legal=tuple(legal_actions(state)) if mine else (),
    )


def visible_event(event: Event, seat: int) -> SeatEvent:
    """What ``seat`` (0 or 1) may see of ``event``: a deal keeps only that seat's hand and counts of the hidden
    cards; every other event is public and comes back as it is."""
    if seat not in (0, 1):
        raise ValueError("seat must be 0 or 1")
    if isinstance(event, RoundStart):
        return SeatRoundStart(
            round=event.round,
            dealer=event.dealer,
            leader=event.leader,
            hand=event.hands[seat],
            field=event.field,
            opponent_hand_size=event.hands[1 - seat].bit_count(),
            stock_size=len(event.stock),
        )
    if isinstance(event, Misdeal):
        return SeatMisdeal(round=event.round, reason=event.reason, field=event.field)
    return event
