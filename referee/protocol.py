"""The wire format ``koikoi/1``: the only code that turns engine values into messages and bot lines into actions.

Referee → bot messages are plain dicts built by :func:`hello_message`, :func:`new_match_message`,
:func:`event_message`, :func:`request_message`, :func:`error_message` and :func:`bye_message` (the fast path:
a dict and one ``json.dumps`` per line) and written with :func:`encode`. Their models (:data:`RefereeMessage`)
describe them for the JSON Schema and for tests; :func:`validate_referee_message` checks a built dict. The parts
of those messages come from :func:`view_json`, :func:`action_json` and :func:`event_json`; replays use the same
shapes, and :func:`full_event_json` for a deal with full information.

Bot → referee lines go through :func:`check_hello` (the answer to ``hello``) and :func:`parse_answer` then
:func:`legal_action` (an answer to a request; :func:`check_action` does both). Every failure is a
:class:`ProtocolError` whose ``reason`` is the :class:`~referee.records.Failure` recorded for the match: a line
that is not JSON is ``invalid_json``, a malformed message (or one that answers nothing) ``invalid_message``, a
well-formed action that is not legal ``illegal_action``, another protocol version ``protocol_mismatch``.

What a seat may see is decided by the engine (:func:`referee.engine.observe`, :func:`referee.engine.visible_event`),
with seats 0 and 1. The seats become 1 and 2 here, and only here (:func:`wire_seat`).

In three parts: the pydantic models of every message and the JSON Schema; engine values → messages; bot lines →
engine actions, and the protocol errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, StrictBool, TypeAdapter, ValidationError

from referee.engine import (
    CARD_IDS,
    KOIKOI,
    STOP,
    Action,
    ActionKind,
    HandYaku,
    IllegalActionError,
    Rules,
    Score,
    State,
    UnknownCardError,
    View,
    Yaku,
    card,
    ids_of,
    mask_of_ids,
    visible_event,
)
from referee.engine import events as ev
from referee.errors import RefereeError
from referee.records import Failure, TimeControl

__all__ = [
    "NAME_MAX", "PROTOCOL_VERSION", "BotAction", "BotHello", "BotMessage", "ByeMsg", "ErrorMsg", "EventMsg",
    "HelloMsg", "IllegalAction", "InvalidJson", "InvalidMessage", "NewMatchMsg", "ProtocolError",
    "ProtocolMismatch", "RefereeMessage", "RequestMsg", "action_answer", "action_from_json", "action_json",
    "action_text", "answer_index", "bye_message", "check_action", "check_hello", "encode", "error_message",
    "event_json", "event_message", "event_text", "full_event_json", "full_event_message", "hello_answer",
    "hello_message", "json_schema", "legal_action", "legal_index", "legal_text", "new_match_message",
    "parse_answer", "parse_bot_message", "public_event_message", "public_event_text", "request_legal",
    "request_legal_text", "request_message", "schema_text", "seat_event_from_json", "validate_referee_message",
    "view_json", "view_text", "wire_seat",
]  # fmt: skip


# ====================================================================================================
# models of every message, and the JSON Schema


PROTOCOL_VERSION = "koikoi/1"
"""The protocol version sent in ``hello`` and accepted in a bot's ``hello``."""

NAME_MAX = 64
"""The longest bot name (and version string) accepted."""


# ---------------------------------------------------------------------------------------- shared parts

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)

CardId: TypeAlias = Literal[CARD_IDS]  # type: ignore[valid-type]
"""One of the 48 canonical card ids (one shared ``$defs`` entry in the JSON Schema)."""

WireSeat: TypeAlias = Literal[1, 2]
Count = Annotated[int, Field(ge=0)]
Points = int
Cards = list[CardId]


class _Model(BaseModel):
    model_config = _STRICT


class PlayAction(_Model):
    """Play a hand card that matches at most one field card (or none, or three)."""

    play: CardId


class PlayCaptureAction(_Model):
    """Play a hand card that matches two field cards, and name the one it takes."""

    play: CardId
    capture: CardId


class CaptureAction(_Model):
    """The drawn card matched two field cards: name the one it takes."""

    capture: CardId


class KoikoiAction(_Model):
    """After a new yaku: ``true`` plays on (koi-koi), ``false`` stops and scores the round."""

    koikoi: StrictBool


