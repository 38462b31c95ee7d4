"""The schedule: pairings, duplicate deal pairs, their seeds, shards and work units.

Every pairing (X, Y) plays ``pairs`` deal pairs. A pair is two matches on the same seed and the same first
dealer: game ``a`` with X in seat 1, game ``b`` with Y in seat 1, so both bots hold each dealt hand once. A
pair's seed is a hash of the tournament seed, the two names and the pair index, so it does not depend on the
order of the bots, the shard, or which other pairings exist. A pair interrupted mid-match is dealt afresh on
resume (deal number 1, 2, ...): its seed then also hashes the deal number, so no bot ever sees a deal twice.

Which game of a pair is played first is drawn from the pair's seed (:func:`order_of`): a resumed or sharded run
makes the same choice, and no bot can tell from the seats whether the game it plays is its pair's first or second.
Both games of a pair go to the same work unit, the first-played one first (:func:`work_units`), so they run on the
same worker, one after the other; the asymmetry test (:mod:`referee.tournament.asymmetry`) compares the two.

With a deal suite (``--deals``), pair ``k`` of every pairing opens with the suite's sequence ``k`` modulo its
length (:attr:`MatchSpec.suite`); the seed deals the rounds after it. Bot processes are then kept per pairing and
per pass through the suite (:attr:`MatchSpec.lot`), so that no process plays a sequence twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from referee.engine.rules import FirstDealer
from referee.tournament.config import Format, TournamentConfig, TournamentError


@dataclass(frozen=True)
class Pairing:
    """Two bots that meet; ``first`` takes seat 1 in game ``a`` of every pair."""

    index: int
    first: str
    second: str

    @property
    def key(self) -> str:
        """``first-vs-second``."""
        return f"{self.first}-vs-{self.second}"


@dataclass(frozen=True)
class MatchSpec:
    """One scheduled match."""

    index: int  # position in the full schedule
    match_id: str  # unique in the tournament; also the replay's file name
    pairing: int
    pair: int  # pair index within the pairing, from 0
    game: str  # "a" (pairing.first in seat 1) or "b" (seats swapped)
    seats: tuple[str, str]  # bot names in seat 1 and seat 2
    seed: int
    first_dealer: int  # engine seat 0/1; the same in both games of a pair
    deal: int = 0  # 0: the pair's first deal; n: dealt afresh n times after interruptions
    suite: int | None = None  # the deal sequence of the tournament's suite this pair opens with
    cycle: int = 0  # with a suite: how many times the pairing went through it before this pair
    order: int = 1  # 1: the pair's first-played game, 2: its second (see order_of)

    @property
    def lot(self) -> str:
        """Which bot processes may play this match: the game letter (each process plays each deal once), and
        with a suite also the pairing and the pass through the suite (a sequence comes back in every pairing and
        every pass)."""
        return self.game if self.suite is None else f"{self.game}/{self.pairing}/{self.cycle}"

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (the ``schedule`` of ``tournament.json``), the seed as a string (see
        :meth:`referee.records.MatchResult.to_json`)."""
        return {
            "index": self.index,
            "match_id": self.match_id,
            "pairing": self.pairing,
            "pair": self.pair,
            "game": self.game,
            "seats": list(self.seats),
            "seed": str(self.seed),
            "first_dealer": self.first_dealer,
            "order": self.order,
            **({"deal": self.deal} if self.deal else {}),
            **({"suite": self.suite} if self.suite is not None else {}),
        }


def pairings(config: TournamentConfig) -> list[Pairing]:
    """Round-robin: every two bots in file order. Gauntlet: the gauntlet bot against each other bot. Then the
    pairings of each ladder step (see :func:`pairing_blocks`)."""
    return [p for block in pairing_blocks(config) for p in block]


