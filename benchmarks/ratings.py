"""Speed of the joint ratings: one fit, and the ratings chart of the home page (the Elo without intervals at 40
checkpoints as the results grow, each started from the one before, as ``rating_history`` does), for round
robins of several sizes on fixed random results::

    .venv/bin/python benchmarks/ratings.py
    .venv/bin/python benchmarks/ratings.py --bots 8 30 60 --repeat 5
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.tournament.ratings import elos, fit  # noqa: E402

WDL = tuple[int, int, int]


def results(n: int, seed: int = 1) -> tuple[list[str], dict[tuple[str, str], WDL]]:
    """``n`` bots of spread strengths and 10 to 60 games per pairing, drawn from a fixed seed."""
    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(n)]
    totals: dict[tuple[str, str], WDL] = {}
    for i in range(n):
        for j in range(i + 1, n):
            games = rng.randint(10, 60)
            w = rng.randint(0, games)
            d = rng.randint(0, games - w)
            totals[(names[i], names[j])] = (w, d, games - w - d)
    return names, totals


def main() -> None:
    """Print milliseconds per fit (best of ``--repeat``) and for a chart's 40 checkpoints for each field size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, nargs="+", default=[4, 10, 30, 64, 128])
    parser.add_argument("--repeat", type=int, default=3, help="fits timed per size (the best is printed)")
    args = parser.parse_args()
    print(f"{'bots':>5} {'pairings':>9} {'fit ms':>8} {'chart ms':>9} {'iterations':>11}")
    for n in args.bots:
        names, totals = results(n)
        best = float("inf")
        iterations = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            iterations = fit(names, totals).iterations
            best = min(best, time.perf_counter() - t0)
        t0 = time.perf_counter()
        previous: dict[str, float] | None = None
        for k in range(1, 41):  # the home page's chart: 40 checkpoints, each with a 40th more of the results
            part = {pair: (w * k // 40, d * k // 40, lo * k // 40) for pair, (w, d, lo) in totals.items()}
            previous = elos(names, part, previous)
        chart = time.perf_counter() - t0
        print(f"{n:>5} {len(totals):>9} {best * 1000:>8.1f} {chart * 1000:>9.0f} {iterations:>11}")


if __name__ == "__main__":
    main()
