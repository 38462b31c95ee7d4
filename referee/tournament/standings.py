"""Standings from finished matches: per bot, per pairing and per deal pair, with joint ratings.

:class:`Tally` keeps running totals (per bot, per pairing, and only the deal pairs still open), so a running
tournament's bookkeeping stays bounded however many matches it plays; :func:`compute` folds a set of
:class:`~referee.tournament.records.Record` s into one. The result depends on the set only, so a resumed,
sharded or merged tournament computes exactly the same standings as one uninterrupted run. Each complete pair
whose results say which game was played first also feeds the asymmetry test of both bots
(:mod:`referee.tournament.asymmetry`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from referee.tournament.config import Sprt, TournamentConfig
from referee.tournament.ratings import Ratings, elos, fit
from referee.tournament.records import COLUMN_OF, BotRow, PairingRow, PairRow, Record
from referee.tournament.schedule import pairings
from referee.tournament.stats import SprtResult, sprt

__all__ = ["BotRow", "PairRow", "PairingRow", "Record", "Standings", "Tally", "compute", "rating_history"]


@dataclass
class Standings:
    """The whole summary of a set of records."""

    bots: list[BotRow]  # best first (by joint rating)
    pairings: list[PairingRow]
    pairs: list[PairRow]  # every complete or partial pair: its games and pair score
    matches: int
    sprt: SprtResult | None = None
    ratings: Ratings | None = None
    config: TournamentConfig | None = None

    @property
    def flagged(self) -> list[BotRow]:
        """The bots the asymmetry test flags, in standings order."""
        return [b for b in self.bots if b.asymmetry is not None and b.asymmetry.flagged]


def _tally(row: BotRow | PairingRow, points: float) -> None:
    """Count one game's points (1, 0.5 or 0) as a win, a draw or a loss of ``row``."""
    if points == 1.0:
        row.wins += 1
    elif points == 0.5:
        row.draws += 1
    else:
        row.losses += 1


class Tally:
    """Running totals of a tournament, fed one finished match at a time (in any order)."""

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.rows = {b.name: BotRow(b.name) for b in config.bots}
        self.plist = pairings(config)
        self.prows = [PairingRow(p.first, p.second) for p in self.plist]
        self.open: dict[tuple[int, int], Record] = {}  # the first game of each pair still open
        self.matches = 0

    def add(self, rec: Record) -> None:
        """Count one finished match."""
        self.matches += 1
        for i, name in enumerate(rec.spec.seats):
            row = self.rows[name]
            row.games += 1
            _tally(row, rec.points_of(name))
            if len(rec.result.seat_stats) == 2:
                row.stats.add(rec.result.seat_stats[i])
        off = rec.offender
        if off:
            who, reason = off
            self.rows[who].failures[COLUMN_OF[reason]] += 1
            forfeits = self.rows[who].stats.forfeits
            forfeits[reason] = forfeits.get(reason, 0) + 1
        pr = self.prows[rec.spec.pairing]
        _tally(pr, rec.points_of(pr.first))
        key = (rec.spec.pairing, rec.spec.pair)
        first = self.open.pop(key, None)
        if first is None:
            self.open[key] = rec
            return
        pts = first.points_of(pr.first) + rec.points_of(pr.first)
        pr.add_pair(pts)
        self.rows[pr.first].add_pair_score(pts / 2)
        self.rows[pr.second].add_pair_score(1 - pts / 2)
        if {first.order, rec.order} == {1, 2}:
            one, two = (first, rec) if first.order == 1 else (rec, first)
            d = two.margin_of(pr.first) - one.margin_of(pr.first)
            self.rows[pr.first].order_diffs.add(d)
            self.rows[pr.second].order_diffs.add(-d)

    def totals(self) -> dict[tuple[str, str], tuple[int, int, int]]:
        """Wins, draws and losses of each pairing's first bot, by (first, second)."""
        return {(p.first, p.second): (p.wins, p.draws, p.losses) for p in self.prows}

    def sprt(self, params: Sprt) -> SprtResult:
        """The SPRT of the first pairing on its complete pairs only."""
        return sprt(self.prows[0].pentanomial, params.elo0, params.elo1, params.alpha, params.beta)

    def standings(self, sprt_params: Sprt | None = None, pair_list: Sequence[PairRow] = ()) -> Standings:
        """The standings so far: open pairs count as their one game in the score rates (not in the SPRT)."""
        rows = {name: BotRow(**vars(row)) for name, row in self.rows.items()}  # a copy: open pairs are added
        for (pairing, _), rec in self.open.items():
            p = self.plist[pairing]
            pts = rec.points_of(p.first)
            rows[p.first].add_pair_score(pts)
            rows[p.second].add_pair_score(1 - pts)
        names = [b.name for b in self.config.bots]
        ratings = fit(names, self.totals())
        for r in ratings.ratings:
            rows[r.name].rating = r
        for row in rows.values():
            row.asymmetry = row.order_diffs.test()
        ordered = sorted(rows.values(), key=lambda b: (-_elo(b), -_score(b), b.name))
        for above, below in itertools.pairwise(ordered):
            if above.rating and below.rating and above.rating.enough and below.rating.enough:
                above.los = ratings.los(above.name, below.name)
        result = Standings(
            ordered, list(self.prows), list(pair_list), self.matches, ratings=ratings, config=self.config
        )
        if sprt_params is not None and self.prows:
            result.sprt = self.sprt(sprt_params)
        return result


def _group_pairs(records: Iterable[Record]) -> dict[tuple[int, int], dict[str, Record]]:
    groups: dict[tuple[int, int], dict[str, Record]] = {}
    for r in records:
        groups.setdefault((r.spec.pairing, r.spec.pair), {})[r.spec.game] = r
    return dict(sorted(groups.items()))


def compute(config: TournamentConfig, records: Iterable[Record], sprt_params: Sprt | None = None) -> Standings:
    """Standings, head-to-head rows, pair list, joint ratings and (for two bots) the SPRT of the first
    pairing."""
    recs = sorted(records, key=lambda r: r.spec.index)
    tally = Tally(config)
    for r in recs:
        tally.add(r)
    plist = tally.plist
    pair_list = [
        PairRow(plist[pairing].key, pair, plist[pairing].first, plist[pairing].second, games)
        for (pairing, pair), games in _group_pairs(recs).items()
    ]
    return tally.standings(sprt_params, pair_list)


def rating_history(config: TournamentConfig, records: Sequence[Record], points: int = 40) -> list[
    tuple[int, dict[str, float]]
]:  # fmt: skip
    """How the ratings settled: (matches so far, Elo by bot) at up to ``points`` checkpoints, the records taken
    in the order given (the order they finished in)."""
    n = len(records)
    if n == 0:
        return []
    marks = sorted({max(1, round(n * k / points)) for k in range(1, points + 1)})
    tally = Tally(config)
    names = [b.name for b in config.bots]
    history: list[tuple[int, dict[str, float]]] = []
    done = 0
    for mark in marks:
        while done < mark:
            tally.add(records[done])
            done += 1
        history.append((done, elos(names, tally.totals(), history[-1][1] if history else None)))
    return history


def _elo(row: BotRow) -> float:
    return row.rating.elo if row.rating is not None else 0.0


def _score(row: BotRow) -> float:
    est = row.estimate
    return est.score if est else 0.0
