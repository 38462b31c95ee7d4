"""``play``: one match (or several) between two bot programs, with a readable or JSON summary.

The command parses its options, calls :func:`referee.series.play` and prints what it reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from referee.commands import fail
from referee.commands.bot_options import (
    BOT_ENV_HELP,
    CPU_HELP,
    CPUS_HELP,
    FILE_HELP,
    MEMORY_HELP,
    PONDER_HELP,
    PROCESSES_HELP,
    PYTHON_HELP,
    REQUIRE_CGROUPS_HELP,
    SANDBOX_HELP,
    SETTING_FLAGS,
    sandbox_options,
)
from referee.errors import Interrupted
from referee.seats.process import DEFAULT_CPUS, DEFAULT_MEMORY_MB, DEFAULT_PROCESSES
from referee.seats.settings import BotSettings
from referee.series import Plan, Played, PlayError, PlaySetup, play, summary_lines
from referee.text import plural

PLAY_FLAGS = {**SETTING_FLAGS, "replay": "--replay", "log_dir": "--log-dir", "bot_cwd": "--bot-cwd"}
"""The flag of each setting a ``play`` error may name."""


def play_cmd(
    bot1: Annotated[
        str,
        typer.Argument(
            help="Seat 1: a bot command line, a bot folder holding a bot.toml, or human[:NAME] to play it "
            "yourself in the terminal (the time control applies to bots only). A .py file runs with the referee's "
            "Python (or --python), a .js file with node; an argument holding a / that names a file or folder is "
            "made readable to the bot; the house bots: koikoi-referee bots."
        ),
    ],
    bot2: Annotated[str, typer.Argument(help="Seat 2: a bot command line, or human[:NAME].")],
    rules: Annotated[str, typer.Option("--rules", "-r", help="A preset name or a rules file.")] = "guide",
    rounds: Annotated[
        int | None, typer.Option("--rounds", min=1, max=1000, help="Override the rules' rounds.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, max=2**64 - 1, help="Seed of the shuffle (default: a random one).")
    ] = None,
    deals: Annotated[
        Path | None,
        typer.Option(
            "--deals",
            help="JSON lines of explicit deals, used in order before the shuffle (with --games, each game "
            "starts fresh bot processes: no process sees a deal twice).",
        ),
    ] = None,
    first_dealer: Annotated[
        int | None,
        typer.Option("--first-dealer", min=1, max=2, help="Seat that deals first (default: the rules)."),
    ] = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Write the replay here (numbered with --games).")
    ] = None,
    games: Annotated[
        int,
        typer.Option(
            "--games",
            min=1,
            max=100_000,
            help="Play N matches; game k uses seed+k-1 (against a human without --seed: a random seed each).",
        ),
    ] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON result per match instead.")] = False,
    bot_memory_mb: Annotated[
        int, typer.Option("--bot-memory-mb", min=0, max=1 << 30, help=MEMORY_HELP)
    ] = DEFAULT_MEMORY_MB,
    bot_cpu_s: Annotated[int, typer.Option("--bot-cpu-s", min=0, max=10**9, help=CPU_HELP)] = 0,
    bot_processes: Annotated[
        int, typer.Option("--bot-processes", min=0, max=1 << 20, help=PROCESSES_HELP)
    ] = DEFAULT_PROCESSES,
    bot_cpus: Annotated[float, typer.Option("--bot-cpus", min=0, max=1024, help=CPUS_HELP)] = DEFAULT_CPUS,
    ponder: Annotated[bool, typer.Option("--ponder", help=PONDER_HELP)] = False,
    require_cgroups: Annotated[bool, typer.Option("--require-cgroups", help=REQUIRE_CGROUPS_HELP)] = False,
    bot_file: Annotated[list[Path] | None, typer.Option("--bot-file", help=FILE_HELP)] = None,
    python: Annotated[str | None, typer.Option("--python", help=PYTHON_HELP)] = None,
    python_1: Annotated[
        str | None, typer.Option("--python-1", help="The interpreter of seat 1's .py bot (over --python).")
    ] = None,
    python_2: Annotated[
        str | None, typer.Option("--python-2", help="The interpreter of seat 2's .py bot (over --python).")
    ] = None,
    bot_cwd: Annotated[
        Path | None,
        typer.Option(
            "--bot-cwd",
            help="Working directory of the bots, read-only in the sandbox (default: a fresh empty one per bot); "
            "the replay and logs may not be written inside it.",
        ),
    ] = None,
    move_ms: Annotated[int, typer.Option("--move-ms", min=1, help="Time per decision (ms).")] = 1000,
    bank_ms: Annotated[int, typer.Option("--bank-ms", min=0, help="Time bank per match (ms).")] = 30000,
    startup_ms: Annotated[
        int, typer.Option("--startup-ms", min=1, help="Time for the handshake (ms).")
    ] = 10000,
    log_dir: Annotated[
        Path | None,
        typer.Option(
            "--log-dir",
            help="Keep each bot's stderr here, one file per match (capped at 1 MiB a bot; default: REPLAY-logs/ "
            "beside the replay, else a temporary folder whose empty logs are removed at the end; the paths are "
            "printed after each match).",
        ),
    ] = None,
    sandbox_mode: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
    bot_env: Annotated[list[str] | None, typer.Option("--bot-env", help=BOT_ENV_HELP)] = None,
    key: Annotated[
        Path | None,
        typer.Option("--key", help="Sign the replays with this key file (default: your key, made on first use)."),
    ] = None,
) -> None:
    """Play a match between two bot programs, or against one yourself (human); every move is checked.

    Exit 0 when it reached a result."""
    sandbox, env = sandbox_options(sandbox_mode, bot_env, require_cgroups=require_cgroups)
    bots = BotSettings(
        startup_ms=startup_ms, move_ms=move_ms, bank_ms=bank_ms, memory_mb=bot_memory_mb, cpu_s=bot_cpu_s,
        processes=bot_processes, cpus=bot_cpus, env=env, files=_files(bot_file), python=python,
    )  # fmt: skip
    setup = PlaySetup(
        seats=(bot1, bot2), rules=rules, rounds=rounds, seed=seed, deals=deals, first_dealer=first_dealer,
        replay=replay, games=games, bots=bots, seat_bots=(BotSettings(python=python_1), BotSettings(python=python_2)),
        bot_cwd=bot_cwd, log_dir=log_dir, key=key, sandbox=sandbox, ponder=ponder, require_cgroups=require_cgroups,
    )  # fmt: skip
    tally = [0, 0, 0]
    forfeits = [0, 0]
    from referee.seats.human import is_human  # (the terminal seat's module, only when a match is played)

    person = next((i for i, c in enumerate(setup.seats) if is_human(c)), None)  # sees no more than its seat

    def started(plan: Plan) -> None:
        if not as_json:
            shown = "" if plan.human else f"seed {plan.seeds[0]}  "  # a person must not see the seed before playing
            typer.echo(f"{shown}rules {plan.rules.name}  {plural(plan.rules.rounds, 'round')}  {plural(games, 'game')}")

    def report(played: Played) -> None:
        result = played.result
        tally[2 if result.winner is None else result.winner] += 1
        if result.forfeit is not None:
            forfeits[result.forfeit.seat] += 1
        if as_json:
            typer.echo(json.dumps(played.to_json()))
        else:
            typer.echo("\n".join(summary_lines(played, person)))

    try:
        play(setup, on_start=started, on_result=report)
    except (PlayError, Interrupted) as exc:
        fail(exc.naming(PLAY_FLAGS), exc.code)
    if games > 1 and not as_json:
        lost = "".join(f", seat {s + 1} forfeited {n}" for s, n in enumerate(forfeits) if n)
        typer.echo(f"games: seat 1 won {tally[0]}, seat 2 won {tally[1]}, draws {tally[2]}{lost}")


def _files(paths: list[Path] | None) -> tuple[str, ...]:
    """``--bot-file`` paths, absolute; each must exist."""
    out = []
    for p in paths or ():
        if not p.exists():
            fail(f"--bot-file {p}: no such file or folder")
        out.append(str(p.absolute()))
    return tuple(out)


def register(app: typer.Typer) -> None:
    """Add ``play`` to the app."""
    app.command("play")(play_cmd)