def pairing_blocks(config: TournamentConfig) -> list[list[Pairing]]:
    """The pairings in blocks: those of the bots the tournament started with, then those of each ladder step
    (each entrant, in order, against the active bots and the entrants before it)."""
    added = {n for s in config.ladder for n in s.added}
    names = [b.name for b in config.bots if b.name not in added]
    hero = config.hero
    if config.format is Format.GAUNTLET:
        base = [Pairing(i, hero, other) for i, other in enumerate(n for n in names if n != hero)]
    else:
        base = [Pairing(i, x, y) for i, (x, y) in enumerate(combinations(names, 2))]
    blocks = [base]
    count = len(base)
    active = names
    for stage in config.ladder:
        active = [n for n in active if n not in stage.retired]
        block: list[Pairing] = []
        for new in stage.added:
            others = [hero] if config.format is Format.GAUNTLET else active
            block += [Pairing(count + k, other, new) for k, other in enumerate(others)]
            count += len(others)
            active = [*active, new]
        blocks.append(block)
    return blocks


MAX_MATCHES = 2_000_000
"""The largest schedule a tournament may have (matches): a million-match event fits. What grows with it is the
description (``tournament.json``, about 240 bytes a match) and 8 bytes a match in memory (where each result is)."""


def pair_seed(tournament_seed: int, pairing: Pairing, pair: int, deal: int = 0) -> int:
    """A deal pair's seed: 63 bits of SHA-256 of the tournament seed, both names (sorted), the index and, for a
    pair dealt afresh, the deal number."""
    x, y = sorted((pairing.first, pairing.second))
    text = f"koikoi-tournament/{tournament_seed}/{x}/{y}/{pair}" + (f"/deal-{deal}" if deal else "")
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seed_at(config: TournamentConfig, index: int) -> int:
    """The seed the match at schedule position ``index`` is dealt from: the tournament seed, or from the start of
    a ladder step on, that step's own (:meth:`~referee.tournament.config.Stage.seed`)."""
    seed = config.seed
    for stage in config.ladder:
        if index >= stage.start:
            seed = stage.seed(config.seed)
    return seed


def first_dealer_of(config: TournamentConfig, seed: int) -> int:
    """The first dealer (engine seat) of a pair (both games): the rules' seat, or drawn from the seed."""
    if config.rules.first_dealer is FirstDealer.SEAT1:
        return 0
    if config.rules.first_dealer is FirstDealer.SEAT2:
        return 1
    return hashlib.sha256(f"koikoi-tournament/first-dealer/{seed}".encode()).digest()[0] & 1


def order_of(seed: int, game: str) -> int:
    """Whether game ``game`` of the pair dealt from ``seed`` is played first (1) or second (2): a fair coin drawn
    from the pair's seed (so from the tournament's secret seed), the same in every run, shard and backend."""
    b_first = hashlib.sha256(f"koikoi-tournament/order/{seed}".encode()).digest()[0] & 1
    return 1 if (game == "b") == bool(b_first) else 2


def schedule_size(config: TournamentConfig) -> int:
    """The number of matches of the whole schedule."""
    return 2 * config.pairs * len(pairings(config))


def check_size(config: TournamentConfig) -> None:
    """:class:`TournamentError` for a schedule over :data:`MAX_MATCHES` (before any memory is spent on it)."""
    n = schedule_size(config)
    if n > MAX_MATCHES:
        raise TournamentError(
            f"{config.pairs} pairs for {len(pairings(config))} pairings make {n} matches, more than "
            f"{MAX_MATCHES}; play fewer pairs (or shard the tournament into separate, smaller ones)"
        )


def build_schedule(config: TournamentConfig) -> list[MatchSpec]:
    """The whole schedule, block by block (:func:`pairing_blocks`), pair index outermost in each block so every
    pairing advances together."""
    check_size(config)
    out: list[MatchSpec] = []
    starts = [0, *(s.start for s in config.ladder)]
    for start, block in zip(starts, pairing_blocks(config), strict=True):
        index = start
        for pair in range(config.pairs):
            for p in block:
                out += pair_specs(config, p, pair, index)
                index += 2
    return out


