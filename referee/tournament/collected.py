"""What a folder's report needs, gathered as its results pass through the store, so that the end of a run writes
its report without reading the results again.

A :class:`Collected` is fed each counting record once, in the order they finished: when the store opens a folder
(the check of every line reads them all anyway) and as each new result is appended. It keeps the running totals
(:class:`~referee.tournament.standings.Tally`), the rows of ``matches.csv`` and of the pair list (in temporary
files, four bytes a match in memory: :class:`~referee.tournament.report.MatchRows`,
:class:`~referee.tournament.report.PairList`), the pages' :class:`~referee.tournament.digest.Digest` and when the
SPRT stopped: all bounded by the bots and pairings, never by the matches.

A pair dealt afresh after one of its games was counted cannot be taken back out of the totals, and a row that could
not be written (a full disk) is lost: the store then marks the collection stale (:attr:`Collected.stale`) and the
report reads the results once more (:meth:`Store.collection <referee.tournament.store.Store.collection>`).
"""

from __future__ import annotations

import contextlib
from array import array
from pathlib import Path
from typing import IO

from referee.tournament.config import Sprt, TournamentConfig
from referee.tournament.digest import Digest
from referee.tournament.ledger import Ledger
from referee.tournament.records import PairRow, Record
from referee.tournament.report import MatchRows, PairList
from referee.tournament.standings import SprtStop, Tally


class Collected:
    """The report's running state for the schedule ``ledger`` of the folder ``root`` (see the module's text)."""

    def __init__(self, config: TournamentConfig, ledger: Ledger, root: Path, sprt: Sprt | None) -> None:
        self.config = config
        self.ledger = ledger
        self.tally = Tally(config)
        # the rows wait beside the results (the system's temporary folder may be memory)
        self.rows = MatchRows(ledger, root)
        self.pair_list = PairList([ledger.pairs_of(k) for k in range(len(ledger.plist))], root)
        self.digest = Digest(config, root, tally=self.tally)
        self.stop = SprtStop(config, sprt) if sprt is not None else None
        self.stale = False
        """True once a counted record stopped counting (its pair dealt afresh): the totals are no longer those
        of the folder."""

    def add(self, rec: Record, offset: int) -> None:
        """One more counting record (in the order they finished), its result line at byte ``offset``."""
        twin = self.tally.add(rec)
        self.rows.add(rec)
        if twin is not None:
            self.pair_list.add(pair_row(self.tally, (twin, rec)), rec.spec.pairing)
        self.digest.add(rec, offset)
        if self.stop is not None:
            self.stop.add(rec)

    def pairs_done(self) -> PairList:
        """The pair list with the pairs still waiting for their twin (one game recorded) in it as they stand."""
        for first in self.tally.open.values():
            self.pair_list.add(pair_row(self.tally, (first,)), first.spec.pairing)
        return self.pair_list

    def restage(self, config: TournamentConfig) -> None:
        """Take on ``config`` (a ladder step more: new bots and pairings after the old ones); stale when the
        pairings do not extend the old ones."""
        old = [(p.first, p.second) for p in self.tally.plist]
        fresh = Tally(config)
        if [(p.first, p.second) for p in fresh.plist[: len(old)]] != old:
            self.stale = True
            return
        fresh.rows.update(self.tally.rows)
        fresh.prows[: len(old)] = self.tally.prows
        fresh.open, fresh.matches = self.tally.open, self.tally.matches
        self.tally = self.digest.tally = fresh
        self.config = self.digest.config = config

    def scratch(self) -> tuple[dict[str, tuple[IO[bytes], int]], dict[str, list[array[int]]]]:
        """What a checkpoint carries beside the pickle, named as it names them: the temporary files of the rows,
        each with how many of its first bytes count, and where each row is in them."""
        (rows, at), (pairs, pairs_at) = self.rows.scratch(), self.pair_list.scratch()
        return {"rows": rows, "pairs": pairs}, {"rows-at": at, "pairs-at": pairs_at}

    def close(self) -> None:
        """Remove the temporary files (a full disk's error on the way is of no account: they are scratch)."""
        for scratch in (self.rows, self.pair_list):
            with contextlib.suppress(OSError):
                scratch.close()


def pair_row(tally: Tally, games: tuple[Record, ...]) -> PairRow:
    """The pair list's row of a pair's recorded ``games`` (listed a before b)."""
    spec = games[0].spec
    p = tally.plist[spec.pairing]
    return PairRow(p.key, spec.pair, p.first, p.second, {g.spec.game: g for g in sorted(games, key=_game)})


def _game(rec: Record) -> str:
    return rec.spec.game
