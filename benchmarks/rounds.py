"""Where a bot's score comes from, round by round: rounds won, points a won round, and its koi-koi calls.

A match's score rate says who is stronger, not why. This reads the replays of one or more tournaments (or replay
files) and prints, for each bot, what its rounds came to: the share of rounds it won, lost and that nobody won,
the points of a round it won and of a round it lost, how often it called koi-koi and how its calls ended (won, lost,
nobody), and how the rounds ended in which its opponent called koi-koi (under rules where the caller's opponent's
stop is doubled, those are the rounds it can win big)::

    .venv/bin/python benchmarks/rounds.py tournament-strength/nintendo-search_100-reacher
    .venv/bin/python benchmarks/rounds.py DIR1 DIR2 --bot house --format json

Bots are named as the header names them (a tournament's names), or else as they named themselves in their
hello. A row per bot and path; ``--bot`` keeps the rows of those names. Replays are read with the referee's own
reader, not re-simulated (``koikoi-referee replay verify`` checks them): a replay cut short counts the rounds it
holds; an unreadable one is named on standard error and skipped. Exit 2 when a path holds no replay.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.errors import RefereeError  # noqa: E402
from referee.replay.html import find_replays  # noqa: E402
from referee.replay.reader import EventLine, Header, Hello, read_replay  # noqa: E402


class Tally:
    """One bot's rounds over the replays of one path. ``n`` counts rounds, won, lost, nobody; calls, calls_won,
    calls_lost, calls_nobody (its koi-koi calls and how those rounds ended); their_calls, their_calls_won (won by
    this bot), their_calls_lost, their_calls_nobody. ``points`` adds the points of the same rounds (won: its own,
    lost: its opponent's). A plain class, not a dataclass: the script is also loaded by path, as a module that
    ``sys.modules`` does not hold."""

    def __init__(self) -> None:
        self.matches = 0
        self.n: Counter[str] = Counter()
        self.points: Counter[str] = Counter()

    def add(self, winner: int | None, me: int, points: int, calls: tuple[int, int]) -> None:
        """One round: ``winner`` and ``me`` are seats 0/1 (``winner`` None: nobody won), ``calls`` the koi-koi
        calls of each seat."""
        how = "nobody" if winner is None else ("won" if winner == me else "lost")
        self.n["rounds"] += 1
        self.n[how] += 1
        self.points[how] += points if winner is not None else 0
        for who, called in (("calls", calls[me]), ("their_calls", calls[1 - me])):
            if called:
                self.n[who] += 1
                self.n[f"{who}_{how}"] += 1
                self.points[f"{who}_{how}"] += points if winner is not None else 0

    def row(self) -> dict[str, float | int]:
        """The figures of the row (shares of rounds and of calls, mean points)."""
        n, p = self.n, self.points

        def share(part: str, whole: str) -> float:
            return round(n[part] / n[whole], 4) if n[whole] else 0.0

        def mean(key: str) -> float:
            return round(p[key] / n[key], 2) if n[key] else 0.0

        return {
            "matches": self.matches, "rounds": n["rounds"], "won": share("won", "rounds"),
            "lost": share("lost", "rounds"), "nobody": share("nobody", "rounds"), "points_won": mean("won"),
            "points_lost": mean("lost"), "calls": share("calls", "rounds"), "calls_won": share("calls_won", "calls"),
            "calls_lost": share("calls_lost", "calls"), "points_calls_won": mean("calls_won"),
            "points_calls_lost": mean("calls_lost"), "their_calls": share("their_calls", "rounds"),
            "their_calls_won": share("their_calls_won", "their_calls"),
            "points_their_calls_won": mean("their_calls_won"),
        }  # fmt: skip


def names_of(header: Header, hellos: list[Hello]) -> tuple[str, str]:
    """The seats' names: the header's (a tournament's), else the names the bots gave in their hello, else their
    commands."""
    given = header.extra.get("names")
    if isinstance(given, list) and len(given) == 2 and all(isinstance(x, str) for x in given):
        return given[0], given[1]
    said = {h.seat: h.name for h in hellos}
    return said.get(0, header.bots[0].command), said.get(1, header.bots[1].command)


def round_end(data: dict[str, Any], n: int) -> tuple[int | None, int, tuple[int, int]]:
    """The winner (seat 0/1 or None), points and koi-koi calls of a ``round_end`` event at line ``n`` (the reader
    checks the shape of a line, not the fields of an event: a ValueError names a field that is not as written)."""
    winner, points, calls = data.get("winner"), data.get("points"), data.get("koikoi_calls")
    if winner not in (None, 1, 2) or type(points) is not int or points < 0:
        raise ValueError(f"line {n}: a round_end event without a winner (1, 2 or null) and its points")
    if not isinstance(calls, list) or len(calls) != 2 or not all(type(c) is int and c >= 0 for c in calls):
        raise ValueError(f"line {n}: a round_end event without the koi-koi calls of both seats")
    return None if winner is None else winner - 1, points, (calls[0], calls[1])


def read(path: Path, tallies: dict[str, Tally]) -> None:
    """Add the rounds of one replay file to the bots' tallies (raises the reader's one-line errors, and a
    ValueError for a round_end event without its fields; nothing is added then)."""
    lines = read_replay(path)
    header = lines[0][1]
    assert isinstance(header, Header)  # the reader checks that the first line is the header
    names = names_of(header, [x for _, x in lines if isinstance(x, Hello)])
    ends = [round_end(x.data, n) for n, x in lines if isinstance(x, EventLine) and x.event == "round_end"]
    for seat in (0, 1):
        tally = tallies.setdefault(names[seat], Tally())
        tally.matches += 1
        for winner, points, calls in ends:
            tally.add(winner, seat, points, calls)


def gather(target: Path) -> tuple[dict[str, Tally], list[str]]:
    """The tallies of the replays at ``target`` (a file or a folder) and the one-line errors of those skipped."""
    files = [target] if target.is_file() else find_replays(target)
    tallies: dict[str, Tally] = {}
    errors: list[str] = []
    for path in files:
        try:
            read(path, tallies)
        except (RefereeError, OSError, ValueError) as exc:
            errors.append(f"{path}: {exc}")
    return tallies, errors


COLUMNS = (
    ("won", "won", "%"), ("lost", "lost", "%"), ("nobody", "nobody", "%"), ("points_won", "points a won round", ""),
    ("points_lost", "points a lost round", ""), ("calls", "koi-koi calls a round", "%"),
    ("calls_won", "calls won", "%"), ("calls_lost", "calls lost", "%"), ("points_calls_won", "points a won call", ""),
    ("their_calls_won", "won after their call", "%"), ("points_their_calls_won", "points then", ""),
)  # fmt: skip
"""The table's columns after the path, bot, matches and rounds: key, heading, ``%`` for a share."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Each bot's rounds in replays: rounds won, points a round, koi-koi "
                                     "calls and how they ended.")  # fmt: skip
    parser.add_argument("paths", nargs="+", type=Path, help="tournament folders or replay files")
    parser.add_argument("--bot", nargs="+", default=None, help="only the rows of these bot names")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output (default table)")
    args = parser.parse_args(argv)
    if args.format == "table":
        print("| path | bot | matches | rounds | " + " | ".join(h for _, h, _ in COLUMNS) + " |")
        print("| --- " * (4 + len(COLUMNS)) + "|")
    status = 0
    for target in args.paths:
        if not target.exists():
            print(f"rounds.py: {target}: no such file or folder", file=sys.stderr)
            status = 2
            continue
        tallies, errors = gather(target)
        for error in errors:
            print(f"rounds.py: skipped {error}", file=sys.stderr)
        if not tallies:
            print(f"rounds.py: {target}: no readable replay", file=sys.stderr)
            status = 2
            continue
        for name in sorted(tallies):
            if args.bot is not None and name not in args.bot:
                continue
            row = tallies[name].row()
            if args.format == "json":
                print(json.dumps({"path": str(target), "bot": name, **row}), flush=True)
                continue
            cells = [f"{100 * row[k]:.1f}%" if unit == "%" else f"{row[k]:.2f}" for k, _, unit in COLUMNS]
            print(f"| {target} | {name} | {row['matches']} | {row['rounds']} | " + " | ".join(cells) + " |")
    return status


if __name__ == "__main__":
    sys.exit(main())
