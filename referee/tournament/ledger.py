"""The schedule of a tournament folder as dealt now, and where each recorded match's result is, kept compact.

A folder's schedule is never held as a list: a :class:`Ledger` deals any entry on demand from its pairing, pair
and game (:func:`~referee.tournament.schedule.pair_specs`), with what ``results.jsonl`` changed since the
schedule was made: the pairs dealt afresh (``redeal`` lines), the pairs added (``extend`` lines). Which matches
are recorded is one array a pairing, indexed by pair and game, holding the byte offset of the result that counts
(-1: none yet), four bytes a match (a pairing's array widens to eight bytes once an offset passes 2 GiB), so a
million-match folder keeps about 4 MB of them and reads its results back in any order (schedule order, pair order,
the order they finished) one at a time.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from referee.tournament.config import TournamentConfig
from referee.tournament.schedule import MatchSpec, Pairing, pair_specs, pairing_blocks, redealt

GAMES = ("a", "b")
"""The two games of a pair, in schedule order."""
DEALT = 256
"""Pairs the ledger keeps dealt (:meth:`Ledger.pair`): a bounded cache, whatever the schedule's size."""
NARROW = 2**31 - 1
"""The largest offset a pairing's four-byte array holds; a larger one widens it to eight bytes."""


def slots(n: int) -> array[int]:
    """``n`` empty slots (-1) of four bytes each, for offsets (:func:`put` widens them when one needs eight)."""
    return array("i", [-1]) * n


def put(arrays: list[array[int]], k: int, i: int, value: int) -> None:
    """``arrays[k][i] = value``, ``arrays[k]`` widened to eight bytes a slot first when ``value`` needs it, and
    the arrays grown with empty slots when ``k`` or ``i`` is past their end (a pair or a pairing added)."""
    while k >= len(arrays):
        arrays.append(slots(0))
    arr = arrays[k]
    if i >= len(arr):
        arr.extend(slots(i + 1 - len(arr)))
    if value > NARROW and arr.typecode == "i":
        arr = arrays[k] = array("q", arr)
    arr[i] = value


@dataclass
class LedgerState:
    """What a :class:`Ledger` keeps beyond its config and shard (the state its folder's checkpoint saves)."""

    added: dict[tuple[int, int], int]
    """(pairing, pair) -> index, of the pairs added by extend lines."""
    redeals: dict[tuple[int, int], int]
    """(pairing, pair) -> deal number, of the pairs dealt afresh."""
    offsets: list[array[int]]
    """Pairing -> offset of the counting result of each game."""
    size: int
    """Games in the schedule."""
    recorded: int
    """Games with a counting result."""

    def well_formed(self) -> bool:
        """Its fields have their types (an unpickled state is checked before use)."""
        return (isinstance(self.added, dict) and isinstance(self.redeals, dict) and isinstance(self.offsets, list)
                and all(isinstance(a, array) for a in self.offsets) and isinstance(self.size, int)
                and isinstance(self.recorded, int))  # fmt: skip