ActionObject = PlayAction | PlayCaptureAction | CaptureAction | KoikoiAction
"""Any action object."""


class TimeControlMsg(_Model):
    """The time control of a match, in milliseconds."""

    startup_ms: Count
    move_ms: Count
    bank_ms: Count


class MatchInfo(_Model):
    """Which match this is: its id, its number of rounds, and its number for this process (from 1)."""

    id: str
    rounds: Annotated[int, Field(ge=1)]
    index: Annotated[int, Field(ge=1)]


class YakuHeld(_Model):
    """One yaku held: name, points, the cards that form it."""

    name: Yaku
    points: Points
    cards: Cards


class ScoreMsg(_Model):
    """A capture pile's yaku and what a stop would score now (``total``)."""

    yaku: list[YakuHeld]
    total: Points


class ViewMsg(_Model):
    """Everything the seat may know (built by ``view_json``). Pairs are indexed by seat (1, 2)."""

    seat: WireSeat
    round: Annotated[int, Field(ge=1)]
    rounds: Annotated[int, Field(ge=1)]
    dealer: WireSeat
    leader: WireSeat
    turn: Count
    to_move: WireSeat | None
    decision: Literal["play", "capture", "koikoi"] | None
    hand: Cards
    field: Cards
    captured: tuple[Cards, Cards]
    opponent_hand_size: Count
    stock_size: Count
    drawn: CardId | None
    scores: tuple[Points, Points]
    koikoi_calls: tuple[Count, Count]
    yaku: tuple[ScoreMsg, ScoreMsg]


class TimeLeftMsg(_Model):
    """The time the bot has for this decision: ``move_ms`` plus what is left in its bank."""

    move_ms: Count
    bank_ms: Count


# ---------------------------------------------------------------------------------------------- events


class _EventBase(_Model):
    type: Literal["event"]


class RoundStartEvent(_EventBase):
    """A round dealt: your hand, the field, and counts of the hidden cards."""

    event: Literal["round_start"]
    round: Annotated[int, Field(ge=1)]
    dealer: WireSeat
    leader: WireSeat
    hand: Cards
    field: Cards
    opponent_hand_size: Count
    stock_size: Count


class MisdealEvent(_EventBase):
    """A deal thrown in and dealt again."""

    event: Literal["misdeal"]
    round: Annotated[int, Field(ge=1)]
    reason: Literal["field_four", "field_three", "field_four_pairs", "hand_four", "hand_yaku_both"]
    field: Cards


class PlayEvent(_EventBase):
    """A hand card played; ``captured`` holds it and what it took (empty: it stayed on the field)."""

    event: Literal["play"]
    seat: WireSeat
    card: CardId
    captured: Cards


class DrawEvent(_EventBase):
    """A card drawn from the stock; ``choice``: it matched two field cards and the player must choose."""

    event: Literal["draw"]
    seat: WireSeat
    card: CardId
    captured: Cards
    choice: StrictBool


class DrawCaptureEvent(_EventBase):
    """The choice made for a drawn card that matched two field cards."""

    event: Literal["draw_capture"]
    seat: WireSeat
    card: CardId
    captured: Cards


class YakuEvent(_EventBase):
    """A player's yaku rose: the yaku total and the names held."""

    event: Literal["yaku"]
    seat: WireSeat
    points: Points
    yaku: list[Yaku]
    last_turn: StrictBool


class KoikoiEvent(_EventBase):
    """A player's answer to the koi-koi choice."""

    event: Literal["koikoi"]
    seat: WireSeat
    koikoi: StrictBool
    calls: Count


class HandYakuEvent(_EventBase):
    """An opening hand that scored at once; the round ends."""

    event: Literal["hand_yaku"]
    seat: WireSeat
    name: HandYaku
    points: Points


class RoundYaku(_Model):
    """One yaku of the round's winner."""

    name: str
    points: Points


class RoundEndEvent(_EventBase):
    """A round's result; ``winner`` null: nobody scored."""

    event: Literal["round_end"]
    round: Annotated[int, Field(ge=1)]
    winner: WireSeat | None
    points: Points
    reason: Literal["stop", "auto_stop", "exhausted", "teshi", "kuttsuki"]
    yaku: list[RoundYaku]
    koikoi_calls: tuple[Count, Count]
    scores: tuple[Points, Points]


