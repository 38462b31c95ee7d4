"""The ladder: a tournament of four house bots, a fifth added with ``tournament add``, and ``--until-separated``
beside a plain round-robin for the same separation.

Run: ``nice -n 19 .venv/bin/python benchmarks/ladder.py [--pairs N] [--max-pairs N] [--rr-pairs N] [--seed N]``.

1. ``tournament`` of minimal, random (``--seed 1``), greedy and pool (``--style aggressive``), ``--pairs N``;
   then ``tournament add`` of search (``--playouts 16 --seed 1``): printed, the result lines before and after
   (only the new pairings' matches added, the old lines byte-identical), the refitted ratings, and
   ``tournament verify``.
2. ``--until-separated`` on the four bots from ``--pairs 2``: its games and whether every adjacent pair of ranks
   was separated at 95%. Beside it a plain round-robin of ``--rr-pairs`` pairs per pairing, read pair by pair:
   the fewest pairs per pairing (the same deals: a pair's seed does not depend on the pairs per pairing) after
   which every adjacent pair of ranks is separated, and its games.

Every run plays ``-j 1`` with the single-deal cardavia rules and fixed seeds, so the figures repeat.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.tournament.separation import couples  # noqa: E402
from referee.tournament.standings import compute  # noqa: E402
from referee.tournament.store import Store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--rules", "cardavia", "--startup-ms", "20000", "--move-ms", "5000", "--bank-ms", "30000", "-j", "1",
        "--no-html"]  # fmt: skip
FOUR = ["minimal=bots/minimal_bot.py", "random=bots/random_bot.py --seed 1", "greedy=bots/greedy_bot.py",
        "pool=bots/pool_bot.py --style aggressive"]  # fmt: skip
FIFTH = "search=bots/search_bot.py --playouts 16 --seed 1"


def referee(*args: str | Path | int) -> tuple[str, float]:
    """Run the CLI (exit 0 expected); its stdout and wall time."""
    exe = Path(sys.executable).parent / "koikoi-referee"
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe), *map(str, args)], cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"koikoi-referee {' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stderr}")
    return proc.stdout, time.perf_counter() - t0


def results(folder: Path) -> list[dict[str, object]]:
    """The result lines of a folder (not its redeal or extend lines)."""
    rows = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
    return [r for r in rows if "match_id" in r]


def bots(*names: str) -> list[str]:
    """``-b`` options."""
    return [x for n in names for x in ("-b", n)]


def ratings(folder: Path) -> str:
    """``name elo ± error (games)`` of each bot, best first."""
    doc = json.loads((folder / "standings.json").read_text())
    return "\n".join(f"  {r['name']:8} {r['elo']:+7.1f} ± {r['elo_error']:5.1f}  ({r['games']} games)"
                     for r in doc["standings"])  # fmt: skip


def ladder(tmp: Path, pairs: int, seed: int) -> None:
    """Part 1: four bots, then a fifth added."""
    out = tmp / "ladder"
    _, s1 = referee("tournament", *bots(*FOUR), *FAST, "--pairs", pairs, "--seed", seed, "-o", out)
    before = (out / "results.jsonl").read_bytes()
    old = results(out)
    print(f"4 bots, {pairs} pairs per pairing: {len(old)} matches in {s1:.1f} s")
    print(ratings(out))
    _, s2 = referee("tournament", "add", out, "-b", FIFTH, "-j", "1", "--no-html")
    new = results(out)[len(old) :]
    kept = (out / "results.jsonl").read_bytes().startswith(before)
    involve = sum("search" in r["seats"] for r in new)  # type: ignore[operator]
    print(f"add search: {len(new)} new matches in {s2:.1f} s, {involve} of them involving search "
          f"(expected {4 * pairs * 2}); old lines byte-identical: {kept}")  # fmt: skip
    print("refitted ratings over every game:")
    print(ratings(out))
    verify, _ = referee("tournament", "verify", out)
    print("verify:", verify.strip().splitlines()[-1])


def separated_after(folder: Path) -> tuple[int | None, int]:
    """The fewest pairs per pairing after which the round-robin in ``folder`` separates every adjacent pair of
    ranks (None: not within its pairs), and that prefix's games."""
    store = Store.open_readonly(folder)
    records = list(store.iter_records())
    most = max(r.spec.pair for r in records) + 1
    for k in range(1, most + 1):
        prefix = [r for r in records if r.spec.pair < k]
        st = compute(store.config, prefix)
        if all(c.separated for c in couples(st, store.config)):
            return k, st.counted
    return None, len(records)


def until_separated(tmp: Path, max_pairs: int, rr_pairs: int, seed: int) -> None:
    """Part 2: --until-separated against a plain round-robin."""
    out = tmp / "separated"
    _, s1 = referee("tournament", *bots(*FOUR), *FAST, "--pairs", 2, "--seed", seed, "--until-separated",
                    "--max-pairs", max_pairs, "-o", out)  # fmt: skip
    doc = json.loads((out / "standings.json").read_text())["until_separated"]
    state = "separated" if doc["separated"] else "NOT separated (budget spent)"
    print(f"--until-separated (from 2 pairs, budget {max_pairs}): {state} after {doc['games']} games "
          f"({doc['pairs']} pairs, {doc['added_pairs']} added) in {s1:.1f} s")  # fmt: skip
    print("  adjacent ranks:", ", ".join(f"{c['upper']}>{c['lower']} {c['los']}" for c in doc["couples"]))
    rr = tmp / "round-robin"
    _, s2 = referee("tournament", *bots(*FOUR), *FAST, "--pairs", rr_pairs, "--seed", seed, "-o", rr)
    k, games = separated_after(rr)
    if k is None:
        print(f"round-robin of {rr_pairs} pairs per pairing ({games} games, {s2:.1f} s): never separated")
    else:
        print(f"round-robin: separated after {k} pairs per pairing = {games} games (read from a run of {rr_pairs} "
              f"pairs per pairing, {s2:.1f} s)")  # fmt: skip


def main() -> None:
    """Parse the options and run both parts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2, help="pairs per pairing of the ladder run")
    parser.add_argument("--max-pairs", type=int, default=60, help="the budget of --until-separated")
    parser.add_argument("--rr-pairs", type=int, default=30, help="pairs per pairing of the plain round-robin")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ladder(Path(tmp), args.pairs, args.seed)
        print()
        until_separated(Path(tmp), args.max_pairs, args.rr_pairs, args.seed)


if __name__ == "__main__":
    main()
