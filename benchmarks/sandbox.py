"""What the bwrap sandbox and the fair-play defences cost: bot start-up (the ``hello`` round trip) and tournament
throughput with reused bot processes, in three set-ups: ``none`` (no sandbox, no cgroups, no filter, bots
ponder), ``bwrap`` (the sandbox alone: no cgroups, no filter, bots ponder) and ``fair`` (the defaults: the sandbox,
a cgroup per bot, the syscall filter, bots frozen when it is not their turn); and the freezer's own cost.

Run: ``.venv/bin/python benchmarks/sandbox.py [--starts N] [--pairs N] [--repeat N]``.

Start-up: the median over ``--starts`` fresh processes of ``bots/greedy_bot.py`` of the time from the start of
the process to its ``hello`` answer, and to a clean close, through the bot seat of the referee (the same code a
match uses). Throughput: whole ``koikoi-referee tournament`` runs (three bots: greedy, random, first legal
move; round-robin, single-deal cardavia matches, ``-j 1``, ``--pairs`` deal pairs per pairing, no HTML), the
median of ``--repeat`` runs of each, alternating which goes first, after a warm-up run. Wall time only: a
sandboxed bot is killed with its bwrap process, whose children's CPU time is then never collected, so CPU
figures would favour the sandbox. Goals: with process reuse, at most 10% fewer matches/s with the sandbox
than without it, and ``fair`` at least 90% of ``bwrap``. The freezer: the median time of one freeze and one thaw
of an idle bot's cgroup (``cgroup.freeze`` in the unified hierarchy, the v1 ``freezer.state`` where that is what
the machine has).
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
from referee.seats.process import BotProcess, Limits, cgroups, seccomp  # noqa: E402
from referee.seats.sandbox import SandboxError, choose  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GREEDY = str(ROOT / "bots" / "greedy_bot.py")
BOTS = {
    "greedy": GREEDY,
    "random": f"{ROOT / 'bots' / 'random_bot.py'} --seed 1",
    "first": str(ROOT / "tests" / "bots" / "first_bot.py"),
}
EXE = str(Path(sys.executable).parent / "koikoi-referee")
OFF = {cgroups.SWITCH_VAR: "off", seccomp.SWITCH_VAR: "off"}
SETUPS: dict[str, tuple[str, dict[str, str], list[str]]] = {
    "none": ("none", OFF, ["--ponder"]),
    "bwrap": ("bwrap", OFF, ["--ponder"]),
    "fair": ("bwrap", {}, []),
}
"""Each set-up: the sandbox, the environment switches and the extra options of its runs."""


async def one_start(mode: str) -> tuple[float, float]:
    """Seconds from starting a greedy bot to its ``hello``, and to the end of its close."""
    seat = BotSeat(GREEDY, label="seat1", limits=Limits(sandbox=mode, memory_bytes=2 << 30))
    hello = hello_message(0, PRESETS["cardavia"], "m-0001", TimeControl())
    t0 = time.perf_counter()
    await seat.start(hello, 30.0)
    ready = time.perf_counter() - t0
    await seat.close()
    return ready, time.perf_counter() - t0


def startups(setup: str, n: int) -> tuple[float, float]:
    """Median hello time and median start-to-closed time of ``n`` fresh bots (one warm-up start first)."""
    mode, env, _ = SETUPS[setup]
    saved = {k: os.environ.get(k) for k in OFF}
    os.environ.update(env)
    try:
        cgroups._support_cached.cache_clear()
        asyncio.run(one_start(mode))
        got = [asyncio.run(one_start(mode)) for _ in range(n)]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        cgroups._support_cached.cache_clear()
    return statistics.median(x for x, _ in got), statistics.median(y for _, y in got)


async def _freeze_cost(rounds: int) -> tuple[float, float, str]:
    proc = BotProcess(GREEDY, limits=Limits(sandbox="bwrap"))
    await proc.start()
    try:
        freezes: list[float] = []
        thaws: list[float] = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            proc.freeze()
            t1 = time.perf_counter()
            proc.thaw()
            t2 = time.perf_counter()
            freezes.append(t1 - t0)
            thaws.append(t2 - t1)
        return statistics.median(freezes), statistics.median(thaws), proc.isolation["freezer"]
    finally:
        await proc.close()


def tournament(setup: str, pairs: int, folder: Path) -> tuple[int, float]:
    """Matches played and seconds taken by one ``koikoi-referee tournament`` run."""
    mode, env, extra = SETUPS[setup]
    argv = [EXE, "tournament", "--rules", "cardavia", "-n", str(pairs), "-j", "1", "--seed", "1", "--no-html",
            "--json", "--sandbox", mode, "--out", str(folder), *extra]  # fmt: skip
    for name, command in BOTS.items():
        argv += ["-b", f"{name}={command}"]
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env={**os.environ, **env})
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
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; cgroups: "
          f"{cgroups.reason() or cgroups.support().mode}; filter: {seccomp.reason() or 'seccomp'}")  # fmt: skip
    if cgroups.reason() is None:
        freeze, thaw, kind = asyncio.run(_freeze_cost(2000))
        print(f"freezer ({kind}): freeze {freeze * 1e6:.1f} us, thaw {thaw * 1e6:.1f} us (medians of 2000, idle bot)")
    for setup in SETUPS:
        hello, closed = startups(setup, args.starts)
        print(f"start-up  {setup:5}  hello {hello * 1000:6.1f} ms  start to closed {closed * 1000:6.1f} ms"
              f"  (median of {args.starts})")  # fmt: skip
    rates: dict[str, list[float]] = {s: [] for s in SETUPS}
    matches = 0
    order = list(SETUPS)
    with tempfile.TemporaryDirectory() as tmp:
        tournament("none", 1, Path(tmp) / "warm-up")
        for k in range(args.repeat):
            for setup in order if k % 2 == 0 else order[::-1]:
                matches, took = tournament(setup, args.pairs, Path(tmp) / f"{setup}-{k}")
                rates[setup].append(matches / took)
    for setup, got in rates.items():
        print(f"tournament {setup:5}  {statistics.median(got):6.1f} matches/s  ({matches} matches, -j1, "
              f"reused bots; runs: {json.dumps([round(x, 1) for x in got])} matches/s)")  # fmt: skip
    ratio = statistics.median(rates["bwrap"]) / statistics.median(rates["none"])
    print(f"sandboxed throughput: {ratio * 100:.1f}% of unsandboxed (goal: at least 90%)")
    fair = statistics.median(rates["fair"]) / statistics.median(rates["bwrap"])
    print(f"cgroups, filter and freezing: {fair * 100:.1f}% of the sandbox alone (goal: at least 90%)")


if __name__ == "__main__":
    main()
