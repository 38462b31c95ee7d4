"""Interim reports of a running tournament: the standings files and home page rewritten every N results
("running: N of M", the page refreshing itself), and interim standings on the terminal every N complete pairs
(as cutechess's ``-ratinginterval``).

Both read what is recorded, like the final report: only complete pairs count, so an interim table and the final
one differ only by the pairs played in between.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from referee.text import plural
from referee.tournament.records import Record
from referee.tournament.report import report_meta, table, write_standings_texts
from referee.tournament.store import Store

REFRESH_S = 30
"""How often a running tournament's home page reloads itself, in seconds."""


@dataclass(frozen=True)
class Interim:
    """How often a running tournament reports: every ``results`` recorded matches the standings files (and
    with ``html`` the home page) are rewritten, every ``pairs`` complete pairs the terminal shows the standings
    (0: never)."""

    results: int = 0
    pairs: int = 0
    html: bool = True
    quiet: bool = False  # no line (or bar) a finished match

    @property
    def active(self) -> bool:
        """Whether any interim report is asked for."""
        return self.results > 0 or self.pairs > 0


class LiveReport:
    """The interim reports of one run over ``store``: :meth:`add` each recorded match; ``say`` prints a block of
    text on the terminal."""

    def __init__(self, store: Store, interim: Interim, say: Callable[[str], None]) -> None:
        self.store = store
        self.interim = interim
        self.say = say
        self.results = 0
        self.written = False
        self.shown_pairs = self._pairs()

    def _pairs(self) -> int:
        return sum(p.pairs for p in self.store.collection().tally.prows)

    def add(self, rec: Record) -> None:
        """One more match recorded (and collected by the store): write or show the interim report when one is
        due."""
        self.results += 1
        if self.interim.pairs:
            pairs = self._pairs()
            last = self.store.done == len(self.store.schedule)  # the final table follows at once
            if pairs // self.interim.pairs > self.shown_pairs // self.interim.pairs and not last:
                self.shown_pairs = pairs
                st = self.store.collection().tally.standings(self.store.options.sprt)
                board = table(st, self.store.config.sandbox).split("\n\n")[0]  # the leaderboard and head-to-head
                self.say(f"interim standings after {plural(pairs, 'pair')}:\n{board}")
        if self.interim.results and self.results % self.interim.results == 0:
            self.write()

    def write(self, running: bool = True) -> None:
        """Rewrite ``standings.json`` (``"running": true``) and the other report files, and with ``html`` the
        home page, from what is recorded so far (what the store collected: nothing is read again); ``running``
        False: the run was interrupted (the page says so and stops refreshing)."""
        store = self.store
        c = store.collection()
        c.rows.write(store.root)
        st = c.tally.standings(store.options.sprt)
        meta = report_meta(store.config, store.options.shard, len(store.schedule), False, st)
        write_standings_texts(store.root, st, {**meta, "running": running}, c.pairs_done().texts())
        if self.interim.html:
            from referee.tournament.pages import running_facts, write_home

            facts = running_facts(st, store.done, len(store.schedule), running)
            with store.reader() as read:
                digest = c.digest.resolved(read)
            write_home(store.root, st, digest, facts, REFRESH_S if running else 0)
        self.written = True

    def interrupted(self) -> None:
        """The run stops before its end: interim pages already written say so (and stop refreshing)."""
        if self.written:
            self.write(running=False)
