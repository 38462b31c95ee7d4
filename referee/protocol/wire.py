"""Engine values into ``koikoi/1`` messages: the only code that spells the wire (card ids, seats 1 and 2).

Referee → bot messages are plain dicts built here (a dict and one ``json.dumps`` per line) and written with
:func:`encode`. The engine decides what a seat may see (:func:`referee.engine.observe`,
:func:`referee.engine.visible_event`, seats 0 and 1); the seats become 1 and 2 here, and only here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from referee.engine import (
    CARD_IDS,
    KOIKOI,
    STOP,
    Action,
    ActionKind,
    Draw,
    DrawCapture,
    Event,
    HandYakuMade,
    IllegalActionError,
    KoikoiDecision,
    MatchEnd,
    Misdeal,
    Play,
    PublicEvent,
    RoundEnd,
    RoundStart,
    Rules,
    Score,
    SeatEvent,
    SeatMisdeal,
    SeatRoundStart,
    State,
    UnknownCardError,
    View,
    YakuMade,
    card,
    ids_of,
    visible_event,
)
from referee.protocol.messages import PROTOCOL_VERSION
from referee.records import TimeControl

# ------------------------------------------------------------------------------------- engine values → wire


def wire_seat(seat: int) -> int:
    """The wire number (1 or 2) of engine seat ``seat`` (0 or 1): the one place seats are renumbered."""
    return seat + 1


def _opt_seat(seat: int | None) -> int | None:
    return None if seat is None else seat + 1


# Module-level aliases of enum members: enum attribute lookups are slow on the hot path.
_AK_PLAY, _AK_CHOOSE, _AK_KOIKOI = ActionKind.PLAY, ActionKind.CHOOSE, ActionKind.KOIKOI


def action_json(action: Action) -> dict[str, Any]:
    """An action on the wire: ``{"play": id}``, ``{"play": id, "capture": id}``, ``{"capture": id}`` or
    ``{"koikoi": bool}``."""
    kind, c, target = action
    if kind is _AK_PLAY:
        if target >= 0:
            return {"play": CARD_IDS[c], "capture": CARD_IDS[target]}
        return {"play": CARD_IDS[c]}
    if kind is _AK_CHOOSE:
        return {"capture": CARD_IDS[target]}
    return {"koikoi": kind is _AK_KOIKOI}


def action_from_json(data: Mapping[str, Any], state: State) -> Action:
    """The engine action of a wire form in ``state`` (for a capture the drawn card comes from the state).

    Raises :class:`~referee.engine.IllegalActionError` for a malformed form or an unknown card; legality is
    checked by :func:`referee.engine.apply`.
    """
    try:
        keys = set(data)
        if keys == {"koikoi"} and isinstance(data["koikoi"], bool):
            return KOIKOI if data["koikoi"] else STOP
        if keys == {"play"}:
            return Action(ActionKind.PLAY, card(data["play"]))
        if keys == {"play", "capture"}:
            return Action(ActionKind.PLAY, card(data["play"]), card(data["capture"]))
        if keys == {"capture"}:
            return Action(ActionKind.CHOOSE, state.pending, card(data["capture"]))
    except (UnknownCardError, TypeError) as exc:
        raise IllegalActionError(f"bad action {dict(data)!r}: {exc}") from None
    raise IllegalActionError(f"bad action {dict(data)!r}: expected play, play+capture, capture or koikoi")


def _score_json(sc: Score) -> dict[str, Any]:
    return {
        "yaku": [{"name": y.name.value, "points": y.points, "cards": y.card_ids()} for y in sc.yaku],
        "total": sc.total,
    }


def view_json(view: View) -> dict[str, Any]:
    """A seat's view on the wire: card ids, seats 1 and 2 (pairs are in seat order)."""
    return {
        "seat": view.seat + 1,
        "round": view.round,
        "rounds": view.rounds,
        "dealer": view.dealer + 1,
        "leader": view.leader + 1,
        "turn": view.turn,
        "to_move": _opt_seat(view.to_move),
        "decision": view.decision,
        "hand": ids_of(view.hand),
        "field": ids_of(view.field),
        "captured": [ids_of(view.captured[0]), ids_of(view.captured[1])],
        "opponent_hand_size": view.opponent_hand_size,
        "stock_size": view.stock_size,
        "drawn": CARD_IDS[view.drawn] if view.drawn >= 0 else None,
        "scores": list(view.scores),
        "koikoi_calls": list(view.koikoi_calls),
        "yaku": [_score_json(view.yaku[0]), _score_json(view.yaku[1])],
    }


