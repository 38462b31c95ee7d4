"""A run's matches as work units, dealt one unit at a time.

A worker plays a unit's matches one after the other: one pairing's consecutive deal pairs, each pair's two games
side by side, its first-played game first (:func:`~referee.tournament.schedule.work_units` has the shape). A run of
a whole schedule does not deal it up front: :meth:`Units.pending` keeps only the pending pairs' numbers, four bytes
a pair, and deals each unit's matches when a backend takes it, so a million-match schedule starts with a few MB,
not with every match dealt; the backends keep a bounded number of units queued (:mod:`referee.tournament.runner`,
:mod:`referee.tournament.ray_backend`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence

from referee.tournament.ledger import Ledger
from referee.tournament.schedule import MatchSpec, unit_pairs, work_units


class Units:
    """``count`` work units of ``matches`` matches in all, dealt one at a time by iterating (each iteration deals
    them afresh, in the same order)."""

    def __init__(self, count: int, matches: int, deal: Callable[[], Iterator[list[MatchSpec]]]) -> None:
        self.count = count
        self.matches = matches
        self._deal = deal

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[list[MatchSpec]]:
        return self._deal()

    @staticmethod
    def of(matches: Sequence[MatchSpec], jobs: int) -> Units:
        """The units of a list of matches already dealt (the twins a stop left, the pairs an extension added)."""
        units = work_units(list(matches), jobs)
        return Units(len(units), len(matches), lambda: iter(units))

    @staticmethod
    def pending(ledger: Ledger, jobs: int) -> Units:
        """The units of ``ledger``'s matches without a recorded result, the units of :func:`work_units` of
        ``list(ledger.pending())``: each pending pair kept as its number and which of its games are pending, each
        unit dealt when it is taken."""
        by_pairing: dict[int, array[int]] = {}
        matches = 0
        for _, pairing, pair in ledger.pair_keys():
            games = sum(1 << g for g in (0, 1) if ledger.slot_offset(pairing, pair, g) < 0)
            if games:
                by_pairing.setdefault(pairing, array("i")).append(pair << 2 | games)
                matches += games.bit_count()
        size = unit_pairs(matches, jobs)
        count = sum(-(-len(pairs) // size) for pairs in by_pairing.values())

        def deal() -> Iterator[list[MatchSpec]]:
            for pairing in sorted(by_pairing):
                pairs = by_pairing[pairing]
                for start in range(0, len(pairs), size):
                    unit: list[MatchSpec] = []
                    for code in pairs[start : start + size]:
                        specs = ledger.pair(pairing, code >> 2)
                        unit += sorted((m for g, m in enumerate(specs) if code >> g & 1), key=lambda m: m.order)
                    yield unit

        return Units(count, matches, deal)
