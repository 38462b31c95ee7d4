"""Tournaments: schedules of duplicate deal pairs, a parallel runner reusing bot processes, standings with Elo
and error bars, the SPRT, a resumable progress log, shards and their merge.

Typical use::

    config = load_config(Path("examples/tournament.toml"))
    store = start(config, RunOptions(jobs=2), Path("out"))
    outcome = play(store)
    print(outcome.table)
"""

from referee.errors import OutputError
from referee.tournament.config import (
    BotSpec,
    Format,
    RunOptions,
    Sprt,
    TournamentConfig,
    TournamentError,
    config_from_dict,
    load_config,
    parse_bot,
    parse_shard,
    resolve_rules,
    with_rounds,
)
from referee.tournament.gates import EXIT_ERROR, EXIT_GATE, EXIT_OK, judge
from referee.tournament.merge import MergeResult, merge
from referee.tournament.records import BotRow, Column, PairingRow, PairRow, Record, Redeal
from referee.tournament.schedule import MatchSpec, Pairing, build_schedule, pairings, shard_of, work_units
from referee.tournament.session import Outcome, default_jobs, play, resume, start
from referee.tournament.standings import Standings, compute
from referee.tournament.stats import Estimate, SprtResult, SprtState, elo_of_score, estimate, sprt, sprt_llr
from referee.tournament.store import Store

__all__ = [
    "EXIT_ERROR", "EXIT_GATE", "EXIT_OK", "BotRow", "BotSpec", "Column", "Estimate", "Format", "MatchSpec",
    "MergeResult", "Outcome", "OutputError", "PairRow", "Pairing", "PairingRow", "Record", "Redeal",
    "RunOptions", "Sprt", "SprtResult", "SprtState", "Standings", "Store",
    "TournamentConfig", "TournamentError", "build_schedule", "compute", "config_from_dict",
    "default_jobs", "elo_of_score", "estimate", "judge", "load_config", "merge", "pairings", "parse_bot",
    "parse_shard", "play", "resolve_rules", "resume", "shard_of", "sprt", "sprt_llr", "start",
    "with_rounds", "work_units",
]  # fmt: skip