def event_json(event: SeatEvent) -> dict[str, Any]:
    """The fields of an ``event`` message (all but ``type``) for what a seat sees of an event
    (:func:`referee.engine.visible_event`, or any public event)."""
    if isinstance(event, Play):
        return {"event": "play", "seat": event.seat + 1, "card": CARD_IDS[event.card],
                "captured": ids_of(event.captured)}  # fmt: skip
    if isinstance(event, Draw):
        return {"event": "draw", "seat": event.seat + 1, "card": CARD_IDS[event.card],
                "captured": ids_of(event.captured), "choice": event.choice}  # fmt: skip
    if isinstance(event, DrawCapture):
        return {"event": "draw_capture", "seat": event.seat + 1, "card": CARD_IDS[event.card],
                "captured": ids_of(event.captured)}  # fmt: skip
    if isinstance(event, YakuMade):
        return {"event": "yaku", "seat": event.seat + 1, "points": event.points, "yaku": list(event.yaku),
                "last_turn": event.last_turn}  # fmt: skip
    if isinstance(event, KoikoiDecision):
        return {"event": "koikoi", "seat": event.seat + 1, "koikoi": event.koikoi, "calls": event.calls}
    if isinstance(event, HandYakuMade):
        return {"event": "hand_yaku", "seat": event.seat + 1, "name": event.name, "points": event.points}
    if isinstance(event, RoundEnd):
        return {
            "event": "round_end", "round": event.round, "winner": _opt_seat(event.winner),
            "points": event.points, "reason": event.reason,
            "yaku": [{"name": n, "points": p} for n, p in event.yaku],
            "koikoi_calls": list(event.koikoi_calls), "scores": list(event.scores),
        }  # fmt: skip
    if isinstance(event, MatchEnd):
        return {"event": "match_end", "winner": _opt_seat(event.winner), "scores": list(event.scores),
                "rounds": event.rounds, "reason": event.reason}  # fmt: skip
    if isinstance(event, SeatRoundStart):
        return {
            "event": "round_start", "round": event.round, "dealer": event.dealer + 1, "leader": event.leader + 1,
            "hand": ids_of(event.hand), "field": ids_of(event.field),
            "opponent_hand_size": event.opponent_hand_size, "stock_size": event.stock_size,
        }  # fmt: skip
    if isinstance(event, SeatMisdeal):
        return {"event": "misdeal", "round": event.round, "reason": event.reason, "field": ids_of(event.field)}
    raise TypeError(f"not an event a seat may see: {event!r}")


def full_event_json(event: Event) -> dict[str, Any]:
    """An event with full information (both hands, the stock order): the replay's form, never sent to a seat."""
    if isinstance(event, RoundStart | Misdeal):
        d: dict[str, Any] = {"event": "round_start" if isinstance(event, RoundStart) else "misdeal",
                             "round": event.round}  # fmt: skip
        if isinstance(event, RoundStart):
            d.update(dealer=event.dealer + 1, leader=event.leader + 1)
        else:
            d["reason"] = event.reason
        d.update(
            hands=[ids_of(event.hands[0]), ids_of(event.hands[1])],
            field=ids_of(event.field),
            stock=[CARD_IDS[c] for c in event.stock],
        )
        return d
    return event_json(event)


# -------------------------------------------------------------------------------------------- builders


def _handshake(
    kind: str, seat: int, rules: Rules, match_id: str, time: TimeControl, index: int
) -> dict[str, Any]:
    if seat not in (0, 1):
        raise ValueError("seat must be the engine seat 0 or 1")
    return {
        "type": kind,
        "protocol": PROTOCOL_VERSION,
        "seat": wire_seat(seat),
        "match": {"id": match_id, "rounds": rules.rounds, "index": index},
        "rules": rules.to_dict(),
        "time": time.to_json(),
    }


def hello_message(
    seat: int, rules: Rules, match_id: str, time: TimeControl, *, index: int = 1
) -> dict[str, Any]:
    """The ``hello`` for engine seat ``seat`` (0 or 1): the first message to a new process."""
    return _handshake("hello", seat, rules, match_id, time, index)


def new_match_message(
    seat: int, rules: Rules, match_id: str, time: TimeControl, *, index: int
) -> dict[str, Any]:
    """The ``new_match`` for engine seat ``seat``: the ``index``-th match (from 1) on a running process."""
    return _handshake("new_match", seat, rules, match_id, time, index)


def event_message(event: Event, seat: int) -> dict[str, Any]:
    """The ``event`` message of ``event`` for engine seat ``seat``, filtered by :func:`visible_event`."""
    msg: dict[str, Any] = {"type": "event"}
    msg.update(event_json(visible_event(event, seat)))
    return msg


def request_message(request_id: int, view: View, move_ms: int, bank_ms: int) -> dict[str, Any]:
    """The ``request`` of decision ``request_id`` for the seat of ``view`` (``observe(state, seat)``).

    ``legal`` comes from ``view.legal`` (empty unless that seat is to move, which is a caller bug).
    """
    if not view.legal or view.decision is None:
        raise ValueError("the view's seat has no decision due")
    return {
        "type": "request",
        "id": request_id,
        "decision": view.decision,
        "view": view_json(view),
        "legal": [action_json(a) for a in view.legal],
        "time": {"move_ms": move_ms, "bank_ms": bank_ms},
    }


def public_event_message(event: PublicEvent) -> dict[str, Any]:
    """The ``event`` message of an event that holds no hidden card: the same for both seats (built once)."""
    msg: dict[str, Any] = {"type": "event"}
    msg.update(event_json(event))
    return msg


def full_event_message(event: Event) -> dict[str, Any]:
    """An event line with full information (both hands, the stock order): the replay's form, never for a seat."""
    msg: dict[str, Any] = {"type": "event"}
    msg.update(full_event_json(event))
    return msg


def error_message(message: str) -> dict[str, Any]:
    """The ``error`` message sent before a forfeit."""
    return {"type": "error", "message": message}


def bye_message() -> dict[str, Any]:
    """The ``bye`` message: the referee is done with the process."""
    return {"type": "bye"}


def hello_answer(name: str, version: str | None = None) -> dict[str, Any]:
    """A seat's answer to ``hello`` (what a bot writes; a person's or a scripted seat's is built here)."""
    msg: dict[str, Any] = {"type": "hello", "name": name}
    if version is not None:
        msg["version"] = version
    return msg


def action_answer(request_id: int, action: Mapping[str, Any]) -> dict[str, Any]:
    """A seat's answer to request ``request_id``: the ``action`` message carrying the action object ``action``."""
    return {"type": "action", "id": request_id, "action": dict(action)}


_dumps = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode


def encode(msg: Mapping[str, Any] | BaseModel) -> bytes:
    """One compact JSON line (ASCII, hence UTF-8) ending in ``\\n``."""
    if isinstance(msg, BaseModel):
        return msg.model_dump_json().encode() + b"\n"
    return _dumps(msg).encode() + b"\n"