class MatchEndEvent(_EventBase):
    """The match result; ``winner`` null: a draw."""

    event: Literal["match_end"]
    winner: WireSeat | None
    scores: tuple[Points, Points]
    rounds: Annotated[int, Field(ge=1)]
    reason: Literal["rounds", "broke"]


EventMsg = Annotated[
    RoundStartEvent | MisdealEvent | PlayEvent | DrawEvent | DrawCaptureEvent | YakuEvent | KoikoiEvent
    | HandYakuEvent | RoundEndEvent | MatchEndEvent,
    Field(discriminator="event"),
]  # fmt: skip
"""Any ``event`` message (discriminated on ``event``)."""


# --------------------------------------------------------------------------------------- referee → bot


_RULES_DOC = (
    "The full rule set, as `koikoi-referee rules PRESET --json` prints it; the fields added after the first koikoi/1 "
    "rule set (PROTOCOL.md lists them) only when they differ from their defaults."
)


class HelloMsg(_Model):
    """The handshake: your seat, the match, the rules and the time control. Answer with a ``hello``."""

    type: Literal["hello"]
    protocol: Literal["koikoi/1"]
    seat: WireSeat
    match: MatchInfo
    rules: dict[str, Any] = Field(description=_RULES_DOC)
    time: TimeControlMsg


class NewMatchMsg(_Model):
    """Another match on the same process: the fields of ``hello``. No reply is expected."""

    type: Literal["new_match"]
    protocol: Literal["koikoi/1"]
    seat: WireSeat
    match: MatchInfo
    rules: dict[str, Any] = Field(description=_RULES_DOC)
    time: TimeControlMsg


class RequestMsg(_Model):
    """A decision is due: answer with an ``action`` carrying this ``id`` and one element of ``legal``."""

    type: Literal["request"]
    id: Annotated[int, Field(ge=1)]
    decision: Literal["play", "capture", "koikoi"]
    view: ViewMsg
    legal: Annotated[list[ActionObject], Field(min_length=1)]
    time: TimeLeftMsg


class ErrorMsg(_Model):
    """Sent (best effort) just before the bot forfeits: what it did wrong."""

    type: Literal["error"]
    message: str


class ByeMsg(_Model):
    """The referee is done with this process: exit."""

    type: Literal["bye"]


RefereeMessage = Annotated[
    HelloMsg | NewMatchMsg | EventMsg | RequestMsg | ErrorMsg | ByeMsg, Field(discriminator="type")
]
"""Any referee → bot message."""


# --------------------------------------------------------------------------------------- bot → referee


_UNSHOWABLE = r"\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
"""Characters a name may not hold: C0 and C1 control characters and DEL, and the bidirectional overrides and
isolates (U+202A..U+202E, U+2066..U+2069), which would make a name shown in a terminal, a report or a page
read as something else. As a regular expression class body, valid in Python, Rust and JSON Schema."""
_UNSHOWABLE_RE = re.compile(f"[{_UNSHOWABLE}]")


class BotHello(_Model):
    """The bot's answer to ``hello``: its name, optionally its version and the protocol it speaks. Neither name
    nor version may hold control characters (C0, DEL, C1) or bidirectional overrides and isolates."""

    type: Literal["hello"]
    name: Annotated[str, Field(min_length=1, max_length=NAME_MAX, pattern=f"^[^{_UNSHOWABLE}]+$")]
    version: Annotated[str, Field(max_length=NAME_MAX, pattern=f"^[^{_UNSHOWABLE}]*$")] | None = None
    protocol: str | None = Field(default=None, description='Must be "koikoi/1" when given.')


class BotAction(_Model):
    """The bot's answer to a ``request``: the request's ``id`` and one element of its ``legal`` list."""

    type: Literal["action"]
    id: int
    action: ActionObject

    def action_json(self) -> dict[str, Any]:
        """The action object as a plain dict, comparable with the elements of ``legal``."""
        return self.action.model_dump()


BotMessage = Annotated[BotHello | BotAction, Field(discriminator="type")]
"""Any bot → referee message."""

