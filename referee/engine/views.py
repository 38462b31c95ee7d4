"""What a seat may know: the only code that reads hidden cards on a player's behalf.

:func:`observe` builds a seat's view of a state; :func:`visible_event` turns a full-information event into what that
seat may see of it. Both take the seat explicitly, and neither ever copies the opponent's hand or the stock order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.engine import cards as C
from referee.engine.cards import Mask
from referee.engine.events import (
    Draw,
    DrawCapture,
    Event,
    HandYakuMade,
    KoikoiDecision,
    MatchEnd,
    Misdeal,
    Play,
    RoundEnd,
    RoundStart,
    YakuMade,
)
from referee.engine.state import Action, Phase, State, legal_actions
from referee.engine.yaku import Score, score

DECISIONS = {Phase.PLAY: "play", Phase.DRAW_CHOICE: "capture", Phase.KOIKOI: "koikoi"}
"""The wire name of the decision due in each phase."""


@dataclass(frozen=True, slots=True)
class View:
    """Everything one seat may know about a match position. Seats are 0 and 1."""

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

    def to_json(self) -> dict[str, Any]:
        """Wire form: card ids, and seats numbered 1 and 2 (per-seat pairs are in seat order)."""
        return {
            "seat": self.seat + 1,
            "round": self.round,
            "rounds": self.rounds,
            "dealer": self.dealer + 1,
            "leader": self.leader + 1,
            "turn": self.turn,
            "to_move": None if self.to_move is None else self.to_move + 1,
            "decision": self.decision,
            "hand": C.ids_of(self.hand),
            "field": C.ids_of(self.field),
            "captured": [C.ids_of(self.captured[0]), C.ids_of(self.captured[1])],
            "opponent_hand_size": self.opponent_hand_size,
            "stock_size": self.stock_size,
            "drawn": C.CARD_IDS[self.drawn] if self.drawn >= 0 else None,
            "scores": list(self.scores),
            "koikoi_calls": list(self.koikoi_calls),
            "yaku": [self.yaku[0].to_json(), self.yaku[1].to_json()],
        }


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
        yaku=(score(state.captured[0], rules, state.koikoi[0]), score(state.captured[1], rules, state.koikoi[1])),
        legal=tuple(legal_actions(state)) if mine else (),
    )


def visible_event(event: Event, seat: int) -> dict[str, Any]:
    """What ``seat`` may see of ``event``, in wire form (card ids, seats 1 and 2)."""
    if isinstance(event, RoundStart):
        return {
            "event": "round_start",
            "round": event.round,
            "dealer": event.dealer + 1,
            "leader": event.leader + 1,
            "hand": C.ids_of(event.hands[seat]),
            "field": C.ids_of(event.field),
            "opponent_hand_size": event.hands[1 - seat].bit_count(),
            "stock_size": len(event.stock),
        }
    if isinstance(event, Misdeal):
        return {"event": "misdeal", "round": event.round, "reason": event.reason, "field": C.ids_of(event.field)}
    return public_event(event)


def public_event(event: Event) -> dict[str, Any]:
    """The wire form of an event that holds no hidden card (everything but deals)."""
    if isinstance(event, Play):
        return {"event": "play", "seat": event.seat + 1, "card": C.CARD_IDS[event.card],
                "captured": C.ids_of(event.captured)}  # fmt: skip
    if isinstance(event, Draw):
        return {"event": "draw", "seat": event.seat + 1, "card": C.CARD_IDS[event.card],
                "captured": C.ids_of(event.captured), "choice": event.choice}  # fmt: skip
    if isinstance(event, DrawCapture):
        return {"event": "draw_capture", "seat": event.seat + 1, "card": C.CARD_IDS[event.card],
                "captured": C.ids_of(event.captured)}  # fmt: skip
    if isinstance(event, YakuMade):
        return {"event": "yaku", "seat": event.seat + 1, "points": event.points, "yaku": list(event.yaku),
                "last_turn": event.last_turn}  # fmt: skip
    if isinstance(event, KoikoiDecision):
        return {"event": "koikoi", "seat": event.seat + 1, "koikoi": event.koikoi, "calls": event.calls}
    if isinstance(event, HandYakuMade):
        return {"event": "hand_yaku", "seat": event.seat + 1, "name": event.name, "points": event.points}
    if isinstance(event, RoundEnd):
        return {
            "event": "round_end", "round": event.round,
            "winner": None if event.winner is None else event.winner + 1,
            "points": event.points, "reason": event.reason,
            "yaku": [{"name": n, "points": p} for n, p in event.yaku],
            "koikoi_calls": list(event.koikoi_calls), "scores": list(event.scores),
        }  # fmt: skip
    if isinstance(event, MatchEnd):
        return {"event": "match_end", "winner": None if event.winner is None else event.winner + 1,
                "scores": list(event.scores), "rounds": event.rounds, "reason": event.reason}  # fmt: skip
    raise TypeError(f"not a public event: {event!r}")


def full_event(event: Event) -> dict[str, Any]:
    """The wire form of an event with full information (for replays, never for a seat)."""
    if isinstance(event, RoundStart | Misdeal):
        d: dict[str, Any] = {"event": "round_start" if isinstance(event, RoundStart) else "misdeal",
                             "round": event.round}  # fmt: skip
        if isinstance(event, RoundStart):
            d.update(dealer=event.dealer + 1, leader=event.leader + 1)
        else:
            d["reason"] = event.reason
        d.update(
            hands=[C.ids_of(event.hands[0]), C.ids_of(event.hands[1])],
            field=C.ids_of(event.field),
            stock=[C.CARD_IDS[c] for c in event.stock],
        )
        return d
    return public_event(event)
