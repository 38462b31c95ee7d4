"""Strength of the house bots against the opponent pool, measured with the referee's own tournament.

Run: ``nice -n 15 .venv/bin/python benchmarks/strength.py [--rules R ...] [--house search:100 greedy ...]
[--opponents aggressive stopper ...] [--pairs N] [--seed S] [-j J] [--out DIR] [--report]``. Each cell (a house bot
against one opponent under one preset) is one tournament of duplicate deal pairs (each deal played twice, the seats
swapped), run as::

    koikoi-referee tournament --bot "house=HOUSE" --bot "OPP=OPPONENT" --rules R --pairs N --seed S -j J \\
        --move-ms MOVE --no-html --out DIR/R-HOUSE-OPP

A house bot is ``random``, ``greedy``, ``learned`` (``bots/learned_bot.py``) or ``search:MS``
(``bots/search_bot.py --ms MS``, its extra options after another colon: ``search:100:--model greedy``); an
opponent is a style of ``bots/pool_bot.py`` or ``greedy``/``learned``/``random`` (default: ``greedy`` and the whole
pool). A preset is only a parameter: any name ``koikoi-referee rules`` knows.

The search bot's ``--ms`` counts its own CPU time, so the figures hold for an idle machine even on a busy one; the
tournament's clock is generous (``MOVE`` = the larger of 10 s and 20 times ``MS`` per decision, and the default
bank: a run under ``nice`` on a busy machine may get a small share of a core) so that this cap, not the clock, ends
each search. While a cell plays, the 1-minute load average is read every
15 s (mean and largest into ``load.json`` and the table). A cell whose folder holds a finished tournament is read,
not played again; an unfinished one is resumed. Prints the command, the machine, then one Markdown row per cell:
games, wins/draws/losses, the house bot's match score rate with its 95% interval, the Elo difference with its error,
the search's samples per decision (median of its ``--stats`` lines) and the load; then, per house bot and preset,
the lowest score rate over the pool.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path[0] = str(ROOT)  # benchmarks/referee.py would shadow the referee package
EXE = Path(sys.executable).parent / "koikoi-referee"
POOL = ("aggressive", "stopper", "brights", "ribbons", "denier", "holder", "sweeper", "reacher")
"""The styles of ``bots/pool_bot.py`` (``--style NAME``)."""
OPPONENTS = {"greedy": "bots/greedy_bot.py", "random": "bots/random_bot.py --seed 1", "learned": "bots/learned_bot.py",
             **{name: f"bots/pool_bot.py --style {name}" for name in POOL}}  # fmt: skip
STATS = re.compile(r"^search: (\d+) samples", re.MULTILINE)
HEADER = ("| rules | house bot | opponent | games | W-D-L | score rate (95%) | Elo | samples | load (mean, max) |\n"
          + "| --- " * 9 + "|")  # fmt: skip


def house_command(house: str) -> tuple[str, int]:
    """The bot command of a house bot spec and its search budget in ms (0 for the bots that do not search)."""
    if house == "random":
        return "bots/random_bot.py --seed 1", 0
    if house in ("greedy", "learned"):
        return f"bots/{house}_bot.py", 0
    name, _, rest = house.partition(":")
    ms, _, extra = rest.partition(":")
    if name != "search" or not ms.isdigit():
        raise SystemExit(f"strength: unknown house bot {house!r} (random, greedy, learned or search:MS[:OPTIONS])")
    return f"bots/search_bot.py --ms {ms} --stats {extra}".strip(), int(ms)


def move_ms(ms: int) -> int:
    """The tournament's time per decision for a search capped at ``ms``: generous, so that the cap binds."""
    return max(10000, 20 * ms)


def folder_name(rules: str, house: str, opponent: str) -> str:
    """The cell's folder under ``--out``."""
    return re.sub(r"[^A-Za-z0-9.=+-]+", "_", f"{rules}-{house}-{opponent}")


