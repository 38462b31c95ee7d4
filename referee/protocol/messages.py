"""Engine values → ``koikoi/1`` messages: the referee's side of the wire as plain dicts, and the typed
:class:`Request` of a decision.

Seats are 0 and 1 in the engine and 1 and 2 on the wire; they are renumbered here, and only here
(:func:`wire_seat`). What a seat may see is decided by the engine (:func:`referee.engine.observe`,
:func:`referee.engine.visible_event`). Replays use the same shapes, and :func:`full_event_json` for a deal with
full information. The hot path writes the same messages from cached texts (:mod:`referee.protocol.text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.engine import (
    CARD_IDS,
    KOIKOI,
    STOP,
    Action,
    ActionKind,
    IllegalActionError,
    Rules,
    Score,
    State,
    UnknownCardError,
    View,
    card,
    ids_of,
    mask_of_ids,
    visible_event,
)
from referee.engine import events as ev
from referee.protocol.models import PROTOCOL_VERSION
from referee.records import TimeControl


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


def event_json(event: ev.SeatEvent) -> dict[str, Any]:
    """The fields of an ``event`` message (all but ``type``) for what a seat sees of an event
    (:func:`referee.engine.visible_event`, or any public event)."""
    if isinstance(event, ev.Play):
        return {"event": "play", "seat": event.seat + 1, "card": CARD_IDS[event.card],
                "captured": ids_of(event.captured)}  # fmt: skip
    if isinstance(event, ev.Draw):
        return {"event": "draw", "seat": event.seat + 1, "card": CARD_IDS[event.card],
                "captured": ids_of(event.captured), "choice": event.choice}  # fmt: skip
    if isinstance(event, ev.DrawCapture):
        return {"event": "draw_capture", "seat": event.seat + 1, "card": CARD_IDS[event.card],
                "captured": ids_of(event.captured)}  # fmt: skip
    if isinstance(event, ev.YakuMade):
        return {"event": "yaku", "seat": event.seat + 1, "points": event.points, "yaku": list(event.yaku),
                "last_turn": event.last_turn}  # fmt: skip
    if isinstance(event, ev.KoikoiDecision):
        return {"event": "koikoi", "seat": event.seat + 1, "koikoi": event.koikoi, "calls": event.calls}
    if isinstance(event, ev.HandYakuMade):
        return {"event": "hand_yaku", "seat": event.seat + 1, "name": event.name, "points": event.points}
    if isinstance(event, ev.RoundEnd):
        return {
            "event": "round_end", "round": event.round, "winner": _opt_seat(event.winner),
            "points": event.points, "reason": event.reason,
            "yaku": [{"name": n, "points": p} for n, p in event.yaku],
            "koikoi_calls": list(event.koikoi_calls), "scores": list(event.scores),
        }  # fmt: skip
    if isinstance(event, ev.MatchEnd):
        return {"event": "match_end", "winner": _opt_seat(event.winner), "scores": list(event.scores),
                "rounds": event.rounds, "reason": event.reason}  # fmt: skip
    if isinstance(event, ev.SeatRoundStart):
        return {
            "event": "round_start", "round": event.round, "dealer": event.dealer + 1, "leader": event.leader + 1,
            "hand": ids_of(event.hand), "field": ids_of(event.field),
            "opponent_hand_size": event.opponent_hand_size, "stock_size": event.stock_size,
        }  # fmt: skip
    if isinstance(event, ev.SeatMisdeal):
        return {"event": "misdeal", "round": event.round, "reason": event.reason, "field": ids_of(event.field)}
    raise TypeError(f"not an event a seat may see: {event!r}")


def seat_event_from_json(data: Mapping[str, Any]) -> ev.SeatEvent:
    """The engine event of an ``event`` message a seat received (the inverse of :func:`event_json`; seats 1/2
    become 0/1). For bots written in Python that keep an engine-side record of the match. ``ValueError`` for
    anything that is not such a message."""
    try:
        kind = data["event"]
        seat = int(data["seat"]) - 1 if "seat" in data else -1
        if kind in ("play", "draw", "draw_capture"):
            c, took = card(data["card"]), mask_of_ids(data["captured"])
            if kind == "play":
                return ev.Play(seat, c, took)
            if kind == "draw":
                return ev.Draw(seat, c, took, bool(data.get("choice", False)))
            return ev.DrawCapture(seat, c, took)
        if kind == "yaku":
            return ev.YakuMade(seat, int(data["points"]), tuple(data["yaku"]), bool(data["last_turn"]))
        if kind == "koikoi":
            return ev.KoikoiDecision(seat, bool(data["koikoi"]), int(data["calls"]))
        if kind == "hand_yaku":
            return ev.HandYakuMade(seat, str(data["name"]), int(data["points"]))
        if kind == "round_end":
            winner = data["winner"]
            return ev.RoundEnd(
                int(data["round"]), None if winner is None else int(winner) - 1, int(data["points"]),
                str(data["reason"]), tuple((str(y["name"]), int(y["points"])) for y in data["yaku"]),
                (int(data["koikoi_calls"][0]), int(data["koikoi_calls"][1])),
                (int(data["scores"][0]), int(data["scores"][1])),
            )  # fmt: skip
        if kind == "match_end":
            winner = data["winner"]
            return ev.MatchEnd(None if winner is None else int(winner) - 1, (int(data["scores"][0]),
                               int(data["scores"][1])), int(data["rounds"]), str(data["reason"]))  # fmt: skip
        if kind == "round_start":
            return ev.SeatRoundStart(
                int(data["round"]), int(data["dealer"]) - 1, int(data["leader"]) - 1, mask_of_ids(data["hand"]),
                mask_of_ids(data["field"]), int(data["opponent_hand_size"]), int(data["stock_size"]),
            )  # fmt: skip
        if kind == "misdeal":
            return ev.SeatMisdeal(int(data["round"]), str(data["reason"]), mask_of_ids(data["field"]))
    except (KeyError, TypeError, IndexError, UnknownCardError) as exc:
        raise ValueError(f"not a koikoi/1 event: {exc}") from None
    raise ValueError(f"not a koikoi/1 event: {kind!r}")


def full_event_json(event: ev.Event) -> dict[str, Any]:
    """An event with full information (both hands, the stock order): the replay's form, never sent to a seat."""
    if isinstance(event, ev.RoundStart | ev.Misdeal):
        d: dict[str, Any] = {"event": "round_start" if isinstance(event, ev.RoundStart) else "misdeal",
                             "round": event.round}  # fmt: skip
        if isinstance(event, ev.RoundStart):
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


