"""Tournament throughput: matches per second with reused bot processes at -j1 and -jN, beside a
restart-per-match baseline, with the CPU and memory each costs and the replay size per match.

Run: ``.venv/bin/python benchmarks/tournament.py [--pairs N] [--baseline-matches N] [--rules PRESET] [--jobs N]``
(the issue's figure: ``--rules koikoi-japan --pairs 300``). Matches between ``bots/greedy_bot.py`` and
``bots/random_bot.py``. The reused runs are whole tournaments through the library (schedule, progress log with
fsync, replays, report); the baseline plays matches of the same schedule with :func:`referee.match.run_match`,
which starts and kills both bots for every match. A further -j1 run writes compressed replays (``--compress``).

Printed per mode: matches/s, CPU per match (this process, and its workers and bots: the script reaps the
sandboxed bots as the CLI does, so their CPU counts in every mode) and this process's RSS before and after. Then
the ratios, the CPU per match at -jN against -j1 (1.00 means parallel play costs nothing extra, so -jN is bound
by N free cores), the main process's cost to record one match (what caps matches/s whatever N), RSS growth per
match and replay bytes per match, plain and gzip. Goals: reuse at -j1 >= 5x the baseline; -j2 >= 1.8x -j1 on an
otherwise idle machine with 2 cores (on a shared machine, read the CPU ratio).
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.match import run_match  # noqa: E402
from referee.records import MatchResult, Termination  # noqa: E402
from referee.seats.process import adopt_orphans  # noqa: E402
from referee.tournament import BotSpec, Record, RunOptions, TournamentConfig, play, resolve_rules, start  # noqa: E402
from referee.tournament.progress import ProgressDisplay  # noqa: E402
from referee.tournament.runner import match_config  # noqa: E402
from referee.tournament.schedule import build_schedule  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BOTS = (
    BotSpec("greedy", f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"),
    BotSpec("random", f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'} --seed 1"),
)


def cpu_seconds() -> tuple[float, float]:
    """CPU time (user + system) of this process, and of every waited-for descendant (workers and bots)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def rss_bytes() -> int:
    """This process's resident memory now."""
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Run:
    """One measured mode."""

    label: str
    matches: int
    seconds: float
    cpu_main: float  # this process
    cpu_rest: float  # workers and bots
    rss: tuple[int, int] = (0, 0)  # this process before and after
    replay_bytes: int = 0

    @property
    def rate(self) -> float:
        """Matches per second."""
        return self.matches / self.seconds

    def line(self) -> str:
        """The figures of this mode on one line."""
        n = self.matches
        cpu = (self.cpu_main + self.cpu_rest) / n * 1000
        text = (f"{self.label:<26} {n:>5} matches in {self.seconds:7.2f} s {self.rate:7.1f} matches/s  "
                f"CPU/match {cpu:6.1f} ms (main process {self.cpu_main / n * 1000:5.2f} ms)")  # fmt: skip
        if self.rss[1]:
            text += f"  main RSS {self.rss[0] >> 20} -> {self.rss[1] >> 20} MiB"
        return text


def replay_size(folder: Path) -> int:
    """Bytes of every replay in a tournament folder."""
    return sum(p.stat().st_size for p in (folder / "replays").iterdir() if p.is_file())


def reused(config: TournamentConfig, jobs: int, folder: Path, label: str, compress: bool = False) -> Run:
    """A whole tournament with ``jobs`` workers (replays compressed with ``compress``)."""
    store = start(config, RunOptions(jobs=jobs, compress=compress), folder)
    gc.collect()
    rss0 = rss_bytes()
    (m0, k0), t0 = cpu_seconds(), time.perf_counter()
    outcome = play(store, stream=io.StringIO(), live=False)
    seconds = time.perf_counter() - t0
    (m1, k1) = cpu_seconds()
    gc.collect()
    return Run(label, outcome.standings.matches, seconds, m1 - m0, k1 - k0, (rss0, rss_bytes()),
               replay_size(folder))  # fmt: skip