class Ledger:
    """The schedule slice of a folder (shard ``shard``) as dealt now, and the offsets of its recorded results.

    It reads like the mapping it replaces: ``ledger[match_id]``, ``ledger.get(match_id)``, ``len(ledger)`` and
    :meth:`values` (every entry in schedule order, dealt one at a time).
    """

    def __init__(self, config: TournamentConfig, shard: tuple[int, int]) -> None:
        self.config = config
        self.shard = (int(shard[0]), int(shard[1]))
        self.plist: list[Pairing] = []
        self._blocks: list[tuple[int, list[Pairing]]] = []
        self._place: list[tuple[int, int, int]] = []  # pairing -> (block start, size, position in it)
        self._width = max(3, len(str(config.pairs - 1)))
        self.added: dict[tuple[int, int], int] = {}  # (pairing, pair) -> index of pairs added by extend lines
        self.redeals: dict[tuple[int, int], int] = {}  # (pairing, pair) -> deal number, for pairs dealt again
        self._offsets: list[array[int]] = []  # pairing -> offset of the counting result of 2 * pair + game
        self._size = 0
        self.recorded = 0
        self._dealt: dict[tuple[int, int], list[MatchSpec]] = {}  # the last DEALT pairs dealt, oldest first
        self.restage(config)

    def restage(self, config: TournamentConfig) -> None:
        """Take on ``config`` (the same schedule with a ladder step more): the new pairings join, nothing moves."""
        self.config = config
        self._dealt.clear()
        starts = [0, *(s.start for s in config.ladder)]
        self._blocks = list(zip(starts, pairing_blocks(config), strict=True))
        self.plist = [p for _, block in self._blocks for p in block]
        self._place = [(start, len(block), k) for start, block in self._blocks for k in range(len(block))]
        while len(self._offsets) < len(self.plist):
            self._offsets.append(slots(2 * config.pairs))
        self._size = sum(1 for _ in self.pair_keys()) * 2

    # --- the schedule -----------------------------------------------------------------------------------------

    def pairs_of(self, pairing: int) -> int:
        """How many pairs pairing ``pairing`` has (its first ``config.pairs`` and those added)."""
        return len(self._offsets[pairing]) // 2

    def index_of(self, pairing: int, pair: int) -> int:
        """The schedule position of game ``a`` of pair ``pair`` of pairing ``pairing``."""
        if pair >= self.config.pairs:
            return self.added[(pairing, pair)]
        start, size, k = self._place[pairing]
        return start + 2 * (pair * size + k)

    def in_shard(self, index: int) -> bool:
        """True when the pair at schedule position ``index`` is in this folder's shard."""
        k, n = self.shard
        return (index // 2) % n == k - 1

    def pair_keys(self) -> Iterator[tuple[int, int, int]]:
        """(index, pairing, pair) of every pair of the shard, in schedule order."""
        segments: list[tuple[int, int, int, list[Pairing]]] = [(s, -1, 0, b) for s, b in self._blocks]
        segments += [(index, pairing, pair, []) for (pairing, pair), index in self.added.items()]
        segments.sort(key=lambda s: s[0])
        for start, pairing, pair, block in segments:
            if pairing >= 0:
                if self.in_shard(start):
                    yield start, pairing, pair
                continue
            index = start
            for base_pair in range(self.config.pairs):
                for p in block:
                    if self.in_shard(index):
                        yield index, p.index, base_pair
                    index += 2

    def pair(self, pairing: int, pair: int) -> list[MatchSpec]:
        """Both games of pair ``pair`` of pairing ``pairing`` as dealt now (the last :data:`DEALT` pairs dealt
        are kept: a pair's two games are asked for close together, in schedule order and in the order they
        finished)."""
        key = (pairing, pair)
        specs = self._dealt.get(key)
        if specs is None:
            specs = pair_specs(self.config, self.plist[pairing], pair, self.index_of(pairing, pair))
            deal = self.redeals.get(key, 0)
            if deal:
                specs = [redealt(self.config, m, deal) for m in specs]
            if len(self._dealt) >= DEALT:
                del self._dealt[next(iter(self._dealt))]
            self._dealt[key] = specs
        return list(specs)

    def links(self) -> Links:
        """The schedule's shape as the match pages' links need it (as it stands: pairs added later are not in
        it)."""
        segments = [(s, s + 2 * self.config.pairs * len(b), -1, tuple((p.index, p.key) for p in b))
                    for s, b in self._blocks if b]  # fmt: skip
        segments += [(i, i + 2, pair, ((self.plist[pairing].index, self.plist[pairing].key),))
                     for (pairing, pair), i in self.added.items()]  # fmt: skip
        segments.sort()
        return Links(self.shard, self._width, tuple(x[0] for x in segments), tuple(x[1:] for x in segments))

    def values(self) -> Iterator[MatchSpec]:
        """Every entry of the shard, in schedule order, dealt one at a time."""
        for _, pairing, pair in self.pair_keys():
            yield from self.pair(pairing, pair)

    def __len__(self) -> int:
        return self._size

    def locate(self, match_id: str) -> tuple[int, int, int] | None:
        """(pairing, pair, game number) of ``match_id`` when it names an entry of the shard, else None."""
        try:
            pairing = int(match_id[: match_id.index("-")]) - 1
            pair = int(match_id[match_id.rindex("-") + 1 : -1])
            game = GAMES.index(match_id[-1])
        except ValueError:
            return None
        if not 0 <= pairing < len(self.plist) or not 0 <= pair < self.pairs_of(pairing):
            return None
        if match_id != self.match_id(pairing, pair, game):
            return None
        if not self.in_shard(self.index_of(pairing, pair)):
            return None
        return pairing, pair, game

    def get(self, match_id: str) -> MatchSpec | None:
        """The entry of ``match_id`` as dealt now (None: not in this folder's schedule)."""
        where = self.locate(match_id)
        return None if where is None else self.pair(where[0], where[1])[where[2]]

    def __getitem__(self, match_id: str) -> MatchSpec:
        spec = self.get(match_id)
        if spec is None:
            raise KeyError(match_id)
        return spec

    def places(self) -> list[tuple[int, int, int]]:
        """Where each pairing's base pairs are: (block start, block size, position in the block)."""
        return list(self._place)

    def _ranges(self) -> Iterator[tuple[int, int]]:
        """The schedule positions [start, end) of each block's base pairs and of each added pair."""
        yield from ((s, s + 2 * self.config.pairs * len(b)) for s, b in self._blocks)
        yield from ((i, i + 2) for i in self.added.values())

    def used(self, index: int) -> bool:
        """True when schedule position ``index`` holds a match (of any shard)."""
        return any(s <= index < e for s, e in self._ranges())

    def overlaps(self) -> bool:
        """True when an added pair lies inside a block's base pairs (a ladder step over it)."""
        blocks = [(s, s + 2 * self.config.pairs * len(b)) for s, b in self._blocks]
        return any(s <= i < e for i in self.added.values() for s, e in blocks)

    def next_index(self) -> int:
        """The schedule position after every entry of the shard: where a ladder step or an added pair starts."""
        k, n = self.shard
        end = 0
        for s, e in self._ranges():
            last = e // 2 - 1 - ((e // 2 - 1 - (k - 1)) % n)  # the shard's last pair position in the range
            if last >= s // 2:
                end = max(end, 2 * last + 2)
        return end

    def pending(self) -> Iterator[MatchSpec]:
        """The entries without a recorded result, in schedule order (only the pairs with one are dealt)."""
        for _, pairing, pair in self.pair_keys():
            slots = self._offsets[pairing]
            if slots[2 * pair] < 0 or slots[2 * pair + 1] < 0:
                specs = self.pair(pairing, pair)
                yield from (m for g, m in enumerate(specs) if slots[2 * pair + g] < 0)

    def pending_ids(self) -> Iterator[tuple[int, int, str]]:
        """(pairing, pair, match id) of each entry without a recorded result, in schedule order, nothing dealt."""
        for _, pairing, pair in self.pair_keys():
            slots = self._offsets[pairing]
            for g in (0, 1):
                if slots[2 * pair + g] < 0:
                    yield pairing, pair, self.match_id(pairing, pair, g)

    def recorded_ids(self) -> Iterator[str]:
        """The match id of each entry with a recorded result, in schedule order, nothing dealt."""
        for _, pairing, pair in self.pair_keys():
            slots = self._offsets[pairing]
            for g in (0, 1):
                if slots[2 * pair + g] >= 0:
                    yield self.match_id(pairing, pair, g)

    def add_pair(self, pairing: int, pair: int, index: int) -> list[MatchSpec]:
        """Pair ``pair`` (the pairing's next) of ``pairing`` joins the schedule at position ``index``."""
        self.added[(pairing, pair)] = index
        self._dealt.clear()
        self._offsets[pairing].extend((-1, -1))
        if self.in_shard(index):
            self._size += 2
        return self.pair(pairing, pair)

    def redeal(self, pairing: int, pair: int, deal: int) -> None:
        """Deal pair ``pair`` of ``pairing`` afresh (deal number ``deal``): its results stop counting."""
        self.redeals[(pairing, pair)] = deal
        self._dealt.clear()
        for g in range(2):
            self._unmark(pairing, 2 * pair + g)

    # --- the recorded results ---------------------------------------------------------------------------------

    def _unmark(self, pairing: int, slot: int) -> None:
        if self._offsets[pairing][slot] >= 0:
            self._offsets[pairing][slot] = -1
            self.recorded -= 1

    def mark(self, spec: MatchSpec, offset: int) -> None:
        """``spec`` is recorded by the ``results.jsonl`` line at byte ``offset``."""
        slot = 2 * spec.pair + GAMES.index(spec.game)
        if self._offsets[spec.pairing][slot] < 0:
            self.recorded += 1
        put(self._offsets, spec.pairing, slot, offset)

    def offset(self, spec: MatchSpec) -> int:
        """The byte offset of the result of ``spec`` that counts (-1: not recorded)."""
        return self._offsets[spec.pairing][2 * spec.pair + GAMES.index(spec.game)]

    def slot_offset(self, pairing: int, pair: int, game: int) -> int:
        """The offset of the counting result of game ``game`` (0: a, 1: b) of pair ``pair`` of ``pairing``."""
        return self._offsets[pairing][2 * pair + game]

    def match_id(self, pairing: int, pair: int, game: int) -> str:
        """The id of game ``game`` (0: a, 1: b) of pair ``pair`` of ``pairing`` (without dealing it)."""
        p = self.plist[pairing]
        return f"{p.index + 1:02d}-{p.key}-{pair:0{self._width}d}{GAMES[game]}"

    def state(self) -> LedgerState:
        """What :meth:`restore` takes back (the config and the shard are the folder's description)."""
        return LedgerState(self.added, self.redeals, self._offsets, self._size, self.recorded)

    def offset_table(self) -> list[array[int]]:
        """The offsets of the recorded results, an array a pairing (what :meth:`state` holds: a checkpoint writes
        it as it is in memory)."""
        return self._offsets

    def restore(self, state: object) -> None:
        """Take back what :meth:`state` gave (of this schedule: the same config and shard); ``ValueError`` when
        ``state`` (read from a file) is not that."""
        if not (isinstance(state, LedgerState) and state.well_formed() and len(state.offsets) == len(self.plist)):
            raise ValueError("not the state of this schedule")
        self.added, self.redeals, self._offsets = state.added, state.redeals, state.offsets
        self._size, self.recorded = state.size, state.recorded
        self._dealt.clear()

    def twin_recorded(self, spec: MatchSpec) -> bool:
        """True when the other game of ``spec``'s pair is recorded."""
        return self._offsets[spec.pairing][2 * spec.pair + 1 - GAMES.index(spec.game)] >= 0


@dataclass(frozen=True)
class Links:
    """The entries before and after any entry of a folder's schedule (by schedule position), worked out from the
    schedule's shape: a few numbers a block of pairings and a pair added, whatever the schedule's size. What the
    match pages link to, given to every worker (:meth:`Ledger.links`)."""

    shard: tuple[int, int]
    width: int  # digits of a pair number in a match id
    starts: tuple[int, ...]  # the segments' first schedule positions, ascending
    segments: tuple[tuple[int, int, tuple[tuple[int, str], ...]], ...]  # (end, pair (-1: a block), pairings)

    def links(self, spec: MatchSpec) -> tuple[str | None, str | None]:
        """The ids of the entries before and after ``spec`` in the schedule (None at either end)."""
        return self._before(spec.index), self._after(spec.index)

    def _in_shard(self, q: int) -> bool:
        k, n = self.shard
        return q % n == k - 1

    def _used(self, q: int) -> bool:
        at = bisect_right(self.starts, 2 * q) - 1
        return at >= 0 and 2 * q < self.segments[at][0]

    def _before(self, index: int) -> str | None:
        q = index // 2
        if index % 2 and self._in_shard(q) and self._used(q):
            return self._id(2 * q)
        k, n = self.shard
        at = bisect_right(self.starts, 2 * q) - 1
        while at >= 0:  # the last pair of the shard before pair position q, segment by segment backwards
            lo, hi = self.starts[at] // 2, min(self.segments[at][0] // 2, q)
            last = hi - 1 - ((hi - 1 - (k - 1)) % n)
            if last >= lo:
                return self._id(2 * last + 1)
            at -= 1
        return None

    def _after(self, index: int) -> str | None:
        q = index // 2
        if index % 2 == 0 and self._in_shard(q) and self._used(q):
            return self._id(2 * q + 1)
        k, n = self.shard
        at = max(0, bisect_right(self.starts, 2 * q) - 1)
        while at < len(self.starts):  # the first pair of the shard after pair position q, segment by segment
            lo, hi = max(self.starts[at] // 2, q + 1), self.segments[at][0] // 2
            first = lo + ((k - 1 - lo) % n)
            if first < hi:
                return self._id(2 * first)
            at += 1
        return None

    def _id(self, index: int) -> str:
        at = bisect_right(self.starts, index) - 1
        start, (_, pair, pairings) = self.starts[at], self.segments[at]
        game = GAMES[(index - start) % 2]
        if pair >= 0:
            number, key = pairings[0]
        else:
            pair, k = divmod((index - start) // 2, len(pairings))
            number, key = pairings[k]
        return f"{number + 1:02d}-{key}-{pair:0{self.width}d}{game}"
