"""Engine speed: random-vs-random matches in-process, one core, for a fixed wall time per preset.

Each match starts from its own seed; both seats choose uniformly among ``legal_actions`` with one seeded
``random.Random``. Prints matches/s, rounds/s and decisions/s of wall time per preset, and matches per second
of this process's CPU time (steadier on a busy machine)::

    .venv/bin/python benchmarks/engine.py --seconds 3
    .venv/bin/python benchmarks/engine.py --preset koikoi-japan --seconds 10
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS, MatchEnd, Rules, apply, legal_actions, new_match  # noqa: E402


@dataclass(frozen=True)
class Figures:
    """What one preset managed in its time."""

    preset: str
    seconds: float
    cpu_seconds: float
    matches: int
    rounds: int
    decisions: int

    def line(self) -> str:
        """One row of the report."""
        s = self.seconds
        rates = f"{self.matches / s:>11,.0f} {self.rounds / s:>11,.0f} {self.decisions / s:>13,.0f}"
        cpu = f"{self.matches / self.cpu_seconds:>15,.0f}"
        counts = f"({self.matches:,} matches, {self.rounds:,} rounds in {s:.2f} s)"
        return f"{self.preset:<14} {rates} {cpu}   {counts}"


def play_random_match(rules: Rules, seed: int, rng: random.Random) -> tuple[int, int]:
    """Play one match with random legal actions; (rounds played, decisions made)."""
    state = new_match(rules, seed)
    decisions = 0
    while not state.is_over:
        state = apply(state, rng.choice(legal_actions(state)))
        decisions += 1
    end = next(e for e in state.events if isinstance(e, MatchEnd))
    return end.rounds, decisions


def measure(name: str, seconds: float, seed: int) -> Figures:
    """Play matches of preset ``name`` for about ``seconds`` of wall time."""
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
            return Figures(name, now - start, time.process_time() - cpu_start, matches, rounds, decisions)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per preset (default 3)")
    parser.add_argument(
        "--preset", choices=list(PRESETS), action="append", help="a preset to run (default: all)"
    )
    parser.add_argument("--seed", type=int, default=1, help="first match seed and chooser seed (default 1)")
    args = parser.parse_args(argv)
    names: list[str] = args.preset or list(PRESETS)
    print(f"{'preset':<14} {'matches/s':>11} {'rounds/s':>11} {'decisions/s':>13} {'matches/cpu-s':>15}")
    for name in names:
        print(measure(name, args.seconds, args.seed).line(), flush=True)


if __name__ == "__main__":
    main()
