"""The bot sandbox options shared by ``play`` and ``tournament``: ``--sandbox`` and ``--bot-env``."""

from __future__ import annotations

from typing import Any

import typer

from referee.commands import fail

SANDBOX_HELP = (
    "auto (default): each bot in a bwrap sandbox when bwrap works here, else unsandboxed with a warning; "
    "bwrap: the sandbox or an error; none: no sandbox."
)
BOT_ENV_HELP = "NAME=VALUE for the bots' environment (repeat); bots get only PATH, LANG, LC_*, TERM, TZ and these."


def sandbox_options(mode: str, bot_env: list[str] | None) -> dict[str, Any]:
    """``PlaySetup`` keywords (``sandbox``, ``bot_env``) for ``--sandbox`` and ``--bot-env``: a one-line error
    (exit 2) when the sandbox asked for cannot work, a one-line warning when ``auto`` runs the bots unsandboxed."""
    from referee.seats.sandbox import SandboxError, parse_env, resolve

    try:
        env = parse_env(bot_env or ())
        chosen = resolve(mode, lambda w: typer.echo(f"koikoi-referee: warning: {w}", err=True))
    except SandboxError as exc:
        fail(str(exc))
    return {"sandbox": chosen, "bot_env": env}
