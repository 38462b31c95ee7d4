"""Tournament bookkeeping at scale: plan, resume and standings of round-robins of 8, 64 and 256 bots, no bot run.

Run: ``.venv/bin/python benchmarks/scale.py [--bots 8,64,256] [--pairs N]``. For each size: the time to plan
(the schedule, ``tournament.json``), to write a ``results.jsonl`` with one synthetic result per scheduled match
(a seeded random winner; written directly, not one fsync per line), to resume the folder (read back and check
every line, find what is left) with the RSS this adds (the schedule and the ids of the finished matches), and
to recompute the standings from the results on disk (:func:`referee.tournament.compute`) and write the whole
report (:func:`referee.tournament.summarize`); and the memory a running tournament's store keeps per finished
match (up to 2,000 results appended, traced). Goal: a 64-bot round-robin (2,016 pairings) plans, resumes and
recomputes its standings in under a second, and the standings cost grows linearly with the games (microseconds
per game). ``--end-to-end``: the end-to-end section (``benchmarks/scale_e2e.py``): real and synthetic folders of
up to 600,000 results through the end-of-run report, resume, merge and a ladder refit, peak memory per step.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
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
from referee.tournament.progress import ProgressDisplay  # noqa: E402
from referee.tournament.session import summarize  # noqa: E402
from referee.tournament.store import Store, dumps_line  # noqa: E402

BOT = Path(__file__).resolve().parent.parent / "bots" / "random_bot.py"


def rss_bytes() -> int:
    """This process's resident memory now."""
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def synthetic_results(store: Store, seed: int) -> int:
    """Write one result per scheduled match to ``results.jsonl`` (unsigned); returns the matches."""
    rng = random.Random(seed)
    lines = []
    for spec in store.schedule.values():
        winner = rng.choice([0, 1, 1, 0, None])
        scores = (7, 0) if winner == 0 else (0, 7) if winner == 1 else (0, 0)
        result = MatchResult(spec.match_id, winner, scores, 3, Termination.ROUNDS, None, spec.seats, spec.seed, 60)
        lines.append(dumps_line(Record(spec, result).to_json()) + "\n")
    (store.root / RESULTS).write_text("".join(lines), encoding="utf-8")
    return len(lines)


def held_per_match(config: TournamentConfig, folder: Path, matches: int) -> float:
    """Bytes a running tournament's store keeps per finished match: ``matches`` synthetic results appended one
    by one (signed line, fsync) with their progress line, traced with :mod:`tracemalloc`."""
    store = start(config, RunOptions(), folder)
    sink = open(os.devnull, "w")  # noqa: SIM115 - closed below
    bar = ProgressDisplay(len(store.schedule), 0, stream=sink, live=False)
    records = []
    for spec in list(store.schedule.values())[:matches]:
        result = MatchResult(spec.match_id, 0, (7, 0), 3, Termination.ROUNDS, None, spec.seats, spec.seed, 60,
                             ({"event": "round_end", "round": 1},) * 6)  # fmt: skip
        records.append(Record(spec, result))
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for rec in records:
        bar.advance(store.append(rec))
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    store.close()
    sink.close()
    return held / matches


def measure(bots: int, pairs: int, folder: Path) -> list[str]:
    """The figures of one round-robin of ``bots`` bots as table cells."""
    specs = tuple(BotSpec(f"bot{i:03d}", f"{sys.executable} {BOT} --seed {i}") for i in range(bots))
    config = TournamentConfig(bots=specs, rules=PRESETS["koikoi-japan"], pairs=pairs, seed=1)
    t0 = time.perf_counter()
    store = start(config, RunOptions(), folder)
    plan = time.perf_counter() - t0
    t0 = time.perf_counter()
    games = synthetic_results(store, bots)
    write = time.perf_counter() - t0
    store.close()
    del store
    gc.collect()
    rss0 = rss_bytes()
    t0 = time.perf_counter()
    resumed = Store.open(folder)
    resume = time.perf_counter() - t0
    rss = rss_bytes() - rss0
    assert resumed.done == games and not resumed.pending()
    t0 = time.perf_counter()
    standings = compute(config, resumed.iter_records())
    recompute = time.perf_counter() - t0
    assert standings.matches == games
    t0 = time.perf_counter()
    summarize(resumed)
    report = time.perf_counter() - t0
    resumed.close()
    held = held_per_match(config, folder.with_name(folder.name + "-run"), min(games, 2000))
    pairings = bots * (bots - 1) // 2
    return [
        f"{bots}", f"{pairings}", f"{games}", f"{plan:.3f}", f"{write:.3f}", f"{resume:.3f}", f"{rss / games:.0f}",
        f"{recompute:.3f}", f"{report:.3f}", f"{plan + resume + recompute:.3f}", f"{recompute / games * 1e6:.1f}",
        f"{held:.0f}",
    ]  # fmt: skip


def main() -> None:
    """Print one row per tournament size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bots", default="8,64,256", help="comma-separated bot counts (default 8,64,256)")
    parser.add_argument("--pairs", type=int, default=1, help="deal pairs per pairing (2 games each; default 1)")
    e2e = "the end-to-end section instead: benchmarks/scale_e2e.py (its options follow)"
    parser.add_argument("--end-to-end", action="store_true", help=e2e)
    args, rest = parser.parse_known_args()
    if args.end_to_end:
        import subprocess

        raise SystemExit(subprocess.call([sys.executable, str(Path(__file__).with_name("scale_e2e.py")), *rest]))
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    load = os.getloadavg()
    head = ["bots", "pairings", "games", "plan s", "write s", "resume s", "resume RSS B/game", "standings s",
            "report s", "plan+resume+standings s", "standings us/game", "held B/finished match"]  # fmt: skip
    rows = [head]
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.bots.split(",")):
            rows.append(measure(n, args.pairs, Path(tmp) / f"rr{n}"))
    print(f"load average: {load[0]:.2f} on {os.cpu_count()} CPUs; round-robin, {args.pairs} deal pair(s) per pairing")
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
