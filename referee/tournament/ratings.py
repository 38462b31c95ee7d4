"""Joint ratings: Elo of every bot from all games of all pairings at once, with 95% intervals and the
likelihood of superiority.

The model is Bradley–Terry with draws counted as half a win and half a loss (as Ordo does): bot ``i`` scores
``1 / (1 + 10^(-(R_i - R_j) / 400))`` on average against bot ``j``. The ratings maximise the likelihood of every
pairing's score ``S_ij`` over its ``N_ij`` games::

    L(R) = sum over pairings  S_ij log p_ij + (N_ij - S_ij) log (1 - p_ij)

which depends on the per-pairing win/draw/loss totals only, so a running tournament needs no list of games.
As BayesElo does, each scheduled pairing gets :data:`PRIOR_DRAWS` virtual draws: a 100% score gives a finite
rating instead of infinity, and a bot that has not played yet sits at the average. Ratings are relative to
the field: their mean is 0.

The 95% interval of each rating is ``1.96`` standard deviations from the inverse of the Fisher information
(the negative Hessian of ``log L`` at the maximum, a pseudo-inverse under the mean-zero constraint); the
games of a duplicate pair are counted as independent, which overstates the error a little (the shared deal
cancels luck). The likelihood of superiority of ``i`` over ``j`` is ``Phi((R_i - R_j) / sd(R_i - R_j))`` with
the same covariance. A bot with fewer than :data:`MIN_GAMES` games has no rating to show ("too few games").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import mul

from referee.tournament.stats import Z95

ELO_PER_NATURAL = 400.0 / math.log(10.0)
"""Elo points per unit of the natural-logarithm logistic scale."""

PRIOR_DRAWS = 2.0
"""Virtual draws added to every scheduled pairing (BayesElo's default prior is also two virtual draws)."""

MIN_GAMES = 10
"""Fewer real games than this and a bot's rating is shown as "too few games"."""

TOO_FEW = "too few games"
"""What the tables say instead of a rating with too few games behind it."""

WDL = tuple[int, int, int]
"""Wins, draws and losses of a pairing's first bot."""


@dataclass(frozen=True)
class Rating:
    """One bot's rating: Elo relative to the field's mean, half the 95% interval, and its games."""

    name: str
    elo: float
    error: float  # half the width of the 95% interval, in Elo
    games: int
    enough: bool  # at least MIN_GAMES games

    def text(self) -> str:
        """``+35 ± 20``, or "too few games"."""
        return f"{self.elo:+.0f} ± {self.error:.0f}" if self.enough else TOO_FEW


@dataclass(frozen=True)
class Ratings:
    """The joint fit: a rating per bot (in the order given) and the covariance of the ratings (natural
    units)."""

    ratings: list[Rating]
    covariance: list[list[float]]
    iterations: int

    def by_name(self) -> dict[str, Rating]:
        """Ratings by bot name."""
        return {r.name: r for r in self.ratings}

    def los(self, a: str, b: str) -> float:
        """The likelihood of superiority: the probability that ``a`` is stronger than ``b`` (0..1)."""
        index = {r.name: i for i, r in enumerate(self.ratings)}
        i, j = index[a], index[b]
        c = self.covariance
        var = c[i][i] + c[j][j] - 2.0 * c[i][j]
        diff = (self.ratings[i].elo - self.ratings[j].elo) / ELO_PER_NATURAL
        if var <= 0.0:
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * math.erfc(-diff / math.sqrt(2.0 * var))


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    """The lower triangular ``L`` with ``L L^T = a`` for a symmetric positive definite ``a`` (rows; the dot
    products run in C). :class:`ZeroDivisionError` when ``a`` is not positive definite."""
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for j in range(n):
        row_j = low[j]
        head = row_j[:j]
        d = a[j][j] - sum(map(mul, head, head))
        if not d > 0.0:
            raise ZeroDivisionError("not positive definite")
        root = math.sqrt(d)
        row_j[j] = root
        for i in range(j + 1, n):
            row_i = low[i]
            row_i[j] = (a[i][j] - sum(map(mul, row_i[:j], head))) / root
    return low


def _solve(low: list[list[float]], up: list[list[float]], b: list[float]) -> list[float]:
    """``x`` with ``L L^T x = b``, from :func:`_cholesky`'s ``L`` and its transpose ``up``."""
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        row = low[i]
        y[i] = (b[i] - sum(map(mul, row[:i], y[:i]))) / row[i]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        row = up[i]
        x[i] = (y[i] - sum(map(mul, row[i + 1 :], x[i + 1 :]))) / row[i]
    return x


def _factor(h: list[list[float]]) -> tuple[list[list[float]], list[list[float]]]:
    """Cholesky factors of ``H + J/n`` (``J`` the all-ones matrix), which is positive definite where the
    symmetric ``h``, whose null space is the all-ones vector, is positive semi-definite with rank ``n - 1``."""
    n = len(h)
    low = _cholesky([[x + 1.0 / n for x in row] for row in h])
    return low, [list(col) for col in zip(*low, strict=True)]


def _pinv(h: list[list[float]]) -> list[list[float]]:
    """The pseudo-inverse of a symmetric matrix whose null space is the all-ones vector:
    ``inv(H + J/n) - J/n``."""
    n = len(h)
    low, up = _factor(h)
    cols = [_solve(low, up, [1.0 if k == c else 0.0 for k in range(n)]) for c in range(n)]
    return [[cols[j][i] - 1.0 / n for j in range(n)] for i in range(n)]


def _terms(
    names: Sequence[str], totals: Mapping[tuple[str, str], WDL], prior: float
) -> list[tuple[int, int, float, float]]:
    """(i, j, games, score of i) of every pairing, virtual draws included."""
    index = {n: k for k, n in enumerate(names)}
    terms = []
    for (a, b), (w, d, lo) in totals.items():
        n = w + d + lo + prior
        if n > 0 and a != b:
            terms.append((index[a], index[b], float(n), w + d / 2.0 + prior / 2.0))
    return terms


def _log_likelihood(r: list[float], terms: list[tuple[int, int, float, float]]) -> float:
    total = 0.0
    for i, j, n, s in terms:
        x = r[i] - r[j]
        # log p = -log(1 + e^-x), log (1 - p) = -log(1 + e^x), in a form that does not overflow
        total -= s * _softplus(-x) + (n - s) * _softplus(x)
    return total


def _softplus(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _derivatives(r: list[float], terms: list[tuple[int, int, float, float]]) -> tuple[list[float], list[list[float]]]:
    """The gradient and the negative Hessian (the Fisher information) of the log-likelihood at ``r``."""
    n = len(r)
    grad = [0.0] * n
    h = [[0.0] * n for _ in range(n)]
    for i, j, m, s in terms:
        p = 1.0 / (1.0 + math.exp(-(r[i] - r[j])))
        g = s - m * p
        grad[i] += g
        grad[j] -= g
        w = m * p * (1.0 - p)
        h[i][i] += w
        h[j][j] += w
        h[i][j] -= w
        h[j][i] -= w
    return grad, h


_SATURATED = 36.0
"""A rating difference (natural units, about 6,250 Elo) beyond which a win probability rounds to 1: the
likelihood is flat there, and ratings that drift so far have no finite maximum."""


_NO_FINITE = "no finite ratings: a bot won or lost every game and there is no prior"


def _maximise(
    n: int, terms: list[tuple[int, int, float, float]], start: Sequence[float] | None = None, covariance: bool = True
) -> tuple[list[float], list[list[float]], int]:
    """Newton's method from ``start`` (default all 0): the ratings (mean 0), their covariance (zeros unless
    ``covariance``) and the iterations. :class:`ValueError` where the ratings have no finite maximum."""
    try:
        return _newton(n, terms, start, covariance)
    except (ZeroDivisionError, OverflowError):
        raise ValueError(_NO_FINITE) from None


def _newton(
    n: int, terms: list[tuple[int, int, float, float]], start: Sequence[float] | None, covariance: bool
) -> tuple[list[float], list[list[float]], int]:
    r = [0.0] * n if start is None else list(start)
    if n >= 2 and terms:
        current = _log_likelihood(r, terms)
        for it in range(1, 101):  # noqa: B007 - the count is reported
            grad, h = _derivatives(r, terms)
            # pinv(H) grad = inv(H + J/n) grad, as the gradient sums to 0
            step = _solve(*_factor(h), grad)
            scale = 1.0
            while True:  # Newton's step, halved while it does not improve (the log-likelihood is concave)
                trial = [x + scale * dx for x, dx in zip(r, step, strict=True)]
                value = _log_likelihood(trial, terms)
                if value >= current or scale < 1e-9:
                    break
                scale /= 2.0
            if not all(math.isfinite(x) and abs(x) < 50.0 for x in trial):
                raise ValueError(_NO_FINITE)
            r, current = trial, value
            if max(abs(scale * dx) for dx in step) < 1e-10:
                break
        if any(abs(r[i] - r[j]) > _SATURATED for i, j, _, _ in terms):  # the maximum is at infinity
            raise ValueError(_NO_FINITE)
        mean = sum(r) / n
        r = [x - mean for x in r]
        cov = _pinv(_derivatives(r, terms)[1]) if covariance else [[0.0] * n for _ in range(n)]
        return r, cov, it
    return r, [[0.0] * n for _ in range(n)], 0


def elos(
    names: Sequence[str],
    totals: Mapping[tuple[str, str], WDL],
    start: Mapping[str, float] | None = None,
    *,
    prior: float = PRIOR_DRAWS,
) -> dict[str, float]:
    """The Elo of each bot as :func:`fit` gives it, without the intervals (which cost a matrix inverse);
    ``start``: Elo to start from (an earlier fit of the same bots: a few steps less)."""
    terms = _terms(names, totals, prior)
    first = None if start is None else [start.get(nm, 0.0) / ELO_PER_NATURAL for nm in names]
    r, _, _ = _maximise(len(names), terms, first, covariance=False)
    return {nm: r[k] * ELO_PER_NATURAL + 0.0 for k, nm in enumerate(names)}


def fit(
    names: Sequence[str],
    totals: Mapping[tuple[str, str], WDL],
    *,
    prior: float = PRIOR_DRAWS,
    min_games: int = MIN_GAMES,
) -> Ratings:
    """The joint maximum-likelihood ratings of ``names`` from ``totals``: per pairing ``(a, b)``, the wins,
    draws and losses of ``a`` against ``b``. Every pairing given (played or not) gets ``prior`` virtual draws;
    with ``prior`` 0 a bot with only wins or only losses has no finite rating (``ValueError``)."""
    n = len(names)
    terms = _terms(names, totals, prior)
    games = [0] * n
    index = {nm: k for k, nm in enumerate(names)}
    for (a, b), (w, d, lo) in totals.items():
        games[index[a]] += w + d + lo
        games[index[b]] += w + d + lo
    r, cov, it = _maximise(n, terms)
    ratings = [
        Rating(
            name,
            r[k] * ELO_PER_NATURAL + 0.0,
            Z95 * math.sqrt(max(cov[k][k], 0.0)) * ELO_PER_NATURAL,
            games[k],
            games[k] >= min_games,
        )
        for k, name in enumerate(names)
    ]
    return Ratings(ratings, cov, it)
