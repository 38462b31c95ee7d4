"""Standings from finished matches: per bot, per pairing and per deal pair, with joint ratings.

:class:`Tally` keeps running totals (per bot, per pairing, and only the deal pairs still open), so a running
tournament's bookkeeping stays bounded however many matches it plays; :func:`compute` folds a set of
:class:`~referee.tournament.records.Record` s into one. Only complete deal pairs count: a pair's first game
waits for its twin, so W/D/L, score rates, ratings and the SPRT always cover the same pairs. The result depends
on the set only, so a resumed, sharded or merged tournament computes exactly the same standings as one
uninterrupted run. Each complete pair whose results say which game was played first also feeds the asymmetry test
of both bots (:mod:`referee.tournament.asymmetry`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from referee.text import plural
from referee.tournament.config import Sprt, TournamentConfig, TournamentError
from referee.tournament.ratings import Ratings, elos, fit
from referee.tournament.records import COLUMN_OF, BotRow, PairingRow, PairRow, Record
from referee.tournament.schedule import pairings
from referee.tournament.stats import SprtResult, SprtState, sprt

__all__ = [
    "BotRow", "PairRow", "PairingRow", "Record", "SprtStop", "Standings", "Tally", "check_consistent", "compute",
    "pair_rows", "rating_history", "sprt_stop_point", "tally_of",
]  # fmt: skip


TIE_ELO = 0.1
"""Ratings closer than this (in Elo) cannot tell bots apart: head-to-head and then the pair score decide."""


@dataclass
class Standings:
    """The whole summary of a set of records."""

    bots: list[BotRow]  # best first (by joint rating)
    pairings: list[PairingRow]
    pairs: list[PairRow]  # every complete or partial pair: its games and pair score
    matches: int  # matches recorded, those of open pairs included
    sprt: SprtResult | None = None
    ratings: Ratings | None = None
    config: TournamentConfig | None = None
    open_pairs: int = 0  # pairs with one game played: left out of every count above
    ranks: list[int] = field(default_factory=list)  # the rank of each of ``bots`` (equal for a shared rank)

    def rank_text(self, i: int) -> str:
        """The rank of ``bots[i]`` as shown: ``3``, or ``3=`` when it shares the rank with another bot."""
        if i >= len(self.ranks):
            return str(i + 1)
        r = self.ranks[i]
        return f"{r}=" if self.ranks.count(r) > 1 else str(r)

    @property
    def counted(self) -> int:
        """The matches the standings count (those of complete pairs)."""
        return self.matches - self.open_pairs

    @property
    def flagged(self) -> list[BotRow]:
        """The bots the asymmetry test flags, in standings order."""
        return [b for b in self.bots if b.asymmetry is not None and b.asymmetry.flagged]


def check_consistent(row: PairingRow) -> None:
    """:class:`TournamentError` unless ``row``'s W/D/L are exactly the games of its pentanomial pairs: two games
    a pair, and the first bot's points (a win 2, a draw 1, in half points) summed over the pairs' buckets."""
    half_points = sum(k * n for k, n in enumerate(row.pentanomial))
    if row.games != 2 * row.pairs or 2 * row.wins + row.draws != half_points:
        raise TournamentError(
            f"{row.first} vs {row.second}: +{row.wins} ={row.draws} -{row.losses} disagrees with the pentanomial "
            f"counts {row.pentanomial} of {plural(row.pairs, 'pair')}"
        )


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

    def add(self, rec: Record) -> Record | None:
        """Count one finished match: a pair's first game waits for its twin, and both count together (only
        complete pairs make the standings). Returns the twin when ``rec`` completes its pair."""
        self.matches += 1
        key = (rec.spec.pairing, rec.spec.pair)
        first = self.open.pop(key, None)
        if first is None:
            self.open[key] = rec
            return None
        for game in (first, rec):
            self._count(game)
        pr = self.prows[rec.spec.pairing]
        pts = first.points_of(pr.first) + rec.points_of(pr.first)
        pr.add_pair(pts)
        self.rows[pr.first].add_pair_score(pts / 2)
        self.rows[pr.second].add_pair_score(1 - pts / 2)
        if {first.order, rec.order} == {1, 2}:
            one, two = (first, rec) if first.order == 1 else (rec, first)
            d = two.margin_of(pr.first) - one.margin_of(pr.first)
            self.rows[pr.first].order_diffs.add(d)
            self.rows[pr.second].order_diffs.add(-d)
        return first

    def feed(self, records: Iterable[Record]) -> Iterator[Record]:
        """``records``, each counted (:meth:`add`) as it passes: to write them out and count them in one pass."""
        for rec in records:
            self.add(rec)
            yield rec

    def _count(self, rec: Record) -> None:
        """Count one game of a complete pair: results, statistics and forfeits of both bots."""
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

    def _ranked(self, rows: list[BotRow]) -> tuple[list[BotRow], list[int]]:
        """``rows`` best first, and their ranks: by joint rating; bots whose ratings agree (within TIE_ELO) are
        ordered by their head-to-head points against each other, then by their pentanomial score (the mean pair
        score), and share a rank when both agree too."""
        by_elo = sorted(rows, key=lambda b: (-_elo(b), b.name))
        groups: list[list[BotRow]] = []
        for b in by_elo:  # a gap under TIE_ELO from the bot above: the same group (no rounding boundary splits it)
            if groups and _elo(groups[-1][-1]) - _elo(b) < TIE_ELO:
                groups[-1].append(b)
            else:
                groups.append([b])
        ordered: list[BotRow] = []
        ranks: list[int] = []
        for group in groups:
            names = {b.name for b in group}
            h2h = dict.fromkeys(names, 0.0)
            for p in self.prows:
                if p.first in names and p.second in names:
                    h2h[p.first] += p.wins + p.draws / 2
                    h2h[p.second] += p.losses + p.draws / 2
            group.sort(key=lambda b: (-h2h[b.name], -round(_score(b), 6), b.name))
            for k, b in enumerate(group):
                prev = group[k - 1]
                same = k > 0 and (h2h[b.name], round(_score(b), 6)) == (h2h[prev.name], round(_score(prev), 6))
                ranks.append(ranks[-1] if same else len(ordered) + 1)
                ordered.append(b)
        return ordered, ranks

    def totals(self) -> dict[tuple[str, str], tuple[int, int, int]]:
        """Wins, draws and losses of each pairing's first bot, by (first, second)."""
        return {(p.first, p.second): (p.wins, p.draws, p.losses) for p in self.prows}

    def sprt(self, params: Sprt) -> SprtResult:
        """The SPRT of the first pairing on its complete pairs only."""
        return sprt(self.prows[0].pentanomial, params.elo0, params.elo1, params.alpha, params.beta)

    def standings(self, sprt_params: Sprt | None = None, pair_list: Sequence[PairRow] = ()) -> Standings:
        """The standings so far, over complete pairs only (a pair whose twin is not played is left out and
        counted in :attr:`Standings.open_pairs`); :class:`TournamentError` if a pairing's W/D/L disagrees with
        its pentanomial counts."""
        for pr in self.prows:
            check_consistent(pr)
        rows = {name: BotRow(**vars(row)) for name, row in self.rows.items()}
        names = [b.name for b in self.config.bots]
        ratings = fit(names, self.totals())
        for r in ratings.ratings:
            rows[r.name].rating = r
        for row in rows.values():
            row.asymmetry = row.order_diffs.test()
        ordered, ranks = self._ranked(list(rows.values()))
        for above, below in itertools.pairwise(ordered):
            if above.rating and below.rating and above.rating.enough and below.rating.enough:
                above.los = ratings.los(above.name, below.name)
        result = Standings(
            ordered, list(self.prows), list(pair_list), self.matches, ratings=ratings, config=self.config,
            open_pairs=len(self.open), ranks=ranks,
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
    pairing (the records held in memory: for a folder, :func:`tally_of` and :func:`pair_rows` stream them)."""
    recs = sorted(records, key=lambda r: r.spec.index)
    tally = tally_of(config, recs)
    return tally.standings(sprt_params, list(pair_rows(config, _group_pairs(recs).values())))


def tally_of(config: TournamentConfig, records: Iterable[Record]) -> Tally:
    """The running totals of ``records`` fed in the order given (schedule order makes :func:`compute`'s
    standings): one pass, only the open pairs held."""
    tally = Tally(config)
    for r in records:
        tally.add(r)
    return tally


def pair_rows(config: TournamentConfig, pairs: Iterable[dict[str, Record]]) -> Iterator[PairRow]:
    """The pair list's rows, one a pair (its games by letter, one or both), in the order given."""
    plist = pairings(config)
    for games in pairs:
        spec = next(iter(games.values())).spec
        p = plist[spec.pairing]
        yield PairRow(p.key, spec.pair, p.first, p.second, games)


class SprtStop:
    """When the SPRT of the first pairing first decided (:attr:`point`: after how many of its complete pairs;
    None: not yet), fed the records in the order they finished (those of other pairings are passed over)."""

    def __init__(self, config: TournamentConfig, params: Sprt) -> None:
        self.params = params
        self.tally = Tally(config)
        self.point: int | None = None

    def add(self, rec: Record) -> None:
        """One more finished match."""
        if self.point is not None or rec.spec.pairing != 0:
            return
        before = self.tally.prows[0].pairs
        self.tally.add(rec)
        if self.tally.prows[0].pairs > before and self.tally.sprt(self.params).state is not SprtState.CONTINUE:
            self.point = self.tally.prows[0].pairs


def sprt_stop_point(config: TournamentConfig, records: Iterable[Record], params: Sprt) -> int | None:
    """After how many complete pairs of the first pairing the SPRT first decided, the records taken in the order
    they finished (None: it never did). Pairs that were in flight then and finished after are counted in the
    final SPRT, not here."""
    stop = SprtStop(config, params)
    for rec in records:
        stop.add(rec)
        if stop.point is not None:
            return stop.point
    return None


def rating_history(
    config: TournamentConfig, records: Iterable[Record], points: int = 40, total: int | None = None
) -> list[tuple[int, dict[str, float]]]:
    """How the ratings settled: (matches so far, Elo by bot) at up to ``points`` checkpoints, the records taken
    in the order given (the order they finished in); ``total``: how many there are, so that an iterator of them
    is read once and not held (None: they are counted first)."""
    if total is None:
        records = list(records)
        total = len(records)
    if total == 0:
        return []
    marks = sorted({max(1, round(total * k / points)) for k in range(1, points + 1)})
    tally = Tally(config)
    names = [b.name for b in config.bots]
    history: list[tuple[int, dict[str, float]]] = []
    done = 0
    it = iter(records)
    for mark in marks:
        for rec in itertools.islice(it, mark - done):
            tally.add(rec)
            done += 1
        history.append((done, elos(names, tally.totals(), history[-1][1] if history else None)))
    return history


def _elo(row: BotRow) -> float:
    return row.rating.elo if row.rating is not None else 0.0


def _score(row: BotRow) -> float:
    est = row.estimate
    return est.score if est else 0.0