def event_message(event: ev.Event, seat: int) -> dict[str, Any]:
    """The ``event`` message of ``event`` for engine seat ``seat``, filtered by :func:`visible_event`."""
    msg: dict[str, Any] = {"type": "event"}
    msg.update(event_json(visible_event(event, seat)))
    return msg


@dataclass(frozen=True, slots=True)
class Request:
    """A decision due: request ``id`` (numbered by the seat's process, from 1) for the seat of ``view``
    (``observe(state, seat)``), with ``move_ms`` for the move and ``bank_ms`` left in the bank.

    Its ``legal`` actions are ``view.legal``. :meth:`message` is the ``request`` message as a dict; the match
    and a bot seat never build it: :func:`~referee.protocol.text.encode` writes the line from cached texts and
    :func:`~referee.protocol.answers.check_answer` reads the answer against it.
    """

    id: int
    view: View
    move_ms: int
    bank_ms: int

    def __post_init__(self) -> None:
        if not self.view.legal or self.view.decision is None:
            raise ValueError("the view's seat has no decision due")

    @property
    def decision(self) -> str:
        """What is decided: ``play``, ``capture`` or ``koikoi``."""
        decision: str = self.view.decision  # type: ignore[assignment]  # not None: checked at construction
        return decision

    @property
    def legal(self) -> tuple[Action, ...]:
        """The legal actions, in the order of the message's ``legal`` list."""
        return self.view.legal

    def message(self) -> dict[str, Any]:
        """The ``request`` message as a dict (what a seat that reads messages gets; a copy each call)."""
        return {
            "type": "request",
            "id": self.id,
            "decision": self.view.decision,
            "view": view_json(self.view),
            "legal": [action_json(a) for a in self.view.legal],
            "time": {"move_ms": self.move_ms, "bank_ms": self.bank_ms},
        }


class LeanRequestMessage(dict[str, Any]):
    """What ``request_message(..., lean=True)`` returns: a ``request`` without its ``view`` and ``legal``
    objects, which :func:`~referee.protocol.text.encode` writes from ``view`` and
    :func:`~referee.protocol.text.request_legal` reads from it. For callers of that function; the match passes
    a :class:`Request`."""

    __slots__ = ("view",)

    def __init__(self, view: View, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.view = view


def request_message(
    request_id: int, view: View, move_ms: int, bank_ms: int, *, lean: bool = False
) -> dict[str, Any]:
    """The ``request`` of decision ``request_id`` for the seat of ``view``: :meth:`Request.message`, or with
    ``lean`` a :class:`LeanRequestMessage`. Raises ``ValueError`` if that seat has no decision due."""
    request = Request(request_id, view, move_ms, bank_ms)
    if lean:
        time = {"move_ms": move_ms, "bank_ms": bank_ms}
        return LeanRequestMessage(view, {"type": "request", "id": request_id, "decision": view.decision, "time": time})
    return request.message()


def public_event_message(event: ev.PublicEvent) -> dict[str, Any]:
    """The ``event`` message of an event that holds no hidden card: the same for both seats (built once)."""
    msg: dict[str, Any] = {"type": "event"}
    msg.update(event_json(event))
    return msg


def full_event_message(event: ev.Event) -> dict[str, Any]:
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

