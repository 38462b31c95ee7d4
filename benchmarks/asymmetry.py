"""The asymmetry test on real tournaments: its p-value for each bot of an honest round robin, and for a bot that
carries what it saw in the first-played game of a pair into the second.

Run: ``python benchmarks/asymmetry.py [--pairs 200] [--carrier-pairs 20] [--seed 1] [--jobs 1] [--rounds N]``.
The honest round robin is greedy, random and search at a small budget (``--playouts 4``), ``--pairs`` pairs per
pairing on the single-deal cardavia rules; the carrier run is ``tests/hostile/carrier_bot.py`` against greedy,
``--carrier-pairs`` pairs of three rounds, with the syscall filter off (``KOIKOI_REFEREE_SECCOMP=off``) and the
first game's processes kept frozen (``KOIKOI_REFEREE_TWINS=keep``) so that its lock channel works. Goal: no
honest bot flagged (p above 1%), the carrier flagged (p at most 1%). Prints one line per bot: pairs, mean
second-minus-first point margin, p-value, flag; then the machine load and times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CLOCK = ["--rules", "cardavia", "--startup-ms", "30000", "--move-ms", "20000", "--bank-ms", "60000"]


def run(folder: Path, bots: list[str], pairs: int, seed: int, jobs: int, extra: list[str],
        env: dict[str, str] | None = None) -> tuple[list[dict[str, object]], float]:  # fmt: skip
    """One tournament through the command line; its standings entries and wall seconds."""
    exe = Path(PY).parent / "koikoi-referee"
    args = [str(exe), "tournament", *[w for b in bots for w in ("-b", b)], *CLOCK, *extra, "--pairs", str(pairs),
            "--seed", str(seed), "-j", str(jobs), "-o", str(folder), "--no-html"]  # fmt: skip
    t0 = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    took = time.perf_counter() - t0
    doc = json.loads((folder / "standings.json").read_text())
    return doc["standings"], took


def show(title: str, rows: list[dict[str, object]], took: float) -> None:
    """Print one line per bot."""
    print(f"{title} ({took:.0f} s)")
    for r in rows:
        flag = "FLAGGED" if r["asymmetry_flag"] else "not flagged"
        print(f"  {r['name']:<8} pairs {r['asymmetry_pairs']:>4}  mean diff {r['asymmetry_mean']:+7.2f}  "
              f"p = {r['asymmetry_p']:.4g}  {flag}")  # fmt: skip


def main() -> int:
    """Run both tournaments and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200, help="pairs per pairing of the honest round robin")
    parser.add_argument("--carrier-pairs", type=int, default=20, help="pairs of the carrier against greedy (0: skip)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    honest = ["greedy=bots/greedy_bot.py", f"random={PY} bots/random_bot.py --seed 5",
              f"search={PY} bots/search_bot.py --playouts 4 --seed 1"]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="koikoi-asymmetry-") as tmp:
        rows, took = run(Path(tmp) / "honest", honest, args.pairs, args.seed, args.jobs, [])
        show(f"honest round robin, {args.pairs} pairs a pairing, seed {args.seed}, -j {args.jobs}", rows, took)
        if args.carrier_pairs:
            carrier = [f"carrier={PY} {ROOT / 'tests/hostile/carrier_bot.py'} {ROOT / 'bots/search_bot.py'}",
                       "greedy=bots/greedy_bot.py"]  # fmt: skip
            switches = {"KOIKOI_REFEREE_SECCOMP": "off", "KOIKOI_REFEREE_TWINS": "keep"}
            rows, took = run(Path(tmp) / "carrier", carrier, args.carrier_pairs, args.seed, args.jobs,
                             ["--rounds", "3"], switches)  # fmt: skip
            show(f"carrier vs greedy, {args.carrier_pairs} pairs of 3 rounds, seed {args.seed}", rows, took)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
