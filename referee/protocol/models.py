"""The pydantic models of every ``koikoi/1`` message, both directions, and the JSON Schema built from them.

The models describe the wire for the schema, for tests and for :func:`~referee.protocol.answers.parse_bot_message`
(a bot's line); the referee builds what it writes as plain dicts (:mod:`referee.protocol.messages`).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, StrictBool, TypeAdapter

from referee import PROTOCOL
from referee.engine import CARD_IDS, HandYaku, Yaku

PROTOCOL_VERSION = PROTOCOL
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
UNSHOWABLE_RE = re.compile(f"[{_UNSHOWABLE}]")


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

BOT_ADAPTER: TypeAdapter[BotHello | BotAction] = TypeAdapter(BotMessage)
"""Validates a bot's line."""
REFEREE_ADAPTER: TypeAdapter[Any] = TypeAdapter(RefereeMessage)
"""Validates a referee line (tests)."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every ``koikoi/1`` message, both directions, in one document.

    ``$defs.RefereeToBot`` is any line the referee writes, ``$defs.BotToReferee`` any line a bot may write.
    """
    refs, top = TypeAdapter.json_schemas(
        [("RefereeToBot", "serialization", REFEREE_ADAPTER), ("BotToReferee", "validation", BOT_ADAPTER)],
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

