"""Engine speed, both builds side by side: random-vs-random matches, one core, a fixed wall time per preset.

Each match starts from its own seed; both seats choose uniformly among ``legal_actions`` with one seeded
``random.Random``. For each preset the compiled engine (when built) and the pure-Python engine
(``KOIKOI_PURE_ENGINE=1``) each run in a fresh child process of this script, one after the other, and the report
prints matches/s, rounds/s and decisions/s of wall time, matches per second of the child's CPU time (steadier on a
busy machine), and the compiled/pure ratios. ``--states`` adds the simulation figure: states/s of
:func:`referee.engine.simulate.random_playout` from one mid-game root (states are immutable: the root is shared by
every playout, never copied)::

    .venv/bin/python benchmarks/engine.py --seconds 3
    .venv/bin/python benchmarks/engine.py --preset koikoi-japan --seconds 10 --states
    .venv/bin/python benchmarks/engine.py --build current   # only the engine this process imports
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.build_info import engine_build  # noqa: E402
from referee.engine import PRESETS, MatchEnd, Rules, State, apply, legal_actions, new_match  # noqa: E402
from referee.engine.simulate import random_playout  # noqa: E402

PURE_ENV = "KOIKOI_PURE_ENGINE"


@dataclass(frozen=True)
class Figures:
    """What one preset managed in its time with one build."""

    preset: str
    build: str
    seconds: float
    cpu_seconds: float
    matches: int
    rounds: int
    decisions: int
    states: int = 0  # playout steps (--states)
    states_seconds: float = 0.0

    def line(self) -> str:
        """One row of the report."""
        s = self.seconds
        rates = f"{self.matches / s:>11,.0f} {self.rounds / s:>11,.0f} {self.decisions / s:>13,.0f}"
        cpu = f"{self.matches / self.cpu_seconds:>15,.0f}"
        sims = f"{self.states / self.states_seconds:>12,.0f}" if self.states_seconds else f"{'-':>12}"
        counts = f"({self.matches:,} matches, {self.rounds:,} rounds in {s:.2f} s)"
        return f"{self.preset:<14} {self.build:<16} {rates} {cpu} {sims}   {counts}"


HEADER = (
    f"{'preset':<14} {'build':<16} {'matches/s':>11} {'rounds/s':>11} {'decisions/s':>13} {'matches/cpu-s':>15} "
    f"{'states/s':>12}"
)


def play_random_match(rules: Rules, seed: int, rng: random.Random) -> tuple[int, int]:
    """Play one match with random legal actions; (rounds played, decisions made)."""
    state = new_match(rules, seed)
    decisions = 0
    while not state.is_over:
        state = apply(state, rng.choice(legal_actions(state)))
        decisions += 1
    end = next(e for e in state.events if isinstance(e, MatchEnd))
    return end.rounds, decisions


def playouts(root: State, seconds: float, rng: random.Random) -> tuple[int, float]:
    """Random playouts to the end of the match from ``root``, for ``seconds``: (states made, seconds taken)."""
    states = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        states += random_playout(root, rng)[1]  # every playout starts from the same root: nothing to copy
        now = time.perf_counter()
        if now >= deadline:
            return states, now - start


def mid_game(rules: Rules, seed: int) -> State:
    """A state a few decisions into the first round (a search bot's typical root)."""
    state = new_match(rules, seed)
    rng = random.Random(seed)
    for _ in range(6):
        state = apply(state, rng.choice(legal_actions(state)))
    return state


def measure(name: str, seconds: float, seed: int, states: bool) -> Figures:
    """Play matches of preset ``name`` for about ``seconds`` of wall time with the engine this process imports."""
    rules = PRESETS[name]
    rng = random.Random(seed)
    matches = rounds = decisions = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        r, d = play_random_match(rules, seed + matches, rng)
        matches += 1
        rounds += r
        decisions += d
        now = time.perf_counter()
        if now >= deadline:
            break
    wall, cpu = now - start, time.process_time() - cpu_start
    made, took = playouts(mid_game(rules, seed), seconds, rng) if states else (0, 0.0)
    return Figures(name, engine_build(), wall, cpu, matches, rounds, decisions, made, took)


def child(build: str, name: str, args: argparse.Namespace) -> Figures:
    """Measure one preset in a fresh process with the ``compiled`` (as installed) or the ``pure`` engine."""
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if build == "pure":
        env[PURE_ENV] = "1"
    command = [sys.executable, __file__, "--build", "current", "--json", "--preset", name]
    command += ["--seconds", str(args.seconds), "--seed", str(args.seed)] + (["--states"] if args.states else [])
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return Figures(**json.loads(out))


def ratio(a: float, b: float) -> str:
    """``a / b`` as ``2.31x``."""
    return f"{a / b:.2f}x" if b else "-"


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per preset and build (default 3)")
    parser.add_argument("--preset", choices=list(PRESETS), action="append", help="a preset to run (default: all)")
    parser.add_argument("--seed", type=int, default=1, help="first match seed and chooser seed (default 1)")
    parser.add_argument("--states", action="store_true", help="also count states/s of random playouts")
    parser.add_argument(
        "--build", choices=("both", "current"), default="both",
        help="both: the compiled and the pure engine in child processes (default); current: this process's engine",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a child's report
    args = parser.parse_args(argv)
    names: list[str] = args.preset or list(PRESETS)
    if args.build == "current":
        if not args.json:
            print(HEADER)
        for name in names:
            figures = measure(name, args.seconds, args.seed, args.states)
            print(json.dumps(asdict(figures)) if args.json else figures.line(), flush=True)
        return
    print(f"python {sys.version.split()[0]}, {args.seconds:g} s per preset and build, each in a fresh process")
    print(HEADER)
    for name in names:
        compiled, pure = child("compiled", name, args), child("pure", name, args)
        if compiled.build == pure.build:
            print(pure.line() + "   (no compiled build installed)", flush=True)
            continue
        print(compiled.line())
        print(pure.line())
        speed = ratio(compiled.matches / compiled.seconds, pure.matches / pure.seconds)
        cpu = ratio(compiled.matches / compiled.cpu_seconds, pure.matches / pure.cpu_seconds)
        sims = ""
        if args.states:
            sims = ratio(compiled.states / compiled.states_seconds, pure.states / pure.states_seconds)
        print(f"{name:<14} {'compiled/pure':<16} {speed:>11} {'':>11} {'':>13} {cpu:>15} {sims:>12}", flush=True)


if __name__ == "__main__":
    main()
