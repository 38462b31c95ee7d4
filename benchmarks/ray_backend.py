"""The Ray backend beside the local one: matches/s at the same -j, and the Ray backend's cost per match.

Run: ``.venv/bin/python benchmarks/ray_backend.py [--pairs N] [--jobs J] [--rules PRESET]`` as root. The script
runs itself again inside new network and PID namespaces (``unshare``) with only loopback up, starts a one-node
Ray cluster there (``ray start --head``, J CPUs), and plays the same tournament (``bots/greedy_bot.py`` against
``bots/random_bot.py --seed 1``, single-deal cardavia matches) twice through the library: with the local
backend at ``-j J``, then with the Ray backend at ``-j J`` on that cluster. Leaving the namespaces ends every Ray
process. For the Ray backend it prints the set-up (connect, the bots' preflight on the node, the actors) apart
from the play (the local backend's figure includes its own set-up: forking the workers). Goal: the Ray backend's
play at least 0.8x the local backend's matches/s.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.records import MatchResult  # noqa: E402
from referee.tournament import BotSpec, RunOptions, TournamentConfig, play, resolve_rules, start  # noqa: E402
from referee.tournament.records import Played, Record  # noqa: E402
from referee.tournament.schedule import MatchSpec  # noqa: E402
from referee.tournament.units import Units  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PORT = 6392
BOTS = (
    BotSpec("greedy", f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"),
    BotSpec("random", f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'} --seed 1"),
)


def local(config: TournamentConfig, jobs: int, folder: Path) -> tuple[int, float]:
    """Matches played and seconds taken by the local backend."""
    store = start(config, RunOptions(jobs=jobs), folder)
    t0 = time.perf_counter()
    outcome = play(store, stream=io.StringIO(), live=False)
    return outcome.standings.matches, time.perf_counter() - t0


def on_ray(config: TournamentConfig, jobs: int, folder: Path, address: str) -> tuple[int, float, float]:
    """Matches played, set-up seconds and play seconds of the Ray backend (the driver as ``play`` runs it)."""
    from referee.tournament.ray_backend import RayRun

    store = start(config, RunOptions(jobs=jobs, backend="ray", ray_address=address), folder)

    def emit(spec: MatchSpec, result: MatchResult, played: Played) -> None:
        store.append(Record.of(spec, result, played))

    t0 = time.perf_counter()
    with RayRun(config, store.output(), Units.pending(store.schedule, jobs), jobs, address) as run:
        t1 = time.perf_counter()
        run.run(emit, lambda: False)
        t2 = time.perf_counter()
    store.close()
    return store.done, t1 - t0, t2 - t1


def inside(args: argparse.Namespace) -> None:
    """In the namespaces: a one-node cluster, both runs, the figures."""
    config = TournamentConfig(bots=BOTS, rules=resolve_rules(args.rules), pairs=args.pairs, seed=1)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        n_local, s_local = local(config, args.jobs, base / "local")
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
        t0 = time.perf_counter()
        subprocess.run(
            [BIN / "ray", "start", "--head", "--port", str(PORT), "--node-ip-address", "127.0.0.1", "--num-cpus",
             str(args.jobs), "--object-store-memory", "100000000", "--include-dashboard=false",
             "--temp-dir", str(base / "ray"), "--disable-usage-stats"],
            check=True, capture_output=True, env=env,
        )  # fmt: skip
        cluster_s = time.perf_counter() - t0
        n_ray, setup_s, s_ray = on_ray(config, args.jobs, base / "on-ray", f"127.0.0.1:{PORT}")
    print(f"load average before: {load[0]:.2f} on {os.cpu_count()} CPUs (other work shares the machine)")
    print(f"tournament: {n_local} matches (ray: {n_ray}) of {args.rules}, greedy vs random, -j {args.jobs}")
    print(f"local backend:  {n_local / s_local:7.1f} matches/s  ({s_local:.2f} s)")
    print(f"ray backend:    {n_ray / s_ray:7.1f} matches/s  ({s_ray:.2f} s of play; set-up {setup_s:.2f} s: "
          f"connect, preflight on the node, actors; 'ray start --head' took {cluster_s:.2f} s)")  # fmt: skip
    per_match_ms = (s_ray - s_local) / n_ray * args.jobs * 1000
    total = n_ray / (setup_s + s_ray)
    print(f"ray / local:    {(n_ray / s_ray) / (n_local / s_local):.2f}x  (goal >= 0.80x); with the set-up: "
          f"{total / (n_local / s_local):.2f}x ({total:.1f} matches/s)")  # fmt: skip
    print(f"ray's cost per match: {per_match_ms:+.1f} ms of a worker slot "
          f"({(s_ray - s_local) / n_ray * 1000:+.2f} ms of wall time at -j {args.jobs})")  # fmt: skip


def main() -> None:
    """Parse the options; outside the namespaces, run this script again inside them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=100, help="deal pairs (2 matches each)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="matches in parallel, both backends")
    parser.add_argument("--rules", default="cardavia", help="rules preset (single-deal cardavia by default)")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        inside(args)
        return
    me = [sys.executable, __file__, "--inside", "--pairs", str(args.pairs), "-j", str(args.jobs), "--rules", args.rules]
    script = 'ip link set lo up && exec "$@"'
    ns = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", script, "sh", *me]
    sys.exit(subprocess.run(ns, cwd=ROOT, check=False).returncode)


if __name__ == "__main__":
    main()