_BOT_ADAPTER: TypeAdapter[BotHello | BotAction] = TypeAdapter(BotMessage)
_REFEREE_ADAPTER: TypeAdapter[Any] = TypeAdapter(RefereeMessage)


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every ``koikoi/1`` message, both directions, in one document.

    ``$defs.RefereeToBot`` is any line the referee writes, ``$defs.BotToReferee`` any line a bot may write.
    """
    refs, top = TypeAdapter.json_schemas(
        [("RefereeToBot", "serialization", _REFEREE_ADAPTER), ("BotToReferee", "validation", _BOT_ADAPTER)],
        ref_template="#/$defs/{model}",
    )
    defs: dict[str, Any] = dict(top.get("$defs", {}))
    for (key, _mode), schema in refs.items():
        defs[key] = schema
    defs = _share_card_ids(defs)
    defs["CardId"] = {"description": "A canonical card id.", "enum": list(CARD_IDS), "type": "string"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://koikoi-referee.invalid/schema/koikoi-1.schema.json",
        "title": f"{PROTOCOL_VERSION} messages",
        "description": (
            "One JSON object per line, UTF-8, each way over the bot's stdin/stdout. "
            "RefereeToBot: lines the referee writes; BotToReferee: lines a bot writes."
        ),
        "anyOf": [{"$ref": "#/$defs/RefereeToBot"}, {"$ref": "#/$defs/BotToReferee"}],
        "$defs": dict(sorted(defs.items())),
    }


def _share_card_ids(node: Any) -> Any:
    """``node`` with every inline enum of the 48 card ids replaced by a reference to ``$defs/CardId``."""
    if isinstance(node, dict):
        if node.get("enum") == list(CARD_IDS):
            rest = {k: v for k, v in node.items() if k not in ("enum", "type")}
            return {"$ref": "#/$defs/CardId", **rest}
        return {k: _share_card_ids(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_share_card_ids(v) for v in node]
    return node


def schema_text() -> str:
    """:func:`json_schema` as printed by ``koikoi-referee schema`` and kept in the golden file."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


# ====================================================================================================
# engine values -> messages


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


