"""The asymmetry test: does a bot score better in the second-played game of its deal pairs than in the first?

The two games of a duplicate pair deal the same cards with the seats swapped, and which of them is played first is
a fair coin drawn from the tournament's secret seed (:func:`referee.tournament.schedule.order_of`). Apart from
their order the two games are symmetric, so for an honest bot the difference between its result in the
second-played game and in the first-played one is as likely to be ``+x`` as ``-x``. A bot that carries information
from the first game to the second (the opponent's hand, the stock order), by whatever channel, scores better in the
second: that is what this test looks for, whatever the mechanism.

The statistic, per bot and per complete pair: ``d = margin(second-played) - margin(first-played)``, where a game's
margin is the bot's match score minus its opponent's (the point margin of the match, forfeits included as
recorded). The test is Wilcoxon's signed-rank test, one-sided (the second game better), in its exact conditional
form: the pairs with ``d = 0`` are left out, the others are ranked by ``|d|`` (tied magnitudes share their mean
rank), and the p-value is the probability that the ranks of the positive differences sum to at least the observed
sum when each sign is an independent fair coin, which the randomised order makes exactly true for an honest bot.
Ranks rather than the margins themselves keep a few very large margins from deciding the test. Up to
:data:`EXACT_MAX` non-zero differences the distribution is counted exactly; above, the normal approximation with
the same (tie-corrected) mean and variance and a continuity correction is used (its error is far below the 1%
threshold there).

A bot is flagged when the p-value is at most :data:`ALPHA`. A flag says the result is very unlikely by chance; it
is evidence to look at the bot's replays with, not a proof of cheating (one test a bot, so with many bots one of
them is flagged in error about once in a hundred honest tournaments per bot).

The state kept per bot is a histogram of its differences (:class:`Differences`), so a running tournament's
bookkeeping stays bounded. Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ALPHA = 0.01
"""The level at which a bot is flagged: its p-value at most this."""

EXACT_MAX = 100
"""The most non-zero differences whose signed-rank distribution is counted exactly (beyond: normal approximation)."""

METHOD = (
    "one-sided Wilcoxon signed-rank test (exact, ties as mean ranks, zero differences left out) on each pair's "
    "point margin in the second-played game minus the first-played one"
)
"""What ``standings.json`` says of the test."""


def doubled_ranks(diffs: Mapping[int, int]) -> list[tuple[int, int, int]]:
    """``(doubled mean rank, positive count, negative count)`` for each non-zero magnitude of ``diffs`` (difference
    -> how many times it occurs), smallest magnitude first. Doubled, so that a mean rank of tied magnitudes (say
    2.5) stays a whole number."""
    by_size: dict[int, list[int]] = {}
    for d, n in diffs.items():
        if d != 0 and n > 0:
            pos_neg = by_size.setdefault(abs(d), [0, 0])
            pos_neg[0 if d > 0 else 1] += n
    out: list[tuple[int, int, int]] = []
    below = 0  # items with a smaller magnitude
    for size in sorted(by_size):
        pos, neg = by_size[size]
        k = pos + neg
        out.append((2 * below + k + 1, pos, neg))  # ranks below+1 .. below+k, their mean doubled
        below += k
    return out


def signed_rank_p(diffs: Mapping[int, int]) -> float:
    """The one-sided p-value of the signed-rank statistic of ``diffs`` (difference -> count): the chance, with
    every sign a fair coin, that the ranks of the positive differences sum to at least what they sum to here.
    1.0 when no difference is non-zero."""
    groups = doubled_ranks(diffs)
    n = sum(pos + neg for _, pos, neg in groups)
    if n == 0:
        return 1.0
    observed = sum(rank * pos for rank, pos, _ in groups)
    if n > EXACT_MAX:
        return _normal_p(groups, observed)
    return _exact_p(groups, observed, n)


def _exact_p(groups: list[tuple[int, int, int]], observed: int, n: int) -> float:
    """The exact tail: the generating function prod (1 + x^rank) over the ``n`` items, held as one integer whose
    base-2**width digits are the counts of each sum (no count reaches 2**width - 1, as all add up to 2**n)."""
    width = n + 2
    poly = 1
    for rank, pos, neg in groups:
        for _ in range(pos + neg):
            poly += poly << (rank * width)
    tail = (poly >> (observed * width)) % ((1 << width) - 1)  # the sum of the digits from `observed` up
    return tail / (1 << n)


def _normal_p(groups: list[tuple[int, int, int]], observed: int) -> float:
    """The normal approximation of the tail (doubled ranks: the continuity correction is half a rank, 1)."""
    total = sum(rank * (pos + neg) for rank, pos, neg in groups)
    variance = sum(rank * rank * (pos + neg) for rank, pos, neg in groups) / 4
    z = (observed - total / 2 - 1) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2))


@dataclass
class Differences:
    """A bot's second-minus-first margin differences so far, as a histogram (difference -> pairs)."""

    counts: dict[int, int] = field(default_factory=dict)

    def add(self, d: int) -> None:
        """Count one complete pair's difference."""
        self.counts[d] = self.counts.get(d, 0) + 1

    def extend(self, diffs: Iterable[int]) -> None:
        """Count several pairs' differences."""
        for d in diffs:
            self.add(d)

    @property
    def pairs(self) -> int:
        """Complete pairs counted (zero differences included)."""
        return sum(self.counts.values())

    @property
    def mean(self) -> float | None:
        """The mean difference (None before any pair)."""
        n = self.pairs
        return sum(d * c for d, c in self.counts.items()) / n if n else None

    def test(self) -> Asymmetry:
        """The test on the pairs so far."""
        return Asymmetry(self.pairs, self.mean, signed_rank_p(self.counts))


@dataclass(frozen=True)
class Asymmetry:
    """One bot's asymmetry test: the pairs it rests on, the mean second-minus-first margin difference, and the
    one-sided p-value."""

    pairs: int
    mean: float | None
    p_value: float

    @property
    def flagged(self) -> bool:
        """The test rejects at :data:`ALPHA`: the bot did significantly better in the second-played games."""
        return self.p_value <= ALPHA

    def to_json(self) -> dict[str, Any]:
        """The ``asymmetry_*`` fields of a standings entry."""
        return {
            "asymmetry_pairs": self.pairs,
            "asymmetry_mean": None if self.mean is None else round(self.mean, 3),
            "asymmetry_p": _round_p(self.p_value),
            "asymmetry_flag": self.flagged,
        }

    def text(self, name: str) -> str:
        """One line for a flagged bot (the terminal standings and the home page)."""
        mean = 0.0 if self.mean is None else self.mean
        return (
            f"{name}: FLAGGED by the asymmetry test: {mean:+.1f} points a pair better in the second-played game "
            f"over {self.pairs} pairs (p = {self.p_value:.2g}); information may cross the two games of its pairs"
        )


def _round_p(p: float) -> float:
    """A p-value kept to 4 significant digits (small ones stay readable)."""
    return float(f"{p:.4g}")
