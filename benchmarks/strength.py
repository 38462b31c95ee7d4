"""Strength of the search bot, measured with the referee's own tournament (duplicate deal pairs, both seats).

Run: ``.venv/bin/python benchmarks/strength.py [--rules R ...] [--opponents greedy random] [--ms 100 1000]
[--pairs N] [--seed S] [--jobs J] [--out DIR]``. Each cell of the table is one tournament, run as::

    koikoi-referee tournament --bot "search=bots/search_bot.py --ms MS --stats" \\
        --bot "OPP=bots/OPP_bot.py" --rules R --pairs N --seed S -j J --move-ms MOVE --no-html --out DIR/R-OPP-MS

The search bot's ``--ms`` counts its own CPU time, so the figures do not depend much on what else the machine is
doing; the tournament's clock is generous (``MOVE`` = the larger of 2000 ms and 10 times ``MS`` per decision, and
the default bank), so that this cap, not the clock, ends each search; no ``nice``: a search at the lowest priority
on a busy machine would get so little CPU that the clock would end it (``--wall`` makes ``--ms`` count wall time).
While a cell plays, the machine's 1-minute load average is read every 15 s; the mean and the largest go to
``load.json`` in its folder and into the table. A cell whose folder already holds a finished tournament is read,
not played again, so ``--out`` keeps earlier runs and ``--report`` only prints the table of the folders found.
Prints one Markdown row per cell: games, wins/draws/losses, the search bot's match score rate with its 95%
interval, the Elo difference with its error, the search's samples per decision (median, from its ``--stats``
lines in the tournament's logs) and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "koikoi-referee"
OPPONENTS = {"greedy": "bots/greedy_bot.py", "random": "bots/random_bot.py --seed 1"}
STATS = re.compile(r"^search: (\d+) samples", re.MULTILINE)
HEADER = ("| rules | opponent | ms | games | W-D-L | score rate (95%) | Elo | samples | load (mean, max) |\n"
          + "| --- " * 9 + "|")  # fmt: skip


def move_ms(ms: int) -> int:
    """The tournament's time per decision for a search capped at ``ms``: generous, so that the cap binds."""
    return max(2000, 10 * ms)


def command(rules: str, opponent: str, ms: int, pairs: int, seed: int, jobs: int, folder: Path,
            wall: bool) -> list[str]:  # fmt: skip
    """The tournament command of one cell."""
    flag = " --wall" if wall else ""
    return [
        str(EXE), "tournament",
        "--bot", f"search=bots/search_bot.py --ms {ms}{flag} --stats", "--bot", f"{opponent}={OPPONENTS[opponent]}",
        "--rules", rules, "--pairs", str(pairs), "--seed", str(seed), "-j", str(jobs), "--move-ms", str(move_ms(ms)),
        "--no-html", "--out", str(folder),
    ]  # fmt: skip


def play(cmd: list[str], folder: Path) -> None:
    """Run one cell's tournament, reading the load average every 15 s into ``folder/load.json``."""
    loads = [os.getloadavg()[0]]
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL) as proc:
        while True:
            try:
                proc.wait(timeout=15)
                break
            except subprocess.TimeoutExpired:
                loads.append(os.getloadavg()[0])
    folder.mkdir(parents=True, exist_ok=True)
    old = json.loads((folder / "load.json").read_text()) if (folder / "load.json").exists() else []
    (folder / "load.json").write_text(json.dumps(old + loads))


def samples(folder: Path) -> str:
    """The median number of samples per searched decision, from the search bot's ``--stats`` lines in the logs."""
    found = sorted(int(m.group(1)) for log in folder.glob("logs/**/*") if log.is_file()
                   for m in STATS.finditer(log.read_text(errors="replace")))  # fmt: skip
    return str(found[len(found) // 2]) if found else "n/a"


def load(folder: Path) -> str:
    """The mean and largest load average read while the cell played."""
    path = folder / "load.json"
    if not path.exists():
        return "n/a"
    loads = json.loads(path.read_text())
    return f"{sum(loads) / len(loads):.1f}, {max(loads):.1f}"


def row(rules: str, opponent: str, ms: int, folder: Path) -> str | None:
    """The table row of a finished tournament folder, or None when it has no finished standings."""
    path = folder / "standings.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if not data.get("complete"):
        return None
    me = next(s for s in data["standings"] if s["name"] == "search")
    wdl = f"{me['wins']}-{me['draws']}-{me['losses']}"
    rate = f"{100 * me['score']:.1f}% [{100 * me['score_low']:.1f}, {100 * me['score_high']:.1f}]"
    elo = "n/a" if me["elo"] is None else f"{me['elo']:+.0f}"
    elo += " (no error bar)" if me["elo_error"] is None else f" ± {me['elo_error']:.0f}"
    cells = (rules, opponent, str(ms), str(me["games"]), wdl, rate, elo, samples(folder), load(folder))
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    """Play (or read) every cell and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", nargs="+", default=["koikoi-japan"], help="presets (default koikoi-japan)")
    parser.add_argument("--opponents", nargs="+", default=["greedy"], choices=sorted(OPPONENTS))
    parser.add_argument("--ms", nargs="+", type=int, default=[100], help="search --ms values (default 100)")
    parser.add_argument("--pairs", type=int, default=100, help="deal pairs per cell (2 games each; default 100)")
    parser.add_argument("--seed", type=int, default=1, help="tournament seed (default 1)")
    parser.add_argument("--out", type=Path, default=Path("tournament-strength"),
                        help="folder of the cells (default tournament-strength, ignored by git)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="matches in parallel (default 1)")
    parser.add_argument("--wall", action="store_true", help="count the search's --ms in wall time, not CPU time")
    parser.add_argument("--report", action="store_true", help="only print the rows of the cells already played")
    args = parser.parse_args(argv)
    rows = []
    for rules in args.rules:
        for opponent in args.opponents:
            for ms in args.ms:
                folder = args.out.resolve() / f"{rules}-{opponent}-{ms}"
                found = row(rules, opponent, ms, folder)
                if found is None and not args.report:
                    cmd = command(rules, opponent, ms, args.pairs, args.seed, args.jobs, folder, args.wall)
                    print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
                    resume = ["--resume", str(folder)] if (folder / "tournament.json").exists() else []
                    run = cmd[: cmd.index("--bot")] + resume if resume else cmd
                    play(run, folder)
                    found = row(rules, opponent, ms, folder)
                if found is not None:
                    rows.append(found)
    print(HEADER)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
