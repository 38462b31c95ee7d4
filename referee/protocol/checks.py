"""Bot lines into engine actions: parsing, the checks of a ``hello`` and of an answer, and the protocol errors.

Every failure is a :class:`ProtocolError` whose ``reason`` is the :class:`~referee.records.Failure` recorded for
the match: a line that is not JSON is ``invalid_json``, a malformed message (or one that answers nothing)
``invalid_message``, a well-formed action that is not legal ``illegal_action``, another protocol version
``protocol_mismatch``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from referee.engine import Action
from referee.errors import RefereeError
from referee.protocol.messages import (
    _BOT_ADAPTER,
    _REFEREE_ADAPTER,
    _UNSHOWABLE_RE,
    PROTOCOL_VERSION,
    BotAction,
    BotHello,
)
from referee.protocol.wire import action_json, encode
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


def _describe(exc: ValidationError) -> str:
    """A one-line summary of a validation error: at most three problems, each cut short."""
    parts: list[str] = []
    for k, err in enumerate(exc.errors(include_url=False, include_input=False)):
        loc = err["loc"]
        if loc[:2] == ("action", "action") and len(loc) > 2:
            text = f"action.action: expected {_ACTION_FORMS} with canonical card ids"
        elif loc[:1] == ("hello",) and err["type"] == "string_pattern_mismatch":
            bad = _UNSHOWABLE_RE.search(str(exc.errors(include_url=False)[k].get("input", "")))
            found = "" if bad is None else f"; found U+{ord(bad.group()):04X} at character {bad.start() + 1}"
            text = (f"{'.'.join(str(x) for x in loc)}: no control characters (U+0000..U+001F, U+007F..U+009F) or "
                    f"bidi overrides (U+202A..U+202E, U+2066..U+2069){found}")  # fmt: skip
        else:
            text = f"{'.'.join(str(x) for x in loc) or 'message'}: {err['msg']}"
        if text not in parts:
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
        raise InvalidMessage(_describe(exc)) from None
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
    except ProtocolError as exc:
        raise type(exc)(f"hello: {exc}") from None
    if not isinstance(msg, BotHello):
        raise InvalidMessage(f"expected a hello, got a {msg.type!r} message")
    return msg


def parse_answer(line: bytes | str, request_id: int) -> BotAction:
    """The bot's answer to request ``request_id``: a well-formed ``action`` message carrying that ``id``.

    Raises :class:`InvalidJson`, :class:`InvalidMessage` (a malformed action, another message, another ``id``:
    a stale or stray line) or :class:`ProtocolMismatch`. Whether the action is legal is :func:`legal_action`'s
    business.
    """
    try:
        msg = parse_bot_message(line)
    except ProtocolError as exc:
        raise type(exc)(f"request {request_id}: {exc}") from None
    return _answering(msg, request_id)


def _answering(msg: BotHello | BotAction, request_id: int) -> BotAction:
    if not isinstance(msg, BotAction):
        raise InvalidMessage(f"expected an action for request {request_id}, got a {msg.type!r}")
    if msg.id != request_id:
        raise InvalidMessage(
            f"action id {msg.id} does not answer request {request_id} (a stale or stray answer?)"
        )
    return msg


def legal_action(
    answer: BotAction, legal: Sequence[Action], legal_json: Sequence[Mapping[str, Any]] | None = None
) -> Action:
    """The engine action that the well-formed ``answer`` names among ``legal``.

    ``legal_json`` is ``[action_json(a) for a in legal]`` when the caller has it (the request's ``legal``).
    Raises :class:`IllegalAction`, whose message lists the legal actions.
    """
    wire = [action_json(a) for a in legal] if legal_json is None else legal_json
    action = answer.action_json()
    try:
        return legal[wire.index(action)]
    except ValueError:
        shown = json.dumps(action)[:200]
        raise IllegalAction(
            f"request {answer.id}: {shown} is not one of the legal actions {list(wire)}"[:600]
        ) from None


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
