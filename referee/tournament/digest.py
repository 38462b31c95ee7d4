"""What the home page and the bot pages show beyond the standings, gathered in one pass over the results and
bounded however many there are.

A :class:`Digest` takes the records one by one (in the order they finished) and keeps: the last
:data:`LAST_MATCHES` matches, each bot's last :data:`BOT_GAMES` games, each bot's last :data:`FAILED_LOGS`
forfeits whose stderr log is not empty, and the totals at up to ``2 * points`` checkpoints of the results
(every ``stride`` results, the stride doubling whenever the checkpoints fill up, so they stay evenly spread),
from which :attr:`Digest.history` fits the ratings when the pages are written.
The full list of matches is ``matches.csv``.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from referee.records import MatchResult, SeatStats
from referee.tournament.config import TournamentConfig
from referee.tournament.folder import Output
from referee.tournament.ratings import elos
from referee.tournament.records import Record
from referee.tournament.standings import Tally

LAST_MATCHES = 200
"""Matches listed on the home page: the last ones to finish."""

BOT_GAMES = 200
"""Games listed on a bot's page: its last ones."""

FAILED_LOGS = 50
"""Forfeits with a stderr log listed on a bot's page: its last ones."""

POINTS = 40
"""The fewest checkpoints of the ratings picture once there are that many results (at most twice as many)."""


def light(rec: Record) -> Record:
    """``rec`` without what no page shows: its round ends and its decision-time histograms (built field by
    field: ``dataclasses.replace`` costs several times more, and every record passes here)."""
    r = rec.result
    stats = tuple(SeatStats(s.decisions, s.total_ms, s.max_ms, s.bank_left_ms, {}, s.peak_memory)
                  for s in r.seat_stats)  # fmt: skip
    result = MatchResult(r.match_id, r.winner, r.scores, r.rounds, r.reason, r.forfeit, r.names, r.seed, r.decisions,
                         (), stats)  # fmt: skip
    return Record(rec.spec, result, rec.played, rec.order)


