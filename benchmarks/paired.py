"""Two runs on the same deals, compared deal pair by deal pair: is A better than B, and by how much?

Duplicate deals make a paired comparison possible: each deal pair was played by both runs, so the difference of the
two runs' results on that pair carries none of the deal's luck, only what the players did. Over ``n`` deal pairs
the mean difference has a much narrower interval than either run's own score rate.

A run is one of:

- a tournament folder (a cell of ``benchmarks/strength.py``, or any ``koikoi-referee tournament --out DIR``): the
  games of the bot named ``--bot`` (default ``house``), a deal pair being the two games of one deal against one
  opponent (the deal's seed in ``results.jsonl``);
- ``FILE.json`` or ``FILE.json:PLAYER``: what ``benchmarks/information.py --json FILE`` wrote, one player's games
  (``PLAYER`` may be left out when the file holds one player), a deal pair being a deal seed.

Prints, for the deal pairs both runs played: the games, each run's score rate, the paired difference A − B in
points with its 95% interval (normal approximation over the pairs), and how many pairs ended differently::

    .venv/bin/python benchmarks/paired.py tournament-strength/nintendo-search:100-greedy old/nintendo-search:100-greedy
    .venv/bin/python benchmarks/paired.py runs.json:solver runs.json:known --format json

Exit status: 0 when a comparison was printed, 2 when a run cannot be read or the runs share no deal pair.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

Pairs = dict[str, list[float]]
"""A run's results: per deal pair (a key naming the opponent and the deal), the bot's score in each game (1, 1/2,
0), in a fixed order (the bot's seat)."""


class RunError(Exception):
    """A run that cannot be read; the message says why, in one line."""


def tournament_pairs(folder: Path, bot: str) -> Pairs:
    """The deal pairs of ``bot`` in the tournament folder ``folder`` (its ``results.jsonl``)."""
    path = folder / "results.jsonl"
    if not path.is_file():
        raise RunError(f"{folder}: no results.jsonl (not a tournament folder)")
    games: dict[str, dict[int, float]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            seats = list(record["seats"])
            result = record["result"]
            seed, winner = str(result["seed"]), result["winner"]
        except (ValueError, KeyError, TypeError) as error:
            raise RunError(f"{path}:{number}: not a match result ({error})") from None
        if bot not in seats or len(seats) != 2:
            continue
        seat = seats.index(bot)
        other = seats[1 - seat]
        score = 0.5 if winner is None else float(winner == seat + 1)
        games.setdefault(f"{other}/{seed}", {})[seat] = score
    if not games:
        names = "none" if not path.stat().st_size else "other bots"
        raise RunError(f"{folder}: no game of a bot named {bot!r} ({names} in results.jsonl; see --bot)")
    return {key: [seats[s] for s in sorted(seats)] for key, seats in games.items()}


def information_pairs(spec: str) -> Pairs:
    """The deal pairs of one player in a file of ``benchmarks/information.py --json`` (``FILE.json[:PLAYER]``)."""
    name, _, player = spec.partition(".json:")
    path = Path(name + ".json" if player else spec)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        players: dict[str, Any] = data["players"]
        first = int(data["first"])
    except OSError as error:
        raise RunError(f"{path}: cannot read it ({error.strerror})") from None
    except (ValueError, KeyError, TypeError) as error:
        raise RunError(f"{path}: not a file of information.py --json ({error})") from None
    if not player:
        if len(players) != 1:
            raise RunError(f"{path}: holds {len(players)} players ({', '.join(players)}): name one, {path}:PLAYER")
        player = next(iter(players))
    if player not in players:
        raise RunError(f"{path}: no player {player!r} (it holds {', '.join(players)})")
    opponent = str(data.get("opponent", ""))
    return {f"{opponent}/{first + k}": [float(x) for x in pair] for k, pair in enumerate(players[player])}


def read_run(spec: str, bot: str) -> Pairs:
    """A run given on the command line: a tournament folder, or ``FILE.json[:PLAYER]``."""
    if Path(spec).is_dir():
        return tournament_pairs(Path(spec), bot)
    if spec.endswith(".json") or ".json:" in spec:
        return information_pairs(spec)
    raise RunError(f"{spec}: neither a tournament folder nor a .json file of information.py")


def compare(a: Pairs, b: Pairs) -> dict[str, Any]:
    """The comparison of two runs over the deal pairs both played (with the same number of games in each)."""
    common = sorted(k for k in a.keys() & b.keys() if len(a[k]) == len(b[k]))
    if not common:
        raise RunError("the two runs share no deal pair (other deals, other opponents, or another --bot)")
    n = len(common)
    games = sum(len(a[k]) for k in common)
    diffs = [(sum(a[k]) - sum(b[k])) / len(a[k]) for k in common]
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else 0.0
    return {
        "pairs": n,
        "games": games,
        "a": sum(sum(a[k]) for k in common) / games,
        "b": sum(sum(b[k]) for k in common) / games,
        "difference": mean,
        "interval": 1.96 * sd / math.sqrt(n),
        "differing_pairs": sum(1 for k in common if a[k] != b[k]),
        "only_a": len(a) - n,
        "only_b": len(b) - n,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compare two runs on the same deals, deal pair by deal pair.")
    parser.add_argument("a", metavar="A", help="a tournament folder, or FILE.json[:PLAYER] of information.py --json")
    parser.add_argument("b", metavar="B", help="the run to compare A with (the same kinds)")
    parser.add_argument("--bot", default="house", help="the bot compared, in tournament folders (default house)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output (default text)")
    args = parser.parse_args(argv)
    try:
        result = compare(read_run(args.a, args.bot), read_run(args.b, args.bot))
    except RunError as error:
        print(f"paired.py: error: {error}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(result))
        return 0
    skipped = ""
    if result["only_a"] or result["only_b"]:
        skipped = f"; left out: {result['only_a']} pairs only in A, {result['only_b']} only in B"
    print(f"{result['pairs']} deal pairs ({result['games']} games): A {100 * result['a']:.1f}%, "
          f"B {100 * result['b']:.1f}%, A - B {100 * result['difference']:+.1f} ± {100 * result['interval']:.1f} "
          f"points (95%); {result['differing_pairs']} of them ended differently{skipped}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
