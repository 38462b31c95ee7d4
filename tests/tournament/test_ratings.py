"""The joint ratings against a hand computation and against an independent fit with scipy."""

from __future__ import annotations

import math
import random

import pytest

from referee.tournament.ratings import ELO_PER_NATURAL, TOO_FEW, fit

np = pytest.importorskip("numpy")
optimize = pytest.importorskip("scipy.optimize")
special = pytest.importorskip("scipy.special")


def test_two_bots_by_hand() -> None:
    # 6 wins, 2 draws, 2 losses: a score of 0.7, so the difference is 400 log10(0.7 / 0.3) = 147.2 Elo, split
    # evenly around the mean. The Fisher information of the difference is N p (1 - p) = 10 * 0.21 = 2.1 (natural
    # units), each rating is half the difference: sd = sqrt(1 / 2.1) / 2.
    r = fit(["a", "b"], {("a", "b"): (6, 2, 2)}, prior=0)
    a, b = r.ratings
    diff = 400 * math.log10(0.7 / 0.3)
    assert a.elo == pytest.approx(diff / 2, abs=1e-6)
    assert b.elo == pytest.approx(-diff / 2, abs=1e-6)
    sd = math.sqrt(1 / 2.1) / 2 * ELO_PER_NATURAL
    assert a.error == pytest.approx(1.959963984540054 * sd, rel=1e-6)
    # LOS = Phi(d / sd(d)) with d = ln(7/3), sd(d) = sqrt(1 / 2.1)
    los = 0.5 * math.erfc(-math.log(7 / 3) * math.sqrt(2.1) / math.sqrt(2))
    assert r.los("a", "b") == pytest.approx(los, rel=1e-9)
    assert r.los("b", "a") == pytest.approx(1 - los, rel=1e-9)


def test_a_perfect_score_is_finite_and_one_pair_is_too_few() -> None:
    # 4-0 plus two virtual draws: a score of 5/6, a difference of 400 log10(5) Elo.
    r = fit(["a", "b"], {("a", "b"): (4, 0, 0)})
    a, b = r.ratings
    assert a.elo - b.elo == pytest.approx(400 * math.log10(5), abs=1e-6)
    assert math.isfinite(a.error)
    one_pair = fit(["a", "b"], {("a", "b"): (1, 0, 1)})
    assert one_pair.ratings[0].text() == TOO_FEW
    assert not one_pair.ratings[0].enough
    with pytest.raises(ValueError, match="no finite"):
        fit(["a", "b"], {("a", "b"): (4, 0, 0)}, prior=0)


def _scipy_fit(names: list[str], totals: dict[tuple[str, str], tuple[int, int, int]], prior: float) -> tuple:
    """The same model fitted independently: ratings of all but the first bot free (the first is minus their
    sum), BFGS on the negative log-likelihood, the covariance from a finite-difference Hessian."""
    index = {n: k for k, n in enumerate(names)}
    rows = [(index[a], index[b], w + d + lo + prior, w + d / 2 + prior / 2) for (a, b), (w, d, lo) in totals.items()]
    n = len(names)
    a_map = np.vstack([-np.ones(n - 1), np.eye(n - 1)])  # r = A theta, sum r = 0

    def nll(theta: np.ndarray) -> float:
        r = a_map @ theta
        return -sum(s * special.log_expit(r[i] - r[j]) + (m - s) * special.log_expit(r[j] - r[i])
                    for i, j, m, s in rows)  # fmt: skip

    res = optimize.minimize(nll, np.zeros(n - 1), method="BFGS", options={"gtol": 1e-10})
    theta = res.x
    eps = 1e-4
    k = n - 1
    hess = np.zeros((k, k))
    for p in range(k):
        for q in range(k):
            e_p, e_q = np.eye(k)[p] * eps, np.eye(k)[q] * eps
            hess[p, q] = (nll(theta + e_p + e_q) - nll(theta + e_p - e_q) - nll(theta - e_p + e_q)
                          + nll(theta - e_p - e_q)) / (4 * eps * eps)  # fmt: skip
    cov = a_map @ np.linalg.inv(hess) @ a_map.T
    return a_map @ theta, cov


@pytest.mark.parametrize("prior", [0.0, 2.0])
def test_agrees_with_scipy_on_fixed_random_results(prior: float) -> None:
    rng = random.Random(20261201)
    names = [f"bot{i}" for i in range(5)]
    strength = {n: rng.uniform(-1.5, 1.5) for n in names}
    totals: dict[tuple[str, str], tuple[int, int, int]] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            w = d = lo = 0
            for _ in range(rng.randint(20, 60)):
                p = 1 / (1 + math.exp(strength[b] - strength[a]))
                u = rng.random()
                if u < 0.1:
                    d += 1
                elif u < 0.1 + 0.9 * p:
                    w += 1
                else:
                    lo += 1
            totals[(a, b)] = (w, d, lo)
    mine = fit(names, totals, prior=prior)
    r, cov = _scipy_fit(names, totals, prior)
    for k, rating in enumerate(mine.ratings):
        assert rating.elo == pytest.approx(r[k] * ELO_PER_NATURAL, abs=0.01)
        assert rating.error == pytest.approx(1.959963984540054 * math.sqrt(cov[k, k]) * ELO_PER_NATURAL, rel=1e-3)
    for k in range(len(names) - 1):
        a, b = names[k], names[k + 1]
        sd = math.sqrt(cov[k, k] + cov[k + 1, k + 1] - 2 * cov[k, k + 1])
        los = 0.5 * math.erfc(-(r[k] - r[k + 1]) / sd / math.sqrt(2))
        assert mine.los(a, b) == pytest.approx(los, abs=1e-4)
    # the spread of the field is real: the fit separates the strongest and weakest bots
    assert max(x.elo for x in mine.ratings) - min(x.elo for x in mine.ratings) > 100
