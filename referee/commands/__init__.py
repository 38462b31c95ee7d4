"""CLI commands, one module each; :func:`register_all` puts them on the app."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    typer.echo(f"koikoi-referee: error: {message}", err=True)
    sys.exit(code)


def register_all(app: typer.Typer) -> None:
    """Register every command module's commands on ``app``."""
    from referee.commands import engine_cmds

    engine_cmds.register(app)
    from referee.commands import schema_cmd

    schema_cmd.register(app)
    from referee.commands import tournament

    tournament.register(app)
    from referee.commands import play, replay

    play.register(app)
    replay.register(app)
    from referee.commands import bots_cmd, check_cmd, deals

    deals.register(app)
    bots_cmd.register(app)
    check_cmd.register(app)
