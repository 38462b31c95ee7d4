"""What the bwrap sandbox costs: bot start-up (the ``hello`` round trip) and tournament throughput with reused
bot processes, each with and without the sandbox.

Run: ``.venv/bin/python benchmarks/sandbox.py [--starts N] [--pairs N] [--repeat N]``.

Start-up: the median over ``--starts`` fresh processes of ``bots/greedy_bot.py`` of the time from the start of
the process to its ``hello`` answer, and to a clean close, through the bot seat of the referee (the same code a
match uses). Throughput: whole ``koikoi-referee tournament`` runs (three bots: greedy, random, first legal
move; round-robin, single-deal cardavia matches, ``-j 1``, ``--pairs`` deal pairs per pairing, no HTML), the
median of ``--repeat`` runs of each, alternating which goes first, after a warm-up run. Wall time only: a
sandboxed bot is killed with its bwrap process, whose children's CPU time is then never collected, so CPU
figures would favour the sandbox. Goal: with process reuse, at most 10% fewer matches/s with the sandbox
than without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS  # noqa: E402
from referee.match import TimeControl  # noqa: E402
from referee.protocol import hello_message  # noqa: E402
from referee.seats import BotSeat  # noqa: E402
from referee.seats.process import Limits  # noqa: E402
from referee.seats.sandbox import SandboxError, choose  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GREEDY = str(ROOT / "bots" / "greedy_bot.py")
BOTS = {
    "greedy": GREEDY,
    "random": f"{ROOT / 'bots' / 'random_bot.py'} --seed 1",
    "first": str(ROOT / "tests" / "bots" / "first_bot.py"),
}
EXE = str(Path(sys.executable).parent / "koikoi-referee")


async def one_start(mode: str) -> tuple[float, float]:
    """Seconds from starting a greedy bot to its ``hello``, and to the end of its close."""
    seat = BotSeat(GREEDY, label="seat1", limits=Limits(sandbox=mode))
    hello = hello_message(0, PRESETS["cardavia"], "m-0001", TimeControl())
    t0 = time.perf_counter()
    await seat.start(hello, 30.0)
    ready = time.perf_counter() - t0
    await seat.close()
    return ready, time.perf_counter() - t0


def startups(mode: str, n: int) -> tuple[float, float]:
    """Median hello time and median start-to-closed time of ``n`` fresh bots (one warm-up start first)."""
    asyncio.run(one_start(mode))
    got = [asyncio.run(one_start(mode)) for _ in range(n)]
    return statistics.median(x for x, _ in got), statistics.median(y for _, y in got)


def tournament(mode: str, pairs: int, folder: Path) -> tuple[int, float]:
    """Matches played and seconds taken by one ``koikoi-referee tournament`` run."""
    argv = [EXE, "tournament", "--rules", "cardavia", "-n", str(pairs), "-j", "1", "--seed", "1", "--no-html",
            "--json", "--sandbox", mode, "--out", str(folder)]  # fmt: skip
    for name, command in BOTS.items():
        argv += ["-b", f"{name}={command}"]
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        sys.exit(f"tournament failed ({done.returncode}): {done.stderr.strip()}")
    with open(folder / "results.jsonl") as f:
        return sum(1 for line in f if line.strip()), took


def main() -> None:
    """Print both measurements, with and without the sandbox."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=15, help="fresh bots per start-up median")
    parser.add_argument("--pairs", type=int, default=100, help="deal pairs per pairing (3 pairings, 2 games each)")
    parser.add_argument("--repeat", type=int, default=5, help="tournament runs per mode (median)")
    args = parser.parse_args()
    try:
        choose("bwrap")
    except SandboxError as exc:
        sys.exit(f"sandbox.py: the bwrap sandbox cannot run here: {exc}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    for mode in ("none", "bwrap"):
        hello, closed = startups(mode, args.starts)
        print(f"start-up  sandbox={mode:5}  hello {hello * 1000:6.1f} ms  start to closed {closed * 1000:6.1f} ms"
              f"  (median of {args.starts})")  # fmt: skip
    rates: dict[str, list[float]] = {"none": [], "bwrap": []}
    matches = 0
    with tempfile.TemporaryDirectory() as tmp:
        tournament("none", 1, Path(tmp) / "warm-up")
        for k in range(args.repeat):
            for mode in ("none", "bwrap") if k % 2 == 0 else ("bwrap", "none"):
                matches, took = tournament(mode, args.pairs, Path(tmp) / f"{mode}-{k}")
                rates[mode].append(matches / took)
    for mode, got in rates.items():
        print(f"tournament sandbox={mode:5}  {statistics.median(got):6.1f} matches/s  ({matches} matches, -j1, "
              f"reused bots; runs: {json.dumps([round(x, 1) for x in got])} matches/s)")  # fmt: skip
    ratio = statistics.median(rates["bwrap"]) / statistics.median(rates["none"])
    print(f"sandboxed throughput: {ratio * 100:.1f}% of unsandboxed (goal: at least 90%)")


if __name__ == "__main__":
    main()
