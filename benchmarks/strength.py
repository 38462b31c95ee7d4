"""Strength of the search bot, measured with the referee's own tournament (duplicate deal pairs, both seats).

Run: ``.venv/bin/python benchmarks/strength.py [--rules R ...] [--opponents greedy random] [--ms 100 1000]
[--pairs N] [--seed S] [--out DIR]``. Each cell of the table is one tournament, run as::

    nice -n 19 koikoi-referee tournament --bot "search=bots/search_bot.py --ms MS --cpu" --bot "OPP=bots/OPP_bot.py" \\
        --rules R --pairs N --seed S -j 1 --no-html --out DIR/R-OPP-MS

(``-j 1``: one match at a time, and ``--cpu``: the search bot's ``--ms`` counts its own CPU time, so the figures
do not depend on what else the machine is doing; ``--wall`` caps it by the wall clock instead). A cell whose folder
already holds a finished tournament is read, not played again, so ``--out`` keeps earlier runs and ``--report``
only prints the table of the folders found. Prints one Markdown row per cell: games, wins/draws/losses, the
search bot's match score rate with its 95% interval, and the Elo difference with its error.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "koikoi-referee"
OPPONENTS = {"greedy": "bots/greedy_bot.py", "random": "bots/random_bot.py --seed 1"}
HEADER = "| rules | opponent | ms | games | W-D-L | score rate (95%) | Elo |\n" + "| --- " * 7 + "|"


def command(rules: str, opponent: str, ms: int, pairs: int, seed: int, folder: Path, wall: bool) -> list[str]:
    """The tournament command of one cell."""
    cpu = "" if wall else " --cpu"
    return [
        "nice", "-n", "19", str(EXE), "tournament",
        "--bot", f"search=bots/search_bot.py --ms {ms}{cpu}", "--bot", f"{opponent}={OPPONENTS[opponent]}",
        "--rules", rules, "--pairs", str(pairs), "--seed", str(seed), "-j", "1", "--no-html", "--out", str(folder),
    ]  # fmt: skip


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
    return f"| {rules} | {opponent} | {ms} | {me['games']} | {wdl} | {rate} | {elo} |"


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
    parser.add_argument("--wall", action="store_true", help="cap the search by wall time, not CPU time (--cpu)")
    parser.add_argument("--report", action="store_true", help="only print the rows of the cells already played")
    args = parser.parse_args(argv)
    rows = []
    for rules in args.rules:
        for opponent in args.opponents:
            for ms in args.ms:
                folder = args.out.resolve() / f"{rules}-{opponent}-{ms}"
                found = row(rules, opponent, ms, folder)
                if found is None and not args.report:
                    cmd = command(rules, opponent, ms, args.pairs, args.seed, folder, args.wall)
                    print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
                    resume = ["--resume", str(folder)] if (folder / "tournament.json").exists() else []
                    run = cmd[: cmd.index("--bot")] + resume if resume else cmd
                    subprocess.run(run, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
                    found = row(rules, opponent, ms, folder)
                if found is not None:
                    rows.append(found)
    print(HEADER)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