def command(rules: str, house: str, opponent: str, pairs: int, seed: int, jobs: int, folder: Path) -> list[str]:
    """The tournament command of one cell."""
    bot, ms = house_command(house)
    return [
        str(EXE), "tournament", "--bot", f"house={bot}", "--bot", f"{opponent}={OPPONENTS[opponent]}",
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


def result(folder: Path, partial: bool = False) -> dict[str, object] | None:
    """The house bot's standing in a finished tournament folder, or None; with ``partial``, also in an unfinished
    one (its standings computed from the results recorded so far, the pairs played in schedule order)."""
    path = folder / "standings.json"
    data = json.loads(path.read_text()) if path.exists() else None
    if (data is None or not data.get("complete")) and partial and (folder / "tournament.json").exists():
        data = recorded(folder)
    if data is None or not (data.get("complete") or partial):
        return None
    standing: dict[str, object] = next(s for s in data["standings"] if s["name"] == "house")
    return standing


def recorded(folder: Path) -> dict[str, Any] | None:
    """The standings (as ``standings.json`` has them) of the matches recorded so far in ``folder``."""
    from referee.tournament.report import to_json
    from referee.tournament.standings import compute
    from referee.tournament.store import Store

    store = Store.open_readonly(folder)
    st = compute(store.config, store.iter_records(), store.options.sprt)
    return to_json(st, {"complete": False}) if st.matches else None


def row(rules: str, house: str, opponent: str, me: dict[str, object], folder: Path) -> str:
    """The table row of a finished cell."""
    wdl = f"{me['wins']}-{me['draws']}-{me['losses']}"
    rate = f"{100 * float(me['score']):.1f}% [{100 * float(me['score_low']):.1f}, "  # type: ignore[arg-type]
    rate += f"{100 * float(me['score_high']):.1f}]"  # type: ignore[arg-type]
    elo = "n/a" if me["elo"] is None else f"{float(me['elo']):+.0f}"  # type: ignore[arg-type]
    elo += " (no error bar)" if me["elo_error"] is None else f" ± {float(me['elo_error']):.0f}"  # type: ignore[arg-type]
    cells = (rules, house, opponent, str(me["games"]), wdl, rate, elo, samples(folder), load(folder))
    return "| " + " | ".join(cells) + " |"


def machine() -> str:
    """One line about the machine: processor, cores, Python, engine build, load now."""
    cpu = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")
    if info.exists():
        names = [ln.split(":", 1)[1].strip() for ln in info.read_text().splitlines() if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    probe = "from referee.engine._build import engine_build; print(engine_build())"
    build = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python "
            f"{platform.python_version()}, engine {build or 'unknown'}, load {os.getloadavg()[0]:.1f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Play (or read) every cell and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", nargs="+", default=["koikoi-japan"], help="presets (default koikoi-japan)")
    parser.add_argument("--house", nargs="+", default=["search:100"],
                        help="house bots: random, greedy, learned, search:MS[:OPTIONS] (default search:100)")
    parser.add_argument("--opponents", nargs="+", default=["greedy", *POOL], choices=sorted(OPPONENTS),
                        help="opponents (default greedy and the whole pool)")
    parser.add_argument("--pairs", type=int, default=100, help="deal pairs per cell (2 games each; default 100)")
    parser.add_argument("--seed", type=int, default=1, help="tournament seed (default 1)")
    parser.add_argument("--out", type=Path, default=Path("tournament-strength"),
                        help="folder of the cells (default tournament-strength, ignored by git)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="matches in parallel (default 1)")
    parser.add_argument("--report", action="store_true", help="only print the rows of the cells already played")
    parser.add_argument("--partial", action="store_true",
                        help="with --report, also the rows of unfinished cells (the pairs recorded so far)")
    args = parser.parse_args(argv)
    for house in args.house:
        house_command(house)  # refuse a bad spec before anything plays
    print("$ " + shlex.join([Path(sys.executable).name, "benchmarks/strength.py", *sys.argv[1:]]))
    print(f"machine: {machine()}\n", flush=True)
    rows: list[str] = []
    worst: dict[tuple[str, str], tuple[float, str]] = {}
    for rules in args.rules:
        for house in args.house:
            for opponent in args.opponents:
                folder = args.out.resolve() / folder_name(rules, house, opponent)
                found = result(folder, args.report and args.partial)
                if found is None and not args.report:
                    cmd = command(rules, house, opponent, args.pairs, args.seed, args.jobs, folder)
                    print("$ " + shlex.join(cmd), file=sys.stderr, flush=True)
                    resume = ["--resume", str(folder)] if (folder / "tournament.json").exists() else []
                    play(cmd[: cmd.index("--bot")] + resume if resume else cmd, folder)
                    found = result(folder)
                if found is not None:
                    rows.append(row(rules, house, opponent, found, folder))
                    if opponent in POOL:
                        key = (rules, house)
                        worst[key] = min(worst.get(key, (2.0, "")), (float(found["score"]), opponent))  # type: ignore[arg-type]
    print(HEADER)
    print("\n".join(rows))
    for (rules, house), (rate, opponent) in worst.items():
        print(f"\nlowest against the pool: {house} under {rules}: {100 * rate:.1f}% ({opponent})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
