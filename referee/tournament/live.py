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
from referee.tournament.report import report_meta, table, write_matches, write_standings
from referee.tournament.standings import Tally, pair_rows
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
        self.tally = Tally(store.config)
        self.results = 0
        self.written = False
        if interim.pairs:
            for rec in store.records_in_order():
                self.tally.add(rec)
        self.shown_pairs = self._pairs()

    def _pairs(self) -> int:
        return sum(p.pairs for p in self.tally.prows)

    def add(self, rec: Record) -> None:
        """One more match recorded: write or show the interim report when one is due."""
        self.results += 1
        if self.interim.pairs:
            self.tally.add(rec)
            pairs = self._pairs()
            last = self.store.done == len(self.store.schedule)  # the final table follows at once
            if pairs // self.interim.pairs > self.shown_pairs // self.interim.pairs and not last:
                self.shown_pairs = pairs
                st = self.tally.standings(self.store.options.sprt)
                board = table(st, self.store.config.sandbox).split("\n\n")[0]  # the leaderboard and head-to-head
                self.say(f"interim standings after {plural(pairs, 'pair')}:\n{board}")
        if self.interim.results and self.results % self.interim.results == 0:
            self.write()

    def write(self, running: bool = True) -> None:
        """Rewrite ``standings.json`` (``"running": true``) and the other report files, and with ``html`` the
        home page, from what is recorded so far; ``running`` False: the run was interrupted (the page says so and
        stops refreshing)."""
        store = self.store
        tally = Tally(store.config)
        write_matches(store.root, tally.feed(store.records_in_order()))
        st = tally.standings(store.options.sprt)
        meta = report_meta(store.config, store.options.shard, len(store.schedule), False, st)
        write_standings(store.root, st, {**meta, "running": running}, pair_rows(store.config, store.pairs_in_order()))
        if self.interim.html:
            from referee.tournament.digest import Digest
            from referee.tournament.pages import running_facts, write_home

            facts = running_facts(st, store.done, len(store.schedule), running)
            digest = Digest.of(store.config, store.root, store.iter_records())
            write_home(store.root, st, digest, facts, REFRESH_S if running else 0)
        self.written = True

    def interrupted(self) -> None:
        """The run stops before its end: interim pages already written say so (and stop refreshing)."""
        if self.written:
            self.write(running=False)
