"""The Koi-Koi rules engine: pure, deterministic, standard library only.

The whole game is three functions over an immutable :class:`State`::

    state = new_match(PRESETS["koikoi-japan"], seed=7)
    while not state.is_over:
        action = legal_actions(state)[0]          # sorted; never empty while a decision is due
        state = apply(state, action)              # a new state; IllegalActionError if not legal
        for event in state.events: ...            # what that step did, with full information

``observe(state, seat)`` is the only builder of what a seat may know; ``visible_event(event, seat)`` is the only
filter of events for a seat; both return typed values. ``score(captured, rules, koikoi_calls)`` scores a capture pile.
Seats are 0 and 1 here. No wire format lives here: :mod:`referee.protocol` turns these values into ``koikoi/1``
messages (the engine keeps only the ``--deals`` line form of a :class:`Deal`).
"""

from referee.engine import _build  # first: it chooses between the compiled and the pure engine
from referee.engine.cards import CARD_IDS, Card, Kind, Mask, card, card_id, cards_of, ids_of, mask_of, mask_of_ids
from referee.engine.errors import DealError, EngineError, IllegalActionError, RulesError, UnknownCardError
from referee.engine.events import (
    Draw,
    DrawCapture,
    Event,
    HandYakuMade,
    KoikoiDecision,
    MatchEnd,
    Misdeal,
    Play,
    PublicEvent,
    RoundEnd,
    RoundStart,
    SeatEvent,
    SeatMisdeal,
    SeatRoundStart,
    YakuMade,
)
from referee.engine.rules import PRESETS, Rules, load_rules, rules_from_dict
from referee.engine.state import (
    KOIKOI,
    STOP,
    Action,
    ActionKind,
    Deal,
    Phase,
    RoundResult,
    State,
    apply,
    deals_from_lines,
    hand_yaku,
    is_legal,
    legal_actions,
    new_match,
    shuffled_deal,
)
from referee.engine.views import DECISIONS, View, observe, visible_event
from referee.engine.yaku import HandYaku, Score, Yaku, YakuScore, koikoi_total, score

__all__ = [
    "CARD_IDS", "DECISIONS", "KOIKOI", "PRESETS", "STOP", "Action", "ActionKind", "Card", "Deal", "DealError",
    "Draw", "DrawCapture", "EngineError", "Event", "HandYaku", "HandYakuMade", "IllegalActionError", "Kind",
    "KoikoiDecision", "Mask", "MatchEnd", "Misdeal", "Phase", "Play", "PublicEvent", "RoundEnd", "RoundResult",
    "RoundStart", "Rules", "RulesError", "Score", "SeatEvent", "SeatMisdeal", "SeatRoundStart", "State",
    "UnknownCardError", "View", "Yaku", "YakuMade", "YakuScore", "apply", "card", "card_id", "cards_of",
    "deals_from_lines", "hand_yaku", "ids_of", "is_legal", "koikoi_total", "legal_actions", "load_rules", "mask_of",
    "mask_of_ids", "new_match", "observe", "rules_from_dict", "score", "shuffled_deal", "visible_event",
]  # fmt: skip

_build.restore_docstrings()
