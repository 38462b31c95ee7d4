"""End to end at scale: a results folder through the end-of-run report, ``--resume``, ``merge`` and a ladder refit,
each step in a fresh process, with its peak memory and time.

Run: ``.venv/bin/python benchmarks/scale_e2e.py [--real 600,6000] [--synthetic 6000,60000,600000]``.

- *real* folders: a tournament actually played (three ``bots/minimal_bot.py``, ``-j 2``, compressed replays, no
  pages), its time and the main process's peak memory;
- *synthetic* folders: 64 bots, one result per scheduled match (a seeded random winner), written in the store's
  own formats (``tournament.json`` by :func:`referee.tournament.start`, every ``results.jsonl`` line signed by the
  store's :class:`~referee.signing.Chain`), no replays (what is synthetic: the games and the replays); and the
  same schedule as two shard folders, for the merge. Each is then opened and closed once, as the end of a run
  leaves it: its lines checked and its checkpoint written (:mod:`referee.tournament.checkpoint`).

Then, on each folder, each step in its own process: ``start`` (the work units of the whole schedule as a run at
``-j 2`` makes them before its first match, as if nothing were played, and the first units queued), ``report``
(open the folder read-only, the end-of-run report: :func:`~referee.tournament.session.summarize`), ``resume``
(``--resume`` of the finished folder: open it from its checkpoint, nothing left to play, the report), ``resume-
full`` (the same with the checkpoint removed first: every line checked, as a folder that has none, or whose files
changed since, is read), ``merge`` (of the two shards, into a new folder) and ``ladder`` (``tournament add``'s
refit: a ladder step with one entrant, the description rewritten, the joint ratings of every game and the next
``--until-separated`` choice). Printed: the peak RSS of the step's process
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``), its time and its time per result (wall and CPU: on a busy machine,
read the CPU column); for ``report``, also the CPU time of the report alone once the results are gathered, which is
what the end of a run adds (the run's store gathers them as the matches finish), without and with the pages.
Goal: peak memory at 600,000 results within 1.2x of that at 6,000 (under 100 MB), each step's time per result flat
within 1.5x, the report of a 6,000-match run under 2 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS  # noqa: E402
from referee.records import MatchResult, Termination  # noqa: E402
from referee.signing import Chain  # noqa: E402
from referee.tournament import BotSpec, Record, RunOptions, TournamentConfig, start  # noqa: E402
from referee.tournament.checkpoint import CHECKPOINT  # noqa: E402
from referee.tournament.folder import RESULTS  # noqa: E402
from referee.tournament.store import Store, dumps_line  # noqa: E402

BOTS = Path(__file__).resolve().parent.parent / "bots"
KEY = bytes(range(32))
STEPS = ("start", "report", "resume", "resume-full", "merge", "ladder")


def _config(bots: int, pairs: int, command: str) -> TournamentConfig:
    specs = tuple(BotSpec(f"bot{i:02d}", command) for i in range(bots))
    return TournamentConfig(bots=specs, rules=PRESETS["koikoi-japan"], pairs=pairs, seed=7)


def synthetic(root: Path, matches: int) -> int:
    """A 64-bot folder of about ``matches`` results and its two shards (``root``-1, ``root``-2); returns the
    results."""
    pairings = 64 * 63 // 2
    config = _config(64, max(1, round(matches / (2 * pairings))), f"{sys.executable} {BOTS / 'minimal_bot.py'}")
    total = 0
    for folder, shard in ((root, (1, 1)), (root.with_name(root.name + "-1"), (1, 2)),
                          (root.with_name(root.name + "-2"), (2, 2))):  # fmt: skip
        store = start(config, RunOptions(shard=shard), folder, KEY, checked=True)
        rng = random.Random(f"{shard}")
        chain = Chain(KEY)
        with open(folder / RESULTS, "w", encoding="utf-8") as f:
            for spec in store.schedule.values():
                winner = rng.choice([0, 1, 1, 0, None])
                scores = (7, 0) if winner == 0 else (0, 7) if winner == 1 else (0, 0)
                result = MatchResult(spec.match_id, winner, scores, 3, Termination.ROUNDS, None, spec.seats, spec.seed,
                                     60)  # fmt: skip
                f.write(dumps_line(chain.sign(Record(spec, result, None, spec.order).to_json())) + "\n")
                total += shard == (1, 1)
        store.close()
        Store.open(folder, 1, KEY).close()  # its lines checked once and its checkpoint written, as a run's end does
    return total


def real(root: Path, matches: int) -> int:
    """A tournament of three fast bots played into ``root`` (``-j 2``, compressed replays); returns the results."""
    from referee.tournament.session import play

    config = _config(3, max(1, matches // 6), f"{sys.executable} {BOTS / 'minimal_bot.py'}")
    store = start(config, RunOptions(jobs=2, compress=True), root, KEY)
    with open(os.devnull, "w") as sink:
        outcome = play(store, stream=sink, live=False)
    return outcome.standings.matches


def step(name: str, root: Path, end: dict[str, float]) -> int:
    """Run step ``name`` on the folder ``root``; returns the results it read. The report step puts its end-of-run
    figures in ``end``: the CPU time of the report alone, once the results are gathered (what the end of a run
    adds), without and with the pages."""
    from referee.tournament.session import play, summarize

    if name == "start":  # what a run of the whole schedule holds before its first match (-j 2)
        from referee.tournament.folder import read_description
        from referee.tournament.ledger import Ledger
        from referee.tournament.runner import QUEUED
        from referee.tournament.units import Units

        units = Units.pending(Ledger(read_description(root, KEY).config, (1, 1)), 2)
        first = [unit for unit, _ in zip(units, range(2 * QUEUED), strict=False)]
        assert sum(map(len, first)) <= units.matches
        return units.matches
    if name == "report":
        store = Store.open_readonly(root, KEY, collect=True)  # the results read as a run's store gathers them
        t0 = time.process_time()
        matches = summarize(store).standings.matches
        end["end cpu s"] = time.process_time() - t0
        if next((root / "replays").glob("*.html"), None) is not None:  # and with the pages, where the run wrote
            # its match pages (a folder without them would have all its match pages written here)
            t0 = time.process_time()
            summarize(store, pages=True)
            end["end+pages cpu s"] = time.process_time() - t0
        return matches
    if name in ("resume", "resume-full"):
        if name == "resume-full":  # as if the folder had no checkpoint: every line checked (it writes one again)
            (root / CHECKPOINT).unlink(missing_ok=True)
        store = Store.open(root, 2, KEY)
        with open(os.devnull, "w") as sink:
            return play(store, stream=sink, live=False).standings.matches
    if name == "merge":
        from referee.tournament.merge import merge

        out = root.with_name(root.name + "-merged")
        shutil.rmtree(out, ignore_errors=True)
        return merge([root.with_name(root.name + "-1"), root.with_name(root.name + "-2")], out, KEY).standings.matches
    if name == "ladder":
        from referee.tournament.ladder import extended
        from referee.tournament.separation import next_pairings
        from referee.tournament.session import _standings

        work = root.with_name(root.name + "-ladder")
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(root, work, ignore=shutil.ignore_patterns("replays", "logs"))
        store = Store.open(work, 1, KEY)
        entrant = BotSpec("entrant", f"{sys.executable} {BOTS / 'minimal_bot.py'}")
        start_at = max(m.index for m in store.schedule.values()) + 1
        store.restage(extended(store.config, [entrant], (), start_at), store.options)
        st = _standings(store)
        next_pairings(st, store.config, 200)
        store.close()
        return st.matches
    raise SystemExit(f"unknown step {name}")


def measured(args: list[str]) -> dict[str, float]:
    """Run this script's ``--step`` in a fresh process: its figures."""
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"step {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr.strip()}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def child(args: argparse.Namespace) -> None:
    """One step in this process: print its time, results and peak RSS as JSON."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    root = Path(args.folder)
    end: dict[str, float] = {}
    if args.step == "make-real":
        n = real(root, args.size)
    elif args.step == "make-synthetic":
        n = synthetic(root, args.size)
    else:
        n = step(args.step, root, end)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "cpu": cpu, "results": n, "peak": peak, **end}))


def main() -> None:
    """Print one row per folder and step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--real", default="600,6000", help="matches of the played tournaments (default 600,6000)")
    parser.add_argument("--synthetic", default="6000,60000,600000", help="results of the synthetic folders")
    parser.add_argument("--work", type=Path, default=None,
                        help="keep the folders in this directory and reuse those made before (default: a temporary "
                        "directory, removed at the end)")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        return child(args)
    sizes = [("real", int(x)) for x in args.real.split(",") if x] + [
        ("synthetic", int(x)) for x in args.synthetic.split(",") if x
    ]
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} on {os.cpu_count()} CPUs; peak = max RSS of the step's own process")
    head = ["folder", "results", "step", "peak MB", "s", "cpu s", "us/result", "cpu us/result"]
    print("  ".join(head))
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        work.mkdir(parents=True, exist_ok=True)
        for kind, size in sizes:
            root = work / f"{kind}{size}"
            made_file = root.with_name(root.name + ".made.json")
            if args.work is not None and made_file.exists() and root.is_dir():
                made = dict(json.loads(made_file.read_text()))
            else:
                for suffix in ("", "-1", "-2", "-merged", "-ladder"):  # this folder's, not a larger size's
                    shutil.rmtree(root.with_name(root.name + suffix), ignore_errors=True)
                made = measured(["--step", f"make-{kind}", "--folder", str(root), "--size", str(size)])
                made_file.write_text(json.dumps(made))
            n = int(made["results"])
            rows = [("play" if kind == "real" else "make", made)]
            for name in STEPS:
                if name == "merge" and kind == "real":
                    continue
                rows.append((name, measured(["--step", name, "--folder", str(root)])))
            for name, f in rows:
                cpu = f"{f['cpu']:7.2f}" if "cpu" in f else "    n/a"
                per_cpu = f"{f['cpu'] / max(1, n) * 1e6:7.1f}" if "cpu" in f else "    n/a"
                end = "  ".join(f"{k} {f[k]:.2f}" for k in ("end cpu s", "end+pages cpu s") if k in f)
                print(f"{kind:9s}  {n:7d}  {name:6s}  {f['peak'] / 1e6:7.1f}  {f['seconds']:7.2f}  {cpu}  "
                      f"{f['seconds'] / max(1, n) * 1e6:7.1f}  {per_cpu}  {end}".rstrip(), flush=True)  # fmt: skip
            if args.work is None:
                for p in work.iterdir():
                    shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    main()
