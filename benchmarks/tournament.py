"""Tournament throughput: matches per second with reused bot processes at -j1 and -j2, beside a
restart-per-match baseline.

Run: ``.venv/bin/python benchmarks/tournament.py [--pairs N] [--baseline-matches N] [--rules PRESET]``.
Single-deal matches (cardavia) between ``bots/greedy_bot.py`` and ``bots/random_bot.py``. The reused runs are
whole tournaments through the library (schedule, progress log with fsync, replays, report); the baseline plays
matches of the same schedule with :func:`referee.match.run_match`, which starts and kills both bots for every
match. Goals: reuse at -j1 >= 5x the baseline; -j2 >= 1.8x -j1 (on an otherwise idle machine with 2 cores).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.match import run_match  # noqa: E402
from referee.tournament import BotSpec, RunOptions, TournamentConfig, play, resolve_rules, start  # noqa: E402
from referee.tournament.runner import match_config  # noqa: E402
from referee.tournament.schedule import build_schedule  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BOTS = (
    BotSpec("greedy", f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"),
    BotSpec("random", f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'} --seed 1"),
)


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of every waited-for descendant: workers and bots."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def reused(config: TournamentConfig, jobs: int, folder: Path) -> tuple[int, float, float]:
    """Matches played, seconds and CPU seconds taken by a whole tournament with ``jobs`` workers."""
    store = start(config, RunOptions(jobs=jobs), folder)
    c0, t0 = cpu_seconds(), time.perf_counter()
    outcome = play(store, stream=io.StringIO(), live=False)
    return outcome.standings.matches, time.perf_counter() - t0, cpu_seconds() - c0


def restarted(config: TournamentConfig, matches: int, folder: Path) -> tuple[int, float, float]:
    """Matches played, seconds and CPU seconds taken when both bots start afresh for every match."""
    commands = {b.name: b.command for b in config.bots}
    folder.mkdir(parents=True)
    c0, t0 = cpu_seconds(), time.perf_counter()
    schedule = build_schedule(config)[:matches]
    for spec in schedule:
        mc = match_config(config, spec, folder / f"{spec.match_id}.jsonl")
        run_match((commands[spec.seats[0]], commands[spec.seats[1]]), mc)
    return len(schedule), time.perf_counter() - t0, cpu_seconds() - c0


def main() -> None:
    """Print matches/s of each mode and the two ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=100, help="deal pairs of the reused runs (2 games each)")
    parser.add_argument("--baseline-matches", type=int, default=40, help="matches of the restart baseline")
    parser.add_argument("--rules", default="cardavia", help="rules preset (single-deal cardavia by default)")
    args = parser.parse_args()
    config = TournamentConfig(bots=BOTS, rules=resolve_rules(args.rules), pairs=args.pairs, seed=1)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        rows = [
            ("restart per match, -j1", *restarted(config, args.baseline_matches, base / "restart")),
            ("reused bots, -j1", *reused(config, 1, base / "j1")),
            ("reused bots, -j2", *reused(config, 2, base / "j2")),
        ]
    print(f"load average before: {load[0]:.2f} on {os.cpu_count()} CPUs (other work shares the machine)")
    rates = {}
    for label, n, secs, cpu in rows:
        rates[label] = n / secs
        print(f"{label:<24} {n:>5} matches in {secs:7.2f} s   {n / secs:8.1f} matches/s   "
              f"{cpu / n * 1000:6.1f} CPU ms/match")  # fmt: skip
    r0, r1, r2 = (rates[row[0]] for row in rows)
    print(f"reuse / restart (-j1):   {r1 / r0:5.2f}x   (goal >= 5)")
    print(f"-j2 / -j1 (reused):      {r2 / r1:5.2f}x   (goal >= 1.8)")


if __name__ == "__main__":
    main()