def restarted(config: TournamentConfig, matches: int, folder: Path) -> Run:
    """Both bots started afresh for every match."""
    commands = {b.name: b.command for b in config.bots}
    folder.mkdir(parents=True)
    (m0, k0), t0 = cpu_seconds(), time.perf_counter()
    schedule = build_schedule(config)[:matches]
    for spec in schedule:
        mc = match_config(config, spec, folder / f"{spec.match_id}.jsonl")
        run_match((commands[spec.seats[0]], commands[spec.seats[1]]), mc)
    (m1, k1) = cpu_seconds()
    return Run("restart per match, -j1", len(schedule), time.perf_counter() - t0, m1 - m0, k1 - k0)


def record_cost(config: TournamentConfig, folder: Path, matches: int = 200) -> tuple[float, float]:
    """Wall and CPU milliseconds the main process spends to record one finished match (a signed, fsynced line
    and the progress line): what bounds a tournament's matches/s however many workers play."""
    store = start(config, RunOptions(), folder)
    bar = ProgressDisplay(len(store.schedule), 0, stream=io.StringIO(), live=False)
    specs = list(store.schedule.values())[:matches]
    results = [MatchResult(s.match_id, 0, (7, 0), 3, Termination.ROUNDS, None, s.seats, s.seed, 60) for s in specs]
    c0, t0 = time.process_time(), time.perf_counter()
    for spec, result in zip(specs, results, strict=True):
        bar.advance(store.append(Record(spec, result)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    store.close()
    return wall / len(specs) * 1000, cpu / len(specs) * 1000


def main() -> None:
    """Print matches/s, CPU and memory of each mode, the ratios and the replay sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=100, help="deal pairs of the reused runs (2 games each)")
    parser.add_argument("--baseline-matches", type=int, default=40, help="matches of the restart baseline")
    parser.add_argument("--rules", default="cardavia", help="rules preset (single-deal cardavia by default)")
    parser.add_argument("--jobs", type=int, default=2, help="workers of the parallel run (default 2)")
    args = parser.parse_args()
    adopt_orphans()  # as the CLI does: a killed sandbox's bot is reaped here, so its CPU time is counted
    config = TournamentConfig(bots=BOTS, rules=resolve_rules(args.rules), pairs=args.pairs, seed=1)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        rows = [
            restarted(config, args.baseline_matches, base / "restart"),
            reused(config, 1, base / "j1", "reused bots, -j1"),
            reused(config, args.jobs, base / "jN", f"reused bots, -j{args.jobs}"),
            reused(config, 1, base / "gz", "reused bots, -j1 --compress", compress=True),
        ]
        record_wall, record_cpu = record_cost(config, base / "record")
    after = os.getloadavg()
    print(f"load average: {load[0]:.2f} before, {after[0]:.2f} after, on {os.cpu_count()} CPUs "
          "(other work shares the machine)")  # fmt: skip
    for row in rows:
        print(row.line())
    r0, r1, rn, gz = rows
    print(f"reuse / restart (-j1):       {r1.rate / r0.rate:5.2f}x   (goal >= 5)")
    print(f"-j{args.jobs} / -j1 (reused):          {rn.rate / r1.rate:5.2f}x   (goal >= 1.8 on an idle machine with "
          f"{args.jobs} cores)")  # fmt: skip
    cpu1, cpun = (r.cpu_main + r.cpu_rest for r in (r1, rn))
    print(f"-j{args.jobs} CPU per match / -j1:     {cpun / rn.matches / (cpu1 / r1.matches):5.2f}x   (1.00: parallel "
          "play costs no extra CPU, so -jN is bound by N free cores)")  # fmt: skip
    print(f"main process, per match:     {record_wall:5.2f} ms wall ({record_cpu:.2f} ms CPU) to record it (fsync): "
          f"at most ~{1000 / record_wall:.0f} matches/s whatever -j")  # fmt: skip
    for r in (r1, rn):
        print(f"main RSS growth, {r.label:<13} {(r.rss[1] - r.rss[0]) / r.matches / 1024:6.2f} kB per match")
    plain_kb, gz_kb = r1.replay_bytes / r1.matches / 1024, gz.replay_bytes / gz.matches / 1024
    extra_ms = ((gz.cpu_main + gz.cpu_rest) / gz.matches - cpu1 / r1.matches) * 1000
    print(f"replay size per match:       {plain_kb:6.1f} kB plain, {gz_kb:6.1f} kB .jsonl.gz "
          f"({plain_kb / gz_kb:.1f}x smaller); --compress costs {extra_ms:+.2f} CPU ms/match")  # fmt: skip


if __name__ == "__main__":
    main()
