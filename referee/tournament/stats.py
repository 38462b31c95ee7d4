"""Statistics of results: score rates with 95% intervals, Elo differences with error bars, and the pentanomial
SPRT.

Scores count a win 1, a draw 1/2, a loss 0. Because the two games of a deal pair share their cards, they are
not independent; the variance is therefore estimated over pair scores (the mean of a bot's games in one pair),
as fastchess does. The SPRT is the generalized SPRT of Michel Van den Bergh on the five pair outcomes 0, 1/4,
1/2, 3/4, 1 (pentanomial), with the logistic Elo model: an Elo difference d means an expected score 1 / (1 +
10^(-d/400)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""


def elo_of_score(score: float) -> float:
    """The Elo difference that expects ``score`` (0 < score < 1); +-inf at the ends."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no -0 for an even score


def score_of_elo(elo: float) -> float:
    """The expected score of an Elo difference ``elo`` (logistic model)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


@dataclass(frozen=True)
class Estimate:
    """A score rate over ``samples`` pair scores, with its 95% interval and the Elo difference it implies."""

    score: float
    low: float
    high: float
    samples: int

    @property
    def elo(self) -> float:
        """The Elo difference of the score (+-inf for a score of 1 or 0)."""
        return elo_of_score(self.score)

    @property
    def elo_error(self) -> float:
        """Half the width of the 95% interval in Elo (inf when an end of the interval is 0 or 1)."""
        return (elo_of_score(self.high) - elo_of_score(self.low)) / 2.0


def estimate(pair_scores: Sequence[float]) -> Estimate | None:
    """Mean and 95% normal interval of pair scores (each in 0..1); None without samples."""
    return estimate_of_sums(len(pair_scores), sum(pair_scores), sum(x * x for x in pair_scores))


def estimate_of_sums(n: int, total: float, squares: float) -> Estimate | None:
    """:func:`estimate` from running totals: ``n`` pair scores, their sum and the sum of their squares (so a
    running tournament keeps three numbers per bot, not every pair score)."""
    if n == 0:
        return None
    mean = total / n
    var = max(0.0, squares / n - mean * mean)
    half = Z95 * math.sqrt(var / n)
    return Estimate(mean, max(0.0, mean - half), min(1.0, mean + half), n)


class SprtState(StrEnum):
    """Where a sequential test stands."""

    H0 = "H0"  # accepted: the bot is not stronger by elo1 (at most elo0)
    H1 = "H1"  # accepted: the bot is stronger (at least elo1)
    CONTINUE = "continue"


@dataclass(frozen=True)
class SprtResult:
    """The log-likelihood ratio after some pairs, its bounds and the decision."""

    llr: float
    lower: float
    upper: float
    state: SprtState
    pairs: int
    elo0: float = 0.0
    elo1: float = 0.0
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def verdict(self) -> str:
        """The decision in words: H0 or H1 accepted, or neither bound reached."""
        if self.state is SprtState.H0:
            return "H0 accepted"
        return "H1 accepted" if self.state is SprtState.H1 else "no decision (neither bound reached)"

    def to_json(self) -> dict[str, float | int | str]:
        """Plain JSON."""
        return {
            "llr": round(self.llr, 4),
            "lower": round(self.lower, 4),
            "upper": round(self.upper, 4),
            "state": self.state.value,
            "pairs": self.pairs,
            "elo0": self.elo0,
            "elo1": self.elo1,
            "alpha": self.alpha,
            "beta": self.beta,
        }


PENTANOMIAL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The pair score of each pentanomial bucket (0 to 2 game points, halved)."""


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds: accept H0 at or below the first, H1 at or above the second."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def _mle(probs: Sequence[float], scores: Sequence[float], s: float) -> list[float]:
    """The distribution nearest to ``probs`` (maximum likelihood) whose expected score is ``s``.

    It is ``p_i / (1 + x (a_i - s))`` with ``x`` the root of ``sum p_i (a_i - s) / (1 + x (a_i - s)) = 0``, a
    decreasing function of ``x`` on the interval where every denominator is positive; found by bisection.
    """
    d = [a - s for a in scores]
    hi_d, lo_d = max(d), min(d)
    if hi_d <= 0 or lo_d >= 0:  # s outside the support's hull: the nearest point puts all weight at an end
        return list(probs)
    lo, hi = -1.0 / hi_d, -1.0 / lo_d
    eps = 1e-12 * (hi - lo)
    lo, hi = lo + eps, hi - eps
    for _ in range(200):
        mid = (lo + hi) / 2
        f = sum(p * di / (1 + mid * di) for p, di in zip(probs, d, strict=True))
        if f > 0:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    q = [p / (1 + x * di) for p, di in zip(probs, d, strict=True)]
    total = sum(q)
    return [v / total for v in q]


def sprt_llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 over H0 for pentanomial ``counts`` (pair scores 0 .. 1).

    Empty buckets get a small prior weight (as in fastchess), so the estimate is defined from the first pair.
    """
    n = sum(counts)
    if n == 0:
        return 0.0
    reg = [c if c > 0 else 1e-3 for c in counts]
    total = sum(reg)
    probs = [c / total for c in reg]
    p0 = _mle(probs, PENTANOMIAL_SCORES, score_of_elo(elo0))
    p1 = _mle(probs, PENTANOMIAL_SCORES, score_of_elo(elo1))
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1, strict=True) if p > 0)


def sprt(counts: Sequence[int], elo0: float, elo1: float, alpha: float, beta: float) -> SprtResult:
    """The SPRT on pentanomial ``counts``: the LLR, Wald's bounds and the decision."""
    llr = sprt_llr(counts, elo0, elo1)
    lower, upper = sprt_bounds(alpha, beta)
    state = SprtState.H1 if llr >= upper else SprtState.H0 if llr <= lower else SprtState.CONTINUE
    return SprtResult(llr, lower, upper, state, sum(counts), elo0, elo1, alpha, beta)


def pentanomial(pair_points: Sequence[float]) -> list[int]:
    """Counts of the five pair outcomes from pair points 0, 0.5, 1, 1.5, 2 (the two games' scores summed)."""
    counts = [0] * 5
    for pts in pair_points:
        counts[max(0, min(4, round(pts * 2)))] += 1
    return counts
