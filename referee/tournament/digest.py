"""What the home page and the bot pages show beyond the standings, gathered in one pass over the results and
bounded however many there are.

A :class:`Digest` takes the records one by one (in the order they finished) and keeps: the last
:data:`LAST_MATCHES` matches, each bot's last :data:`BOT_GAMES` games, each bot's last :data:`FAILED_LOGS`
forfeits whose stderr log is not empty, and the ratings at up to ``2 * points`` checkpoints of the results
(every ``stride`` results, the stride doubling whenever the checkpoints fill up, so they stay evenly spread).
The full list of matches is ``matches.csv``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

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
    """``rec`` without what no page shows: its round ends and its decision-time histograms."""
    stats = tuple(replace(s, histogram={}) for s in rec.result.seat_stats)
    return replace(rec, result=replace(rec.result, round_ends=(), seat_stats=stats))


def has_log(path: Path) -> bool:
    """Whether ``path`` is a non-empty file."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


@dataclass
class Digest:
    """The bounded extras of the pages of the tournament folder ``root`` (see the module's text); :meth:`add`
    each record in the order they finished."""

    config: TournamentConfig
    root: Path
    points: int = POINTS
    count: int = 0
    last: deque[Record] = field(default_factory=lambda: deque(maxlen=LAST_MATCHES))
    games: dict[str, deque[Record]] = field(default_factory=dict)
    played: dict[str, int] = field(default_factory=dict)  # games recorded by bot
    failed: dict[str, deque[tuple[Record, str]]] = field(default_factory=dict)  # (record, its log from root)
    checkpoints: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    stride: int = 1
    tally: Tally | None = None

    @staticmethod
    def of(config: TournamentConfig, root: Path, records: Iterable[Record]) -> Digest:
        """The digest of ``records`` (consumed once)."""
        digest = Digest(config, root)
        for rec in records:
            digest.add(rec)
        return digest

    def add(self, rec: Record) -> None:
        """One more finished match."""
        self.count += 1
        if self.tally is None:
            self.tally = Tally(self.config)
        self.tally.add(rec)
        rec = light(rec)
        self.last.append(rec)
        for name in dict.fromkeys(rec.spec.seats):
            self.games.setdefault(name, deque(maxlen=BOT_GAMES)).append(rec)
            self.played[name] = self.played.get(name, 0) + 1
        off = rec.offender
        if off is not None:
            log = Output(self.root).log(rec.spec.match_id, off[0])
            if has_log(log):
                entry = (rec, log.relative_to(self.root).as_posix())
                self.failed.setdefault(off[0], deque(maxlen=FAILED_LOGS)).append(entry)
        if self.count % self.stride == 0:
            self._checkpoint()
            if len(self.checkpoints) >= 2 * self.points:  # keep every other one, then take half as many
                self.checkpoints = self.checkpoints[1::2]
                self.stride *= 2

    def _now(self) -> tuple[int, dict[str, float]]:
        assert self.tally is not None
        names = [b.name for b in self.config.bots]
        start = self.checkpoints[-1][1] if self.checkpoints else None
        return self.count, elos(names, self.tally.totals(), start)

    def _checkpoint(self) -> None:
        self.checkpoints.append(self._now())

    @property
    def history(self) -> list[tuple[int, dict[str, float]]]:
        """(matches so far, Elo by bot) at the checkpoints, the last one after the last record."""
        if self.checkpoints and self.checkpoints[-1][0] != self.count:
            return [*self.checkpoints, self._now()]
        return list(self.checkpoints)

    def logs(self, name: str, most: int) -> list[str]:
        """Up to ``most`` non-empty stderr logs of bot ``name`` (folder paths): of its last forfeits first, then
        of its last games."""
        out = [log for _, log in reversed(self.failed.get(name, ()))][:most]
        for rec in reversed(self.games.get(name, ())):
            if len(out) >= most:
                break
            log = Output(self.root).log(rec.spec.match_id, name)
            entry = log.relative_to(self.root).as_posix()
            if entry not in out and has_log(log):
                out.append(entry)
        return out