def pair_specs(config: TournamentConfig, p: Pairing, pair: int, index: int) -> list[MatchSpec]:
    """Both games of pair ``pair`` of pairing ``p``, at schedule positions ``index`` and ``index + 1``."""
    width = max(3, len(str(config.pairs - 1)))
    n = len(config.suite)
    suite, cycle = (pair % n, pair // n) if n else (None, 0)
    seed = pair_seed(seed_at(config, index), p, pair)
    dealer = first_dealer_of(config, seed)
    out: list[MatchSpec] = []
    for game, seats in (("a", (p.first, p.second)), ("b", (p.second, p.first))):
        match_id = f"{p.index + 1:02d}-{p.key}-{pair:0{width}d}{game}"
        order = order_of(seed, game)
        out.append(MatchSpec(index + len(out), match_id, p.index, pair, game, seats, seed, dealer, 0, suite, cycle,
                             order))  # fmt: skip
    return out


def redealt(config: TournamentConfig, spec: MatchSpec, deal: int) -> MatchSpec:
    """``spec`` as dealt the ``deal``-th time (0: the schedule's own deal)."""
    p = pairings(config)[spec.pairing]
    seed = pair_seed(seed_at(config, spec.index), p, spec.pair, deal)
    return dataclasses.replace(
        spec, seed=seed, first_dealer=first_dealer_of(config, seed), deal=deal, order=order_of(seed, spec.game)
    )


def next_index(schedule: list[MatchSpec]) -> int:
    """The schedule position after every match of ``schedule``: where a ladder step or an added pair starts."""
    return max((m.index for m in schedule), default=-1) + 1


def shard_of(schedule: list[MatchSpec], shard: tuple[int, int]) -> list[MatchSpec]:
    """Shard K of N: the pairs whose position among all pairs is K-1 modulo N (both games of a pair)."""
    k, n = shard
    return [m for m in schedule if (m.index // 2) % n == k - 1]


UNIT_PAIRS = 256
"""The most deal pairs in one work unit: a unit is dealt and queued whole, and a worker keeps its bots from one
unit to the next of the same pairing, so larger units save little and would hold a large run's matches."""


def unit_pairs(matches: int, jobs: int) -> int:
    """Deal pairs in each work unit of a run of ``matches`` matches on ``jobs`` workers: about eight units a
    worker, a pairing a unit with one worker, never more than :data:`UNIT_PAIRS`."""
    total_pairs = math.ceil(matches / 2)
    return max(1, min(UNIT_PAIRS, math.ceil(total_pairs / (jobs * 8)) if jobs > 1 else total_pairs))


def work_units(matches: list[MatchSpec], jobs: int) -> list[list[MatchSpec]]:
    """Matches grouped for workers: each unit is one pairing's consecutive pairs, pairing after pairing, each
    pair's two games side by side, its first-played game (:attr:`MatchSpec.order`) first. A worker plays a unit's
    matches one after the other, so both games of a pair run on the same worker, never at the same time.

    A worker keeps its two bots from one unit to the next of the same pairing, so units can be small: about
    eight per worker balance the load (:func:`unit_pairs`). With one job, a pairing is a single unit of up to
    :data:`UNIT_PAIRS` pairs.
    """
    by_pairing: dict[int, list[MatchSpec]] = {}
    for m in matches:
        by_pairing.setdefault(m.pairing, []).append(m)
    pairs_per_unit = unit_pairs(len(matches), jobs)
    units: list[list[MatchSpec]] = []
    for _, ms in sorted(by_pairing.items()):
        pair_ids = sorted({m.pair for m in ms})
        for c in range(0, len(pair_ids), pairs_per_unit):
            chosen = set(pair_ids[c : c + pairs_per_unit])
            units.append(sorted((m for m in ms if m.pair in chosen), key=lambda m: (m.pair, m.order)))
    return units