class _Request(dict[str, Any]):
    """A ``request`` message that remembers its view and its legal list's text, so that :func:`encode` writes it
    from cached texts. A lean one (``request_message(..., lean=True)``) holds no ``view`` and ``legal`` objects:
    only :func:`encode` and :func:`request_legal` read it."""

    __slots__ = ("legal_text", "view")

    def __init__(self, view: View, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.view = view
        self.legal_text = legal_text(view.legal)


def request_legal_text(request: Mapping[str, Any]) -> str:
    """The JSON text of a request's ``legal`` list (built once with a request of :func:`request_message`)."""
    return request.legal_text if type(request) is _Request else _dumps(request["legal"])


_ACTION_OBJECT: dict[Action, dict[str, Any]] = {}


def request_legal(request: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """A request's legal actions as action objects, in order: its ``legal`` list; for a lean request, objects
    shared through a cache (read them, never change them)."""
    if type(request) is not _Request or "legal" in request:
        legal: Sequence[Mapping[str, Any]] = request["legal"]
        return legal
    out: list[Mapping[str, Any]] = []
    for a in request.view.legal:
        obj = _ACTION_OBJECT.get(a)
        if obj is None:
            obj = _ACTION_OBJECT[a] = action_json(a)
        out.append(obj)
    return out


def request_message(
    request_id: int, view: View, move_ms: int, bank_ms: int, *, lean: bool = False
) -> dict[str, Any]:
    """The ``request`` of decision ``request_id`` for the seat of ``view`` (``observe(state, seat)``).

    ``legal`` comes from ``view.legal`` (empty unless that seat is to move, which is a caller bug). A seat may set
    its ``id``; :func:`encode` writes the other fields from ``view``, as they were built. ``lean``: without the
    ``view`` and ``legal`` objects, for a seat that only writes the encoded line (:attr:`Seat.messages
    <referee.seats.base.Seat.messages>` False); :func:`request_legal` gives its legal actions.
    """
    if not view.legal or view.decision is None:
        raise ValueError("the view's seat has no decision due")
    time = {"move_ms": move_ms, "bank_ms": bank_ms}
    if lean:
        return _Request(view, {"type": "request", "id": request_id, "decision": view.decision, "time": time})
    return _Request(view, {
        "type": "request",
        "id": request_id,
        "decision": view.decision,
        "view": view_json(view),
        "legal": [action_json(a) for a in view.legal],
        "time": time,
    })  # fmt: skip


def public_event_message(event: ev.PublicEvent) -> dict[str, Any]:
    """The ``event`` message of an event that holds no hidden card: the same for both seats (built once)."""
    msg: dict[str, Any] = {"type": "event"}
    msg.update(event_json(event))
    return msg


_TURN_TEXT: dict[tuple[Any, ...], str] = {}
_TEXT_CAP = 1 << 16


def public_event_text(event: ev.PublicEvent) -> str:
    """:func:`public_event_message` as compact JSON text (what :func:`encode` writes, without the newline); the
    text of the turn's events (play, draw, draw capture) and of yaku and koi-koi events is built once per
    distinct event."""
    t = type(event)
    e: Any = event
    key: tuple[Any, ...]
    if t is ev.Play or t is ev.Draw or t is ev.DrawCapture:
        key = (t, e.seat, e.card, e.captured, e.choice if t is ev.Draw else False)
    elif t is ev.YakuMade:
        key = (t, e.seat, e.points, e.yaku, e.last_turn)
    elif t is ev.KoikoiDecision:
        key = (t, e.seat, e.koikoi, e.calls)
    else:
        return _dumps(public_event_message(event))
    text = _TURN_TEXT.get(key)
    return text if text is not None else _remember(_TURN_TEXT, key, _dumps(public_event_message(event)))


def event_text(event: ev.Event, seat: int) -> str:
    """:func:`event_message` as compact JSON text (what :func:`encode` writes, without the newline): a deal as
    ``seat`` sees it (:func:`visible_event`) written from cached card-list texts, any other event as
    :func:`public_event_text`."""
    if isinstance(event, ev.RoundStart):
        d: Any = visible_event(event, seat)
        return (
            f'{{"type":"event","event":"round_start","round":{d.round},"dealer":{d.dealer + 1},'
            f'"leader":{d.leader + 1},"hand":{_ids_text(d.hand)},"field":{_ids_text(d.field)},'
            f'"opponent_hand_size":{d.opponent_hand_size},"stock_size":{d.stock_size}}}'
        )
    if isinstance(event, ev.Misdeal):
        return _dumps(event_message(event, seat))
    public: Any = event
    return public_event_text(public)


def _remember(cache: dict[Any, str], key: Any, text: str, cap: int = _TEXT_CAP) -> str:
    """Keep ``text`` in ``cache`` under ``key`` (emptied when it reaches ``cap`` entries); returns it."""
    if len(cache) >= cap:
        cache.clear()
    cache[key] = text
    return text


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


_dumps = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode


_ACTION_TEXT: dict[Action, str] = {}


def action_text(action: Action) -> str:
    """:func:`action_json` as compact JSON text (ASCII, the same in requests and replays), built once per action."""
    text = _ACTION_TEXT.get(action)
    if text is None:
        text = _ACTION_TEXT[action] = _dumps(action_json(action))
    return text


def legal_text(legal: Sequence[Action]) -> str:
    """A request's ``legal`` list as compact JSON text (what :func:`encode` writes for it)."""
    return "[" + ",".join([action_text(a) for a in legal]) + "]"


_BYTE_TEXT: tuple[str, ...] = tuple(
    ",".join(f'"{CARD_IDS[8 * k + i]}"' for i in range(8) if b >> i & 1) for k in range(6) for b in range(256)
)
"""The JSON strings of the cards in byte ``k`` of a mask with value ``b``, comma-separated, at ``256 * k + b``
(card ids are plain ASCII: no escapes)."""


_IDS_TEXT: dict[int, str] = {}
_IDS_TEXT_CAP = 4096  # about a megabyte: the capture piles, which change rarely, stay in it


def _ids_text(mask: int) -> str:
    """``ids_of(mask)`` as JSON text: from a small cache, else joined from the texts of the mask's bytes."""
    text = _IDS_TEXT.get(mask)
    return text if text is not None else _remember(_IDS_TEXT, mask, _join_ids_text(mask), _IDS_TEXT_CAP)


def _join_ids_text(mask: int) -> str:
    parts: list[str] = []
    shift = 0
    while mask:
        if mask & 255:
            parts.append(_BYTE_TEXT[shift + (mask & 255)])
        mask >>= 8
        shift += 256
    return "[" + ",".join(parts) + "]"


_SCORE_TEXT: dict[Score, str] = {}


def _score_text(sc: Score) -> str:
    if not sc.yaku:
        return f'{{"yaku":[],"total":{sc.total}}}'
    text = _SCORE_TEXT.get(sc)
    return text if text is not None else _remember(_SCORE_TEXT, sc, _dumps(_score_json(sc)), _IDS_TEXT_CAP)


def _opt_int(value: int | None) -> str:
    return "null" if value is None else str(value)


def view_text(view: View) -> str:
    """:func:`view_json` as compact JSON text (what :func:`encode` writes for it), from cached card-list texts."""
    drawn = f'"{CARD_IDS[view.drawn]}"' if view.drawn >= 0 else "null"
    decision = "null" if view.decision is None else _dumps(view.decision)
    (s0, s1), (k0, k1), (y0, y1), (c0, c1) = view.scores, view.koikoi_calls, view.yaku, view.captured
    ids = _IDS_TEXT.get  # a hit skips the call of _ids_text (five card lists per view)
    return (
        f'{{"seat":{view.seat + 1},"round":{view.round},"rounds":{view.rounds},"dealer":{view.dealer + 1},'
        f'"leader":{view.leader + 1},"turn":{view.turn},"to_move":{_opt_int(_opt_seat(view.to_move))},'
        f'"decision":{decision},"hand":{ids(view.hand) or _ids_text(view.hand)},'
        f'"field":{ids(view.field) or _ids_text(view.field)},'
        f'"captured":[{ids(c0) or _ids_text(c0)},{ids(c1) or _ids_text(c1)}],'
        f'"opponent_hand_size":{view.opponent_hand_size},'
        f'"stock_size":{view.stock_size},"drawn":{drawn},"scores":[{s0},{s1}],"koikoi_calls":[{k0},{k1}],'
        f'"yaku":[{_score_text(y0)},{_score_text(y1)}]}}'
    )


def _request_line(msg: _Request) -> bytes:
    t = msg["time"]
    rid = msg["id"]
    if type(rid) is not int or type(t["move_ms"]) is not int or type(t["bank_ms"]) is not int:
        if "view" in msg:
            return _dumps(msg).encode() + b"\n"
        head = ("type", "id", "decision")  # a lean request: its view and legal objects go where a full one has them
        full = {k: msg[k] for k in head}
        full.update(view=view_json(msg.view), legal=[action_json(a) for a in msg.view.legal])
        full.update((k, v) for k, v in msg.items() if k not in head)
        return _dumps(full).encode() + b"\n"
    return (
        f'{{"type":"request","id":{rid},"decision":{_dumps(msg["decision"])},"view":{view_text(msg.view)},'
        f'"legal":{msg.legal_text},"time":{{"move_ms":{t["move_ms"]},"bank_ms":{t["bank_ms"]}}}}}\n'
    ).encode()


def encode(msg: Mapping[str, Any] | BaseModel) -> bytes:
    """One compact JSON line (ASCII, hence UTF-8) ending in ``\\n``."""
    if type(msg) is _Request:
        return _request_line(msg)
    if isinstance(msg, BaseModel):
        return msg.model_dump_json().encode() + b"\n"
    return _dumps(msg).encode() + b"\n"


# ====================================================================================================
# bot lines -> engine actions


class ProtocolError(RefereeError):
    """A bot broke the protocol. ``reason`` is the failure recorded for the match."""

    reason: ClassVar[Failure] = Failure.INVALID_MESSAGE


class InvalidJson(ProtocolError):
    """The line is not one JSON value in UTF-8."""

    reason = Failure.INVALID_JSON


class InvalidMessage(ProtocolError):
    """Valid JSON, but not a message the bot may send now: schema, wrong ``type``, wrong ``id``."""

    reason = Failure.INVALID_MESSAGE


class IllegalAction(ProtocolError):
    """A well-formed answer whose action is not one element of ``legal``."""

    reason = Failure.ILLEGAL_ACTION


class ProtocolMismatch(ProtocolError):
    """The bot's ``hello`` names another protocol than ``koikoi/1``."""

    reason = Failure.PROTOCOL_MISMATCH


_ACTION_FORMS = '{"play": id}, {"play": id, "capture": id}, {"capture": id} or {"koikoi": bool}'


QUOTE_MAX = 200
"""How many characters of a refused bot line its error quotes."""


def quote_line(line: bytes | str) -> str:
    """A bot's line as it appears in an error: a JSON string (control characters and non-ASCII escaped, bytes
    that are not UTF-8 as ``\\xNN``), cut to :data:`QUOTE_MAX` characters of the line (then ``...`` follows)."""
    text = line.decode("utf-8", "backslashreplace") if isinstance(line, bytes) else line
    text = text.removesuffix("\n")
    cut = len(text) > QUOTE_MAX
    return json.dumps(text[:QUOTE_MAX]) + ("..." if cut else "")


def _short(value: Any) -> str:
    """A JSON value from a bot's line, as JSON cut to 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        text = "?"
    return text if len(text) <= 60 else text[:57] + "..."


def _action_problem(line: bytes | str) -> str | None:
    """What is wrong with the ``action`` object of a bot's (valid JSON) line, naming the key and value: an
    unknown key, a card id that is not one, a ``koikoi`` that is not a boolean. None if it is none of these."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    action = data.get("action") if isinstance(data, dict) else None
    if not isinstance(action, dict):
        return None
    for key, value in action.items():
        if key not in ("play", "capture", "koikoi"):
            return f"action: unknown key {_short(key)} (value {_short(value)}); expected {_ACTION_FORMS}"
        if key != "koikoi" and value not in CARD_IDS:
            return f'action.{key}: {_short(value)} is not a card id (ids are spelled like "pine-crane")'
        if key == "koikoi" and type(value) is not bool:
            return f"action.koikoi: {_short(value)} is not true or false"
    return None


def _describe(exc: ValidationError, line: bytes | str = b"") -> str:
    """A one-line summary of a validation error of ``line``: at most three problems, each cut short."""
    parts: list[str] = []
    for k, err in enumerate(exc.errors(include_url=False, include_input=False)):
        loc = err["loc"]
        if loc[:2] == ("action", "action") and len(loc) > 2:
            problem = _action_problem(line)
            if problem is not None:  # one named problem says it all
                return problem[:300]
            text = f"action.action: expected {_ACTION_FORMS} with canonical card ids"
        elif loc[:1] == ("hello",) and err["type"] == "string_pattern_mismatch":
            bad = _UNSHOWABLE_RE.search(str(exc.errors(include_url=False)[k].get("input", "")))
            found = "" if bad is None else f"; found U+{ord(bad.group()):04X} at character {bad.start() + 1}"
            text = (f"{'.'.join(str(x) for x in loc)}: no control characters (U+0000..U+001F, U+007F..U+009F) or "
                    f"bidi overrides (U+202A..U+202E, U+2066..U+2069){found}")  # fmt: skip
        else:
            text = f"{'.'.join(str(x) for x in loc) or 'message'}: {err['msg']}"
        if text[:160] not in parts:
            parts.append(text[:160])
        if len(parts) == 3:
            break
    return "; ".join(parts)


def parse_bot_message(line: bytes | str) -> BotHello | BotAction:
    """Parse one line from a bot (trailing newline allowed).

    Raises :class:`InvalidJson`, :class:`InvalidMessage` or :class:`ProtocolMismatch`, and nothing else,
    whatever the input.
    """
    try:
        msg = _BOT_ADAPTER.validate_json(line)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        if errors and errors[0]["type"] in ("json_invalid", "string_unicode"):
            raise InvalidJson(f"not a JSON line: {errors[0]['msg']}") from None
        raise InvalidMessage(_describe(exc, line)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # defensive: odd input the validator did not wrap
        raise InvalidJson(f"not a JSON line: {type(exc).__name__}") from None
    if isinstance(msg, BotHello) and msg.protocol is not None and msg.protocol != PROTOCOL_VERSION:
        raise ProtocolMismatch(f"bot speaks {msg.protocol[:40]!r}, referee speaks {PROTOCOL_VERSION!r}")
    return msg


def check_hello(line: bytes | str) -> BotHello:
    """The bot's answer to ``hello``: a :class:`BotHello` speaking ``koikoi/1``.

    Raises :class:`InvalidJson`, :class:`InvalidMessage` (any other message) or :class:`ProtocolMismatch`.
    """
    try:
        msg = parse_bot_message(line)
        if not isinstance(msg, BotHello):
            raise InvalidMessage(f"expected a hello, got a {msg.type!r} message")
    except (InvalidJson, InvalidMessage) as exc:
        raise type(exc)(f"hello: {exc}; the line: {quote_line(line)}") from None
    except ProtocolError as exc:
        raise type(exc)(f"hello: {exc}") from None
    return msg


def parse_answer(line: bytes | str, request_id: int) -> BotAction:
    """The bot's answer to request ``request_id``: a well-formed ``action`` message carrying that ``id``.

    Raises :class:`InvalidJson`, :class:`InvalidMessage` (a malformed action, another message, another ``id``:
    a stale or stray line) or :class:`ProtocolMismatch`. Whether the action is legal is :func:`legal_action`'s
    business.
    """
    try:
        msg = parse_bot_message(line)
    except (InvalidJson, InvalidMessage) as exc:
        raise type(exc)(f"request {request_id}: {exc}; the line: {quote_line(line)}") from None
    except ProtocolError as exc:
        raise type(exc)(f"request {request_id}: {exc}") from None
    try:
        return _answering(msg, request_id)
    except InvalidMessage as exc:
        raise InvalidMessage(f"{exc}; the line: {quote_line(line)}") from None


def _answering(msg: BotHello | BotAction, request_id: int) -> BotAction:
    if not isinstance(msg, BotAction):
        raise InvalidMessage(f"expected an action for request {request_id}, got a {msg.type!r}")
    if msg.id != request_id:
        raise InvalidMessage(
            f"action id {msg.id} does not answer request {request_id} (a stale or stray answer?)"
        )
    return msg


def legal_index(answer: BotAction, legal_json: Sequence[Mapping[str, Any]]) -> int:
    """The position in ``legal_json`` (a request's ``legal``) of the action the well-formed ``answer`` names.

    Raises :class:`IllegalAction`, whose message lists the legal actions.
    """
    action = answer.action_json()
    try:
        return legal_json.index(action)
    except ValueError:
        shown = json.dumps(action)[:200]
        legal = json.dumps(list(legal_json), separators=(",", ":"))
        raise IllegalAction(
            f"request {answer.id}: {shown} is not one of the legal actions {legal}"[:1000]
        ) from None


def answer_index(line: bytes, request_id: int, legal_json: Sequence[Mapping[str, Any]]) -> int | None:
    """The position in ``legal_json`` of the action a well-formed, legal answer line names, read without building
    a model (the hot path); None when the line is anything else: :func:`parse_answer` and :func:`legal_index`
    then say what is wrong.

    Accepts exactly the lines those two accept: a JSON object in UTF-8 with the keys ``type`` (``"action"``),
    ``id`` (an integer equal to ``request_id``) and ``action`` (an element of ``legal_json`` whose values have
    the same types: ``1`` is not ``true``).
    """
    try:
        msg = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if type(msg) is not dict or len(msg) != 3 or msg.get("type") != "action":
        return None
    rid = msg.get("id")
    action = msg.get("action")
    if type(rid) is not int or rid != request_id or type(action) is not dict:
        return None
    try:
        index = legal_json.index(action)
    except ValueError:
        return None
    for key, value in legal_json[index].items():
        if type(action[key]) is not type(value):
            return None
    return index


def legal_action(
    answer: BotAction, legal: Sequence[Action], legal_json: Sequence[Mapping[str, Any]] | None = None
) -> Action:
    """The engine action that the well-formed ``answer`` names among ``legal``.

    ``legal_json`` is ``[action_json(a) for a in legal]`` when the caller has it (the request's ``legal``).
    Raises :class:`IllegalAction`, whose message lists the legal actions.
    """
    return legal[legal_index(answer, [action_json(a) for a in legal] if legal_json is None else legal_json)]


def check_action(line: bytes | str | BotHello | BotAction, request_id: int, legal: Sequence[Action]) -> Action:
    """:func:`parse_answer` (unless given a parsed message) then :func:`legal_action`: the engine action a bot's
    line answers request ``request_id`` with. Raises a :class:`ProtocolError`."""
    if isinstance(line, BotHello | BotAction):
        return legal_action(_answering(line, request_id), legal)
    return legal_action(parse_answer(line, request_id), legal)


def validate_referee_message(msg: Mapping[str, Any]) -> BaseModel:
    """Check a built referee → bot dict against its model (tests and debugging; not on the hot path)."""
    result: BaseModel = _REFEREE_ADAPTER.validate_json(encode(msg))
    return result
