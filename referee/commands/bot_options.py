"""The bot sandbox options shared by ``play`` and ``tournament``: ``--sandbox`` and ``--bot-env``."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import typer

from referee.commands import fail

if TYPE_CHECKING:
    from referee.tournament import TournamentConfig

SANDBOX_HELP = (
    "auto (default): each bot in a bwrap sandbox when bwrap works here, else unsandboxed with a warning; "
    "bwrap: the sandbox or an error; none: no sandbox."
)
BOT_ENV_HELP = "NAME=VALUE for the bots' environment (repeat); bots get only PATH, LANG, LC_*, TERM, TZ and these."


def sandbox_options(mode: str, bot_env: list[str] | None) -> dict[str, Any]:
    """``Limits`` keywords for ``--sandbox`` and ``--bot-env``: a one-line error (exit 2) when the sandbox
    asked for cannot work, a one-line warning when ``auto`` runs the bots unsandboxed."""
    from referee.seats.sandbox import SandboxError, choose, parse_env

    try:
        choice = choose(mode)
        env = parse_env(bot_env or ())
    except SandboxError as exc:
        fail(str(exc))
    if choice.warning is not None:
        typer.echo(f"koikoi-referee: warning: {choice.warning}", err=True)
    return {"sandbox": choice.mode, "env": env}


def with_sandbox(config: TournamentConfig, mode: str | None, bot_env: list[str] | None) -> TournamentConfig:
    """``config`` with ``--sandbox`` (over the file's ``sandbox``) and ``--bot-env`` (added to its ``[bot_env]``)."""
    from referee.seats.sandbox import MODES, SandboxError, parse_env

    if mode is not None and mode not in MODES:
        fail(f"--sandbox {mode!r}: choose auto, bwrap or none")
    try:
        env = parse_env(bot_env or ())
    except SandboxError as exc:
        fail(str(exc))
    return dataclasses.replace(config, sandbox=mode or config.sandbox, bot_env=(*config.bot_env, *env))
