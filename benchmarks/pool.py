"""The opponent pool against the greedy bot: how strong each style of ``bots/pool_bot.py`` plays on its own.

Plays whole matches on the engine, no bot process and no referee: each style and the greedy bot (``bots/greedy_bot.py``)
are asked through the real request of their seat, as the referee would ask them. ``--pairs`` duplicate deal pairs a
style (each match seed played twice, the players swapping seats), under each preset of ``--rules``; prints each
style's score rate against greedy with a 95% interval over the deal pairs (a pair counts the mean of its two games;
50% is greedy's strength)::

    .venv/bin/python benchmarks/pool.py --pairs 2000
    .venv/bin/python benchmarks/pool.py --rules nintendo --styles reacher stopper --pairs 500 --first 10000

``--player learned`` measures the learned bot (``bots/learned_bot.py``) instead, against greedy and each style of
``--styles``: a row for each, its score rate against that opponent::

    .venv/bin/python benchmarks/pool.py --player learned --rules nintendo --pairs 1000

Every player is deterministic given its input and every match is seeded, so a run repeats exactly. Standard output
only, or one JSON object a row with ``--format json``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS, Action, State  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
pool_bot: Any = importlib.import_module("pool_bot")  # the bot files of this checkout, not package modules
greedy_bot: Any = importlib.import_module("greedy_bot")


def _load(name: str) -> Any:
    """A sibling benchmark script as a module (by its path: this folder is off the import path)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


information: Any = _load("information")  # its pool_action: a player's answer to the real request of its seat
policies: Any = _load("policies")  # its duel: duplicate deal pairs on the engine

Chooser = Callable[[dict[str, Any]], dict[str, Any]]


def asked(chooser: Chooser) -> Callable[[State, list[Action]], Action]:
    """A bot's choice function as a player on the engine: asked through the real request of its seat."""
    return lambda state, legal: information.pool_action(chooser, state)


def duel(rules: str, player: Chooser, pairs: int, first: int, opponent: Chooser | None = None) -> tuple[float, float]:
    """``player``'s score rate against ``opponent`` (default greedy) over ``pairs`` deal pairs from seed ``first``,
    and the half width of its 95% interval over the pairs."""
    theirs = asked(opponent or greedy_bot.choose)
    rate, half = policies.duel(PRESETS[rules], asked(player), pairs, first, theirs)
    return float(rate), float(half)


def cells(styles: list[str], player: str | None) -> list[tuple[str, Chooser, str, Chooser]]:
    """The (player, its chooser, opponent, its chooser) of each row: each style against greedy, or ``player``
    (``learned``) against greedy and each style."""
    if player is None:
        return [(name, information.opponent(name), "greedy", greedy_bot.choose) for name in styles]
    mine = information.opponent(player)
    return [(player, mine, name, information.opponent(name)) for name in ("greedy", *styles)]


def main() -> int:
    styles = sorted(pool_bot.STYLES)
    parser = argparse.ArgumentParser(description="Each style of the opponent pool against the greedy bot "
                                     "(duplicate deals, on the engine).")  # fmt: skip
    parser.add_argument("--rules", nargs="+", default=sorted(PRESETS), choices=sorted(PRESETS),
                        help="presets (default all)")
    parser.add_argument("--styles", nargs="+", default=styles, choices=styles, help="styles (default all)")
    parser.add_argument("--pairs", type=int, default=1000, help="deal pairs a style and preset (default 1000)")
    parser.add_argument("--first", type=int, default=0, help="seed of the first deal pair (default 0)")
    parser.add_argument("--player", choices=("learned",), default=None,
                        help="measure bots/learned_bot.py against greedy and each style, instead of each style "
                        "against greedy")  # fmt: skip
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output (default table)")
    args = parser.parse_args()
    if args.pairs < 2 or args.first < 0:
        parser.error("--pairs must be 2 or more and --first 0 or more")
    if args.format == "table":
        print(f"{args.pairs} deal pairs from seed {args.first}")
        print("| rules | style | opponent | score rate (95%) | seconds |")
        print("| --- | --- | --- | --- | --- |")
    for rules in args.rules:
        for name, mine, opponent, theirs in cells(args.styles, args.player):
            started = time.perf_counter()
            rate, half = duel(rules, mine, args.pairs, args.first, theirs)
            seconds = time.perf_counter() - started
            if args.format == "json":
                row = {"rules": rules, "style": name, "opponent": opponent, "pairs": args.pairs, "first": args.first,
                       "rate": rate, "half_width": half, "seconds": round(seconds, 1)}  # fmt: skip
                print(json.dumps(row), flush=True)
            else:
                print(f"| {rules} | {name} | {opponent} | {100 * rate:.1f}% ± {100 * half:.1f} | {seconds:.0f} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
