"""Standings from finished matches: per bot, per pairing and per deal pair.

Everything here is a pure function of a set of :class:`~referee.tournament.records.Record` s, so a resumed,
sharded or merged tournament computes exactly the same standings as one uninterrupted run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from referee.tournament.config import Sprt, TournamentConfig
from referee.tournament.records import COLUMN_OF, BotRow, PairingRow, PairRow, Record
from referee.tournament.schedule import pairings
from referee.tournament.stats import SprtResult, sprt

__all__ = ["BotRow", "PairRow", "PairingRow", "Record", "Standings", "compute"]


@dataclass
class Standings:
    """The whole summary of a set of records."""

    bots: list[BotRow]
    pairings: list[PairingRow]
    pairs: list[PairRow]  # every complete or partial pair: its games and pair score
    matches: int
    sprt: SprtResult | None = None


def _group_pairs(records: Iterable[Record]) -> dict[tuple[int, int], dict[str, Record]]:
    groups: dict[tuple[int, int], dict[str, Record]] = {}
    for r in records:
        groups.setdefault((r.spec.pairing, r.spec.pair), {})[r.spec.game] = r
    return dict(sorted(groups.items()))


def _tally(row: BotRow | PairingRow, points: float) -> None:
    """Count one game's points (1, 0.5 or 0) as a win, a draw or a loss of ``row``."""
    if points == 1.0:
        row.wins += 1
    elif points == 0.5:
        row.draws += 1
    else:
        row.losses += 1


def compute(config: TournamentConfig, records: Iterable[Record], sprt_params: Sprt | None = None) -> Standings:
    """Standings, head-to-head rows, pair list and (for two bots) the SPRT of the first pairing."""
    recs = sorted(records, key=lambda r: r.spec.index)
    rows = {b.name: BotRow(b.name) for b in config.bots}
    plist = pairings(config)
    prow = [PairingRow(p.first, p.second) for p in plist]
    for r in recs:
        for name in r.spec.seats:
            row = rows[name]
            row.games += 1
            _tally(row, r.points_of(name))
        off = r.offender
        if off:
            who, reason = off
            rows[who].failures[COLUMN_OF[reason]] += 1
        pr = prow[r.spec.pairing]
        _tally(pr, r.points_of(pr.first))
    pair_list: list[PairRow] = []
    for (pairing, pair), games in _group_pairs(recs).items():
        p = plist[pairing]
        row_of_pair = PairRow(p.key, pair, p.first, p.second, games)
        first_pts = row_of_pair.first_points
        n = len(games)
        rows[p.first].pair_scores.append(first_pts / n)
        rows[p.second].pair_scores.append(1 - first_pts / n)
        if n == 2:
            prow[pairing].pair_points.append(first_pts)
        pair_list.append(row_of_pair)
    ordered = sorted(rows.values(), key=lambda b: (-_score(b), -b.points, b.name))
    result = Standings(ordered, prow, pair_list, len(recs))
    if sprt_params is not None and prow:
        s = sprt_params
        result.sprt = sprt(prow[0].pentanomial, s.elo0, s.elo1, s.alpha, s.beta)
    return result


def _score(row: BotRow) -> float:
    est = row.estimate
    return est.score if est else 0.0
