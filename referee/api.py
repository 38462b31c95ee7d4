"""The public Python API of koikoi-referee, in one import (docs/api.md): ``from referee.api import ...``.

Everything listed in ``__all__`` is public and documented in docs/api.md; every other module, name and attribute
of the package is private and may change without notice. Tournaments are the names of :mod:`referee.tournament`
listed in docs/api.md (reached as ``tournament.start``...). The learning environments are in :mod:`referee.rl`
(docs/rl.md), the bot helper is :func:`referee.bot.run`.

Seats: a Python record or engine value counts seats 0 and 1 (an index into ``scores`` and ``names``); everything
written out (the protocol, JSON results, replays, the command line, the environments' ``player_1`` and
``player_2``) counts 1 and 2. :attr:`MatchResult.winner_number` and :attr:`Forfeit.seat_number` give the 1/2 form.
"""

from referee import tournament
from referee.engine import (
    CARD_IDS,
    KOIKOI,
    PRESETS,
    STOP,
    Action,
    ActionKind,
    Deal,
    EngineError,
    Event,
    IllegalActionError,
    Rules,
    Score,
    State,
    View,
    apply,
    card,
    card_id,
    ids_of,
    legal_actions,
    load_rules,
    mask_of_ids,
    new_match,
    observe,
    score,
    visible_event,
)
from referee.match import MatchConfig, bot_factory, play_match, run_match, run_matches
from referee.records import Failure, Forfeit, MatchResult, Termination, TimeControl
from referee.replay import ReplayReader, read_replay, verify
from referee.seats import BotSeat, Seat, SeatFailure
from referee.seats.function import FunctionSeat
from referee.seats.process import Limits
from referee.seats.settings import BotSettings

__all__ = [
    "CARD_IDS", "KOIKOI", "PRESETS", "STOP", "Action", "ActionKind", "BotSeat", "BotSettings", "Deal",
    "EngineError", "Event", "Failure", "Forfeit", "FunctionSeat", "IllegalActionError", "Limits", "MatchConfig",
    "MatchResult", "ReplayReader", "Rules", "Score", "Seat", "SeatFailure", "State", "Termination", "TimeControl",
    "View", "apply", "bot_factory", "card", "card_id", "ids_of", "legal_actions", "load_rules", "mask_of_ids",
    "new_match", "observe", "play_match", "read_replay", "run_match", "run_matches", "score", "tournament",
    "verify", "visible_event",
]  # fmt: skip