def has_log(path: Path) -> bool:
    """Whether ``path`` is a non-empty file."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


Entry = Record | int
"""A match the digest keeps: its record (without what no page shows), or the byte offset of its result line,
read back when the pages are written (:meth:`Digest.resolved`)."""


@dataclass
class Digest:
    """The bounded extras of the pages of the tournament folder ``root`` (see the module's text); :meth:`add`
    each record in the order they finished. Given the offset of each record's result line, it keeps only the
    offsets (a few bytes a kept match, whatever the number of bots) and the pages read those records back
    (:meth:`resolved`)."""

    config: TournamentConfig
    root: Path
    points: int = POINTS
    count: int = 0
    last: deque[Entry] = field(default_factory=lambda: deque(maxlen=LAST_MATCHES))
    games: dict[str, deque[Entry]] = field(default_factory=dict)
    played: dict[str, int] = field(default_factory=dict)  # games recorded by bot
    failed: dict[str, deque[tuple[Entry, str]]] = field(default_factory=dict)  # (match, its log from root)
    checkpoints: list[tuple[int, array[int]]] = field(default_factory=list)  # (results so far, totals then)
    stride: int = 1
    tally: Tally | None = None
    """The totals the ratings are fitted to; given, it is fed by its owner before each :meth:`add` (the
    store's collection, in one pass); None: the digest keeps and feeds its own."""
    _feeds: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.tally is None:
            self.tally, self._feeds = Tally(self.config), True

    @staticmethod
    def of(config: TournamentConfig, root: Path, records: Iterable[Record]) -> Digest:
        """The digest of ``records`` (consumed once, each kept as a record)."""
        digest = Digest(config, root)
        for rec in records:
            digest.add(rec)
        return digest

    def add(self, rec: Record, offset: int | None = None) -> None:
        """One more finished match (already counted in :attr:`tally` when the tally was given); ``offset``: where
        its result line is, kept instead of the record."""
        self.count += 1
        if self._feeds:
            assert self.tally is not None
            self.tally.add(rec)
        entry: Entry = light(rec) if offset is None else offset
        self.last.append(entry)
        for name in dict.fromkeys(rec.spec.seats):
            self.games.setdefault(name, deque(maxlen=BOT_GAMES)).append(entry)
            self.played[name] = self.played.get(name, 0) + 1
        off = rec.offender
        if off is not None:
            log = Output(self.root).log(rec.spec.match_id, off[0])
            if has_log(log):
                self.failed.setdefault(off[0], deque(maxlen=FAILED_LOGS)).append(
                    (entry, log.relative_to(self.root).as_posix())
                )
        if self.count % self.stride == 0:
            self._checkpoint()
            if len(self.checkpoints) >= 2 * self.points:  # keep every other one, then take half as many
                self.checkpoints = self.checkpoints[1::2]
                self.stride *= 2

    def resolved(self, read: Callable[[int], Record]) -> Digest:
        """A copy whose kept matches are all records: each offset read back once with ``read``."""
        seen: dict[int, Record] = {}

        def rec(entry: Entry) -> Record:
            if isinstance(entry, Record):
                return entry
            if entry not in seen:
                seen[entry] = light(read(entry))
            return seen[entry]

        def each(entries: deque[Entry]) -> deque[Entry]:
            return deque((rec(e) for e in entries), maxlen=entries.maxlen)

        return replace(
            self,
            last=each(self.last),
            games={name: each(d) for name, d in self.games.items()},
            failed={name: deque(((rec(e), log) for e, log in d), maxlen=d.maxlen) for name, d in self.failed.items()},
            checkpoints=list(self.checkpoints),
            played=dict(self.played),
        )

    def last_matches(self) -> list[Record]:
        """The last matches to finish (those kept), in the order they finished."""
        return _records(self.last)

    def waiting(self, rec: Record) -> bool:
        """Whether ``rec`` is a game whose twin (the other game of its deal pair) is still to be played: its
        replay and its bots' logs show the deal the twin plays, and its forfeit detail a seat's cards, so no page
        links or quotes them yet."""
        assert self.tally is not None
        first = self.tally.open.get((rec.spec.pairing, rec.spec.pair))
        return first is not None and first.spec.match_id == rec.spec.match_id

    def games_of(self, name: str) -> list[Record]:
        """Bot ``name``'s last games (those kept), in the order they finished."""
        return _records(self.games.get(name, ()))

    def failed_of(self, name: str) -> list[tuple[Record, str]]:
        """Bot ``name``'s last forfeits with a log (those kept): (match, its log from the folder)."""
        entries = self.failed.get(name, ())
        return list(zip(_records(e for e, _ in entries), (log for _, log in entries), strict=True))

    def _now(self) -> tuple[int, array[int]]:
        """(results so far, the wins, draws and losses of each pairing's first bot, three numbers a pairing)."""
        assert self.tally is not None
        totals = array("i")
        for p in self.tally.prows:
            totals.extend((p.wins, p.draws, p.losses))
        return self.count, totals

    def _checkpoint(self) -> None:
        self.checkpoints.append(self._now())

    @property
    def history(self) -> list[tuple[int, dict[str, float]]]:
        """(matches so far, Elo by bot) at the checkpoints, the last one after the last record: the ratings are
        fitted here, for the pages, each from the one before (the checkpoints keep only the totals)."""
        assert self.tally is not None
        points = list(self.checkpoints)
        if not points or points[-1][0] != self.count:
            points.append(self._now())
        if self.count == 0:
            return []
        names = [b.name for b in self.config.bots]
        keys = [(p.first, p.second) for p in self.tally.plist]
        out: list[tuple[int, dict[str, float]]] = []
        start: dict[str, float] | None = None
        for count, t in points:
            totals = {keys[k]: (t[3 * k], t[3 * k + 1], t[3 * k + 2]) for k in range(len(t) // 3)}
            # a checkpoint before a ladder step knows fewer pairings: the bots it adds are not rated there yet
            present = [n for n in names if any(n in pair for pair in totals)]
            try:
                fitted = elos(present, totals, None if start is None else {n: start.get(n, 0.0) for n in present})
            except ValueError:  # no finite fit (the prior keeps one finite): leave the point out of the chart
                continue
            start = {**(start or {}), **fitted}
            out.append((count, fitted))
        return out

    def logs(self, name: str, most: int) -> list[str]:
        """Up to ``most`` non-empty stderr logs of bot ``name`` (folder paths): of its last forfeits first, then
        of its last games; none of a game whose twin is still to be played (:meth:`waiting`)."""
        out = [log for rec, log in reversed(self.failed_of(name)) if not self.waiting(rec)][:most]
        for rec in reversed(self.games_of(name)):
            if len(out) >= most:
                break
            if self.waiting(rec):
                continue
            log = Output(self.root).log(rec.spec.match_id, name)
            entry = log.relative_to(self.root).as_posix()
            if entry not in out and has_log(log):
                out.append(entry)
        return out


def _records(entries: Iterable[Entry]) -> list[Record]:
    """``entries`` as records: a digest that keeps offsets is shown through :meth:`Digest.resolved`."""
    given = list(entries)
    out = [e for e in given if isinstance(e, Record)]
    if len(out) != len(given):
        raise ValueError("this digest keeps offsets: show it through Digest.resolved")
    return out
