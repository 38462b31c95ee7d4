"""Learning-environment speed, both engine builds side by side: steps/s with random masked actions, one core.

Each figure runs in a fresh child process of this script for a fixed wall time: the compiled engine (when
built) and the pure-Python engine (``KOIKOI_PURE_ENGINE=1``). Three environments: ``raw`` is
``koikoi_v0.raw_env()`` (the PettingZoo environment without wrappers), ``aec`` is ``koikoi_v0.env()`` (with the
classic games' wrappers: illegal moves, bounds, call order), ``gym`` is ``KoikoiEnv(opponent="random")`` (one
step there is the agent's decision plus the opponent's up to the next one; both count as steps). Each step reads
``last()`` (the observation and mask are built) and picks uniformly among the mask's legal indexes; an episode
that ends is reset. Wall-time and CPU-time rates are printed (CPU is steadier on a busy machine)::

    .venv/bin/python benchmarks/rl.py --seconds 5
    .venv/bin/python benchmarks/rl.py --env raw --build current
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

from referee.build_info import engine_build  # noqa: E402
from referee.rl import koikoi_v0  # noqa: E402
from referee.rl.single import KoikoiEnv  # noqa: E402

PURE_ENV = "KOIKOI_PURE_ENGINE"
ENVS = ("raw", "aec", "gym")


def run_aec(env: Any, seconds: float, seed: int) -> tuple[int, int]:
    """Steps and episodes of an AEC environment in ``seconds``."""
    rnd = random.Random(seed).random
    flat = np.flatnonzero
    env.reset(seed=seed)
    steps = episodes = 0
    end = time.perf_counter() + seconds
    while True:
        for _ in range(256):
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                episodes += 1
                env.reset()
                continue
            legal = flat(observation["action_mask"])
            env.step(int(legal[int(rnd() * len(legal))]))
            steps += 1
        if time.perf_counter() >= end:
            return steps, episodes


def run_gym(seconds: float, seed: int) -> tuple[int, int]:
    """Engine decisions (the agent's and the random opponent's) and episodes of the Gym environment."""
    env = KoikoiEnv("random")
    rnd = random.Random(seed).random
    flat = np.flatnonzero
    observation, _ = env.reset(seed=seed)
    decisions = episodes = 0
    end = time.perf_counter() + seconds
    while True:
        for _ in range(256):
            legal = flat(observation["action_mask"])
            observation, _, terminated, truncated, _ = env.step(int(legal[int(rnd() * len(legal))]))
            if terminated or truncated:
                episodes += 1
                decisions += env.table.decisions
                observation, _ = env.reset()
        if time.perf_counter() >= end:
            return decisions + env.table.decisions, episodes


def child(name: str, seconds: float) -> dict[str, Any]:
    """One figure in this process."""
    c0 = time.process_time()
    t0 = time.perf_counter()
    if name == "gym":
        steps, episodes = run_gym(seconds, 1)
    else:
        env = koikoi_v0.raw_env() if name == "raw" else koikoi_v0.env()
        steps, episodes = run_aec(env, seconds, 1)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"env": name, "build": engine_build(), "steps": steps, "episodes": episodes, "seconds": wall, "cpu": cpu}


def main() -> int:
    """Run each figure in a child process and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per figure (default 5)")
    parser.add_argument("--env", choices=ENVS, action="append", help="only these environments (repeatable)")
    parser.add_argument("--build", choices=("both", "current"), default="both", help="both builds, or this one")
    parser.add_argument("--child", choices=ENVS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.seconds)))
        return 0
    builds = [None] if args.build == "current" else ["compiled", "pure"]
    print(f"{'env':<5} {'engine build':<22} {'steps/s':>10} {'steps/s CPU':>12} {'episodes/s':>11}   (counts)")
    for name in args.env or ENVS:
        for build in builds:
            env = dict(os.environ)
            if build == "pure":
                env[PURE_ENV] = "1"
            elif build == "compiled":
                env.pop(PURE_ENV, None)
            cmd = [sys.executable, __file__, "--child", name, "--seconds", str(args.seconds)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
            f = json.loads(out.strip().splitlines()[-1])
            s = f["seconds"]
            print(
                f"{f['env']:<5} {f['build']:<22} {f['steps'] / s:>10,.0f} {f['steps'] / f['cpu']:>12,.0f} "
                f"{f['episodes'] / s:>11,.1f}   ({f['steps']:,} steps, {f['episodes']:,} episodes in {s:.1f} s)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
