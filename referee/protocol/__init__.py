"""The wire format ``koikoi/1``: the only code that turns engine values into messages and bot lines into actions.

In four parts: :mod:`~referee.protocol.models` (the pydantic models of every message and the JSON Schema),
:mod:`~referee.protocol.messages` (engine values → message dicts, and the typed :class:`Request` of a decision),
:mod:`~referee.protocol.text` (the hot path: every cached text, :func:`encode` and :func:`encode_events`) and
:mod:`~referee.protocol.answers` (bot lines → actions: :func:`check_hello`, :func:`check_answer`, and the
:class:`ProtocolError` family). The names below are the package's public API.
"""

from referee.protocol.answers import (
    QUOTE_MAX,
    IllegalAction,
    InvalidJson,
    InvalidMessage,
    ProtocolError,
    ProtocolMismatch,
    answer_index,
    check_action,
    check_answer,
    check_hello,
    legal_action,
    legal_index,
    parse_answer,
    parse_bot_message,
    quote_line,
)
from referee.protocol.messages import (
    LeanRequestMessage,
    Request,
    action_answer,
    action_from_json,
    action_json,
    bye_message,
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
    seat_event_from_json,
    view_json,
    wire_seat,
)
from referee.protocol.models import (
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
from referee.protocol.text import (
    EncodedEvents,
    action_text,
    encode,
    encode_events,
    event_text,
    legal_objects,
    legal_text,
    public_event_text,
    request_legal,
    request_legal_text,
    validate_referee_message,
    view_text,
)

__all__ = [
    "NAME_MAX", "PROTOCOL_VERSION", "QUOTE_MAX", "BotAction", "BotHello", "BotMessage", "ByeMsg",
    "EncodedEvents", "ErrorMsg", "EventMsg", "HelloMsg", "IllegalAction", "InvalidJson", "InvalidMessage",
    "LeanRequestMessage", "NewMatchMsg", "ProtocolError", "ProtocolMismatch", "RefereeMessage", "Request",
    "RequestMsg", "action_answer", "action_from_json", "action_json", "action_text", "answer_index",
    "bye_message", "check_action", "check_answer", "check_hello", "encode", "encode_events", "error_message",
    "event_json", "event_message", "event_text", "full_event_json", "full_event_message", "hello_answer",
    "hello_message", "json_schema", "legal_action", "legal_index", "legal_objects", "legal_text",
    "new_match_message", "parse_answer", "parse_bot_message", "public_event_message", "public_event_text",
    "quote_line", "request_legal", "request_legal_text", "request_message", "schema_text",
    "seat_event_from_json", "validate_referee_message", "view_json", "view_text", "wire_seat",
]  # fmt: skip
