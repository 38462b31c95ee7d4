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

Three modules, imported through this package: :mod:`~referee.protocol.messages` (the pydantic models of every
message and the JSON Schema), :mod:`~referee.protocol.wire` (engine values → messages) and
:mod:`~referee.protocol.checks` (bot lines → engine actions, and the protocol errors).
"""

from referee.protocol.checks import (
    IllegalAction,
    InvalidJson,
    InvalidMessage,
    ProtocolError,
    ProtocolMismatch,
    check_action,
    check_hello,
    legal_action,
    parse_answer,
    parse_bot_message,
    validate_referee_message,
)
from referee.protocol.messages import (
    NAME_MAX,
    PROTOCOL_VERSION,
    BotAction,
    BotHello,
    BotMessage,
    ByeMsg,
    ErrorMsg,
    EventMsg,
    HelloMsg,
    NewMatchMsg,
    RefereeMessage,
    RequestMsg,
    json_schema,
    schema_text,
)
from referee.protocol.wire import (
    action_answer,
    action_from_json,
    action_json,
    bye_message,
    encode,
    error_message,
    event_json,
    event_message,
    full_event_json,
    full_event_message,
    hello_answer,
    hello_message,
    new_match_message,
    public_event_message,
    request_message,
    view_json,
    wire_seat,
)

__all__ = [
    "NAME_MAX", "PROTOCOL_VERSION", "BotAction", "BotHello", "BotMessage", "ByeMsg", "ErrorMsg", "EventMsg",
    "HelloMsg", "IllegalAction", "InvalidJson", "InvalidMessage", "NewMatchMsg", "ProtocolError",
    "ProtocolMismatch", "RefereeMessage", "RequestMsg", "action_answer", "action_from_json", "action_json",
    "bye_message", "check_action", "check_hello", "encode", "error_message", "event_json", "event_message",
    "full_event_json", "full_event_message", "hello_answer", "hello_message", "json_schema", "legal_action",
    "new_match_message", "parse_answer", "parse_bot_message", "public_event_message", "request_message",
    "schema_text", "validate_referee_message", "view_json", "wire_seat",
]  # fmt: skip
