"""``check``: a compliance run of one bot (see :mod:`referee.compliance`); ``new-bot``: a starter kit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.commands import fail
from referee.commands.bot_options import MEMORY_HELP, PYTHON_HELP, SANDBOX_HELP, sandbox_options
from referee.seats.process import DEFAULT_MEMORY_MB


def check_cmd(
    bot: Annotated[str, typer.Argument(help="The bot: a command line, or a bot folder holding a bot.toml.")],
    rules: Annotated[str, typer.Option("--rules", "-r", help="A preset name or a rules file.")] = "guide",
    python: Annotated[str | None, typer.Option("--python", help=PYTHON_HELP)] = None,
    bot_memory_mb: Annotated[
        int, typer.Option("--bot-memory-mb", min=0, max=1 << 30, help=MEMORY_HELP)
    ] = DEFAULT_MEMORY_MB,
    startup_ms: Annotated[int, typer.Option("--startup-ms", min=1, help="Time for the handshake (ms).")] = 10000,
    sandbox_mode: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
    log_dir: Annotated[
        Path | None, typer.Option("--log-dir", help="Keep the bot's stderr here (default: a temporary folder).")
    ] = None,
) -> None:
    """Check that a bot handles every decision and event of koikoi/1, in seconds: scripted deals force a
    capture choice on a play and on a draw, the koi-koi/stop choice, a misdeal and redeal, a hand yaku, a round
    with no yaku to its last turn, new_match on a reused process, answers drawing on the time bank, and bye.

    Prints a checklist; exit 0 when every item passes, 1 when one fails (the first violation is quoted), 2 for
    bad input."""
    from referee.compliance import check
    from referee.engine import EngineError, load_rules
    from referee.seats import package
    from referee.seats.process import BotCommandError, check_command
    from referee.seats.settings import BotSettings

    try:
        chosen = load_rules(rules)
    except EngineError as exc:
        fail(str(exc))
    try:
        found = package.find(bot)
        if found is not None:
            package.build(found, None if log_dir is None else log_dir / "build.log", sandbox_mode)
        check_command(bot, python=python)
    except (BotCommandError, package.PackageError) as exc:
        fail(str(exc))
    sandbox, _ = sandbox_options(sandbox_mode, None)
    settings = BotSettings(startup_ms=startup_ms, memory_mb=bot_memory_mb, python=python)
    typer.echo(f"check {bot}  rules {chosen.name}")
    report = check(
        bot, chosen, limits=settings.limits(sandbox=sandbox), time_control=settings.time, log_dir=log_dir,
        on_item=lambda item: typer.echo(item.line()),
    )  # fmt: skip
    first = report.first_violation()
    failed = sum(i.status == "fail" for i in report.items)
    verdict = "passed" if first is None else f"{failed} item(s) failed; the first: {first.name}"
    typer.echo(f"{verdict} ({report.seconds:.1f} s; stderr logs in {report.log_dir})")
    raise typer.Exit(0 if first is None else 1)


def new_bot_cmd(
    lang: Annotated[str, typer.Argument(help="python, javascript, java, rust, cpp or go.")],
    folder: Annotated[Path, typer.Argument(help="The new bot's folder (must not exist, or be empty).")],
    name: Annotated[str | None, typer.Option("--name", help="The bot's name (default: the folder's).")] = None,
) -> None:
    """Write a starter bot: a bot folder with its bot.toml, typed messages, the request loop, stderr logging and
    a README; play it at once with koikoi-referee play FOLDER "$(koikoi-referee bots --path random)", or check it
    with koikoi-referee check FOLDER."""
    from referee.kits import KitError, write_kit

    try:
        written = write_kit(lang, folder, name)
    except KitError as exc:
        fail(str(exc))
    typer.echo(f"wrote {len(written)} files in {folder}; next: koikoi-referee check {folder}")


def register(app: typer.Typer) -> None:
    """Add ``check`` and ``new-bot`` to the app."""
    app.command("check")(check_cmd)
    app.command("new-bot")(new_bot_cmd)
