"""Bot lines → engine actions, and the protocol errors.

A bot's ``hello`` goes through :func:`check_hello`, its answer to a request through :func:`check_answer`, which
reads a legal answer without building a model (the hot path) and otherwise says what is wrong. Every failure is
a :class:`ProtocolError` whose ``reason`` is the :class:`~referee.records.Failure` recorded for the match: a line
that is not JSON is ``invalid_json``, a malformed message (or one that answers nothing) ``invalid_message``, a
well-formed action that is not legal ``illegal_action``, another protocol version ``protocol_mismatch``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import ValidationError

from referee.engine import CARD_IDS, Action
from referee.errors import RefereeError
from referee.protocol.messages import Request, action_json
from referee.protocol.models import BOT_ADAPTER, PROTOCOL_VERSION, UNSHOWABLE_RE, BotAction, BotHello
from referee.protocol.text import legal_objects
from referee.records import Failure


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
            bad = UNSHOWABLE_RE.search(str(exc.errors(include_url=False)[k].get("input", "")))
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
        msg = BOT_ADAPTER.validate_json(line)
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


def check_answer(line: bytes, request: Request) -> int:
    """The position in ``request.legal`` of the action the bot's answer ``line`` names: read without a model when
    it is a well-formed, legal answer (the hot path), else parsed to say what is wrong.

    Raises :class:`InvalidJson`, :class:`InvalidMessage` (a malformed action, another message, another ``id``),
    :class:`ProtocolMismatch` or, for a well-formed answer naming an action that is not legal,
    :class:`IllegalAction`.
    """
    legal = legal_objects(request.view.legal)
    index = answer_index(line, request.id, legal)
    if index is None:
        index = legal_index(parse_answer(line, request.id), legal)
    return index
