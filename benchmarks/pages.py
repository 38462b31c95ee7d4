"""A tournament's pages at scale: the home page and bot pages of folders of many results, and one match page.

Run: ``.venv/bin/python benchmarks/pages.py [--results 600,6000,60000] [--matches 20]``. For each size, a folder
of three bots with one synthetic result per scheduled match (written with the store's own line format, no
replay) and the time and traced peak memory (``tracemalloc``) to read its results back and write ``index.html``
and the three bot pages (what the end of a run and every interim report rewrite; the standings themselves are
computed before, outside the figure). Then a real ``-j 1 --no-html`` tournament of ``--matches`` matches on the
koikoi-japan rules and the time to write each of its match pages, as the worker that played the match does.

Run against another checkout (say, before a change) with ``PYTHONPATH=/that/checkout``: the script finds which
signature ``write_home`` has (a list of records, or a digest of them).
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS  # noqa: E402
from referee.records import MatchResult, Termination  # noqa: E402
from referee.tournament import BotSpec, Record, RunOptions, TournamentConfig, compute, start  # noqa: E402
from referee.tournament.folder import RESULTS  # noqa: E402
from referee.tournament.pages import write_home  # noqa: E402
from referee.tournament.store import Store, dumps_line  # noqa: E402

BOTS = Path(__file__).resolve().parent.parent / "bots"


def synthetic(folder: Path, results: int) -> TournamentConfig:
    """A three-bot folder with ``results`` synthetic results (rounded up to whole pairs of all pairings)."""
    specs = tuple(BotSpec(f"bot{i}", f"{sys.executable} {BOTS / 'random_bot.py'}") for i in range(3))
    config = TournamentConfig(bots=specs, rules=PRESETS["koikoi-japan"], pairs=-(-results // 6), seed=1)
    store = start(config, RunOptions(), folder, checked=True)
    rng = random.Random(1)
    with open(folder / RESULTS, "w", encoding="utf-8") as f:
        for spec in store.schedule.values():
            winner = rng.choice([0, 1, 1, 0, None])
            scores = (7, 0) if winner == 0 else (0, 7) if winner == 1 else (0, 0)
            result = MatchResult(spec.match_id, winner, scores, 3, Termination.ROUNDS, None, spec.seats, spec.seed, 60)
            f.write(dumps_line(Record(spec, result).to_json()) + "\n")
    store.close()
    return config


def home_pages(folder: Path) -> tuple[float, float]:
    """Seconds and traced peak MB to write the home page and bot pages of ``folder`` (its standings aside)."""
    store = Store.open_readonly(folder)
    st = compute(store.config, store.iter_records())
    digest_api = "digest" in inspect.signature(write_home).parameters
    extras: object
    tracemalloc.start()
    t0 = time.perf_counter()
    if digest_api:
        from referee.tournament.digest import Digest  # type: ignore[import-not-found, unused-ignore]

        extras = Digest.of(store.config, folder, store.iter_records())
    else:
        extras = list(store.iter_records())
    write_home(folder, st, extras, "benchmark")  # type: ignore[arg-type, unused-ignore]
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return seconds, peak


def match_pages(folder: Path, matches: int) -> list[float]:
    """Play a real tournament of about ``matches`` matches without pages; the seconds to write each page."""
    pairs = max(1, matches // 2)
    subprocess.run(
        [str(Path(sys.executable).parent / "koikoi-referee"), "tournament", "-b", f"greedy={BOTS / 'greedy_bot.py'}",
         "-b", f"random={BOTS / 'random_bot.py'}", "--rules", "koikoi-japan", "--pairs", str(pairs),
         "--seed", "3", "-j", "1", "--no-html", "--sandbox", "none", "-o", str(folder)],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    from referee.tournament.match_page import write_match_page

    store = Store.open_readonly(folder)
    near = store.schedule.links()
    times = []
    for rec in store.iter_records():
        t0 = time.perf_counter()
        write_match_page(folder, rec, *near.links(rec.spec))
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    """Print a row per folder size, then the match pages' figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--results", default="600,6000,60000", help="comma-separated result counts")
    parser.add_argument("--matches", type=int, default=20, help="matches of the real tournament (0: none)")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} on {os.cpu_count()} CPUs; 3 bots")
    print(f"{'results':>8}  {'home + bot pages s':>18}  {'traced peak MB':>14}  {'us/result':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.results.split(",")):
            folder = Path(tmp) / f"r{n}"
            synthetic(folder, n)
            seconds, peak = home_pages(folder)
            print(f"{n:>8}  {seconds:>18.3f}  {peak:>14.1f}  {seconds / n * 1e6:>9.1f}")
        if args.matches:
            times = match_pages(Path(tmp) / "real", args.matches)
            print(f"match pages: {len(times)}, median {statistics.median(times) * 1e3:.1f} ms, "
                  f"max {max(times) * 1e3:.1f} ms each (written as a worker writes them)")  # fmt: skip


if __name__ == "__main__":
    main()
