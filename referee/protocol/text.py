"""The hot path's texts: every cache and text template the referee writes lines from, in one place.

What a line holds is decided by :mod:`referee.protocol.messages` (plain dicts); this module writes the same
bytes faster: card lists, actions, scores and the turn's public events are turned into JSON text once and kept,
and a request is written from its parts (:func:`encode` of a :class:`~referee.protocol.messages.Request`).
:func:`encode_events` encodes a step's events once for both seats and the replay. ``tests/protocol/test_hot_path.py``
checks every text here against the generic encoder's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from referee.engine import CARD_IDS, Action, Score, View, visible_event
from referee.engine import events as ev
from referee.protocol.messages import (
    LeanRequestMessage,
    Request,
    _opt_seat,
    _score_json,
    action_json,
    event_json,
    event_message,
    full_event_message,
    public_event_message,
    view_json,
)
from referee.protocol.models import REFEREE_ADAPTER

_dumps = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode


_TEXT_CAP = 1 << 16


def _remember(cache: dict[Any, str], key: Any, text: str, cap: int = _TEXT_CAP) -> str:
    """Keep ``text`` in ``cache`` under ``key`` (emptied when it reaches ``cap`` entries); returns it."""
    if len(cache) >= cap:
        cache.clear()
    cache[key] = text
    return text


# ------------------------------------------------------------------------------------- actions and cards


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


# ----------------------------------------------------------------------------------------------- events


_TURN_TEXT: dict[tuple[Any, ...], str] = {}


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


_NO_MESSAGE: dict[str, Any] = {}  # a seat that writes encoded lines only reads no message


@dataclass(slots=True)
class EncodedEvents:
    """A step's events encoded once: each seat's ``(message, line)`` pairs (the message is an empty dict
    unless asked for), the replay's lines in order (a text, or for a deal a function building its full-information
    message, which the writer calls at its flush) and the public ``round_end`` events among them as JSON
    (:func:`~referee.protocol.messages.event_json`: what a match result holds)."""

    seats: tuple[list[tuple[dict[str, Any], bytes]], list[tuple[dict[str, Any], bytes]]] = field(
        default_factory=lambda: ([], [])
    )
    replay: list[str | Callable[[], dict[str, Any]]] = field(default_factory=list)
    round_ends: list[dict[str, Any]] = field(default_factory=list)


def encode_events(events: Sequence[ev.Event], *, messages: bool) -> EncodedEvents:
    """Encode ``events`` for both seats and the replay. A deal is filtered per seat (:func:`visible_event`);
    every other event is public: encoded once, for both seats and the replay (whose full form of a public event
    is the same). ``messages``: build each seat's message dicts too (for a seat that reads them)."""
    out = EncodedEvents()
    first, second = out.seats
    replay = out.replay
    for e in events:
        kind = type(e)
        if kind is ev.RoundStart or kind is ev.Misdeal:
            replay.append(_full_event(e))
            for i, lines in ((0, first), (1, second)):
                msg = event_message(e, i) if messages else _NO_MESSAGE
                lines.append((msg, (event_text(e, i) + "\n").encode()))
            continue
        public: Any = e
        text = public_event_text(public)
        replay.append(text)
        item = (public_event_message(public) if messages else _NO_MESSAGE, (text + "\n").encode())
        first.append(item)
        second.append(item)
        if kind is ev.RoundEnd:
            out.round_ends.append(event_json(public))
    return out


def _full_event(event: ev.Event) -> Callable[[], dict[str, Any]]:
    return lambda: full_event_message(event)


# --------------------------------------------------------------------------------------------- requests


_ACTION_OBJECT: dict[Action, dict[str, Any]] = {}


def legal_objects(legal: Sequence[Action]) -> list[Mapping[str, Any]]:
    """The action objects of ``legal``, in order, shared through a cache (read them, never change them)."""
    out: list[Mapping[str, Any]] = []
    for a in legal:
        obj = _ACTION_OBJECT.get(a)
        if obj is None:
            obj = _ACTION_OBJECT[a] = action_json(a)
        out.append(obj)
    return out


def request_legal_text(request: Request | Mapping[str, Any]) -> str:
    """The JSON text of a request's ``legal`` list."""
    if isinstance(request, Request | LeanRequestMessage):
        return legal_text(request.view.legal)
    return _dumps(request["legal"])


def request_legal(request: Request | Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """A request's legal actions as action objects, in order: its ``legal`` list, or for a :class:`Request` (or a
    lean request message) objects shared through a cache (read them, never change them)."""
    if isinstance(request, Request | LeanRequestMessage):
        return legal_objects(request.view.legal)
    legal: Sequence[Mapping[str, Any]] = request["legal"]
    return legal


def _request_line(rid: Any, decision: str, view: View, move_ms: Any, bank_ms: Any, rest: Mapping[str, Any]) -> bytes:
    if type(rid) is not int or type(move_ms) is not int or type(bank_ms) is not int:
        # Not what the referee sends: the generic encoder writes it, with the view and legal objects in place.
        full = {"type": "request", "id": rid, "decision": decision, "view": view_json(view),
                "legal": [action_json(a) for a in view.legal]}  # fmt: skip
        full.update((k, v) for k, v in rest.items() if k not in full)
        return _dumps(full).encode() + b"\n"
    return (
        f'{{"type":"request","id":{rid},"decision":{_dumps(decision)},"view":{view_text(view)},'
        f'"legal":{legal_text(view.legal)},"time":{{"move_ms":{move_ms},"bank_ms":{bank_ms}}}}}\n'
    ).encode()


def encode(msg: Request | Mapping[str, Any] | BaseModel) -> bytes:
    """One compact JSON line (ASCII, hence UTF-8) ending in ``\\n``; a :class:`Request` is written from cached
    texts."""
    t = type(msg)
    if t is Request:
        r: Any = msg
        return _request_line(r.id, r.view.decision, r.view, r.move_ms, r.bank_ms, _NO_MESSAGE)
    if t is LeanRequestMessage:
        m: Any = msg
        time = m["time"]
        return _request_line(m["id"], m["decision"], m.view, time["move_ms"], time["bank_ms"], m)
    if isinstance(msg, BaseModel):
        return msg.model_dump_json().encode() + b"\n"
    return _dumps(msg).encode() + b"\n"


def validate_referee_message(msg: Mapping[str, Any]) -> BaseModel:
    """Check a built referee → bot dict against its model (tests and debugging; not on the hot path)."""
    result: BaseModel = REFEREE_ADAPTER.validate_json(encode(msg))
    return result
