"""The bot options shared by ``play`` and ``tournament``: the sandbox, environment, limits, readable files and
interpreter of the bots."""

from __future__ import annotations

from typing import Any

import typer

from referee.commands import fail

SANDBOX_HELP = (
    "auto (default): each bot in a bwrap sandbox when bwrap works here, else unsandboxed with a warning; "
    "bwrap: the sandbox or an error; none: no sandbox."
)
BOT_ENV_HELP = "NAME=VALUE for the bots' environment (repeat); bots get only PATH, LANG, LC_*, TERM, TZ and these."
MEMORY_HELP = (
    "Address-space limit per bot process (MiB; 0: none). A JVM reserves its heap up front: give a Java bot "
    "more (e.g. 8192) or cap its heap (-Xmx)."
)
CPU_HELP = "CPU-time limit per bot process (seconds; 0: none)."
PROCESSES_HELP = "Processes and threads of one sandboxed bot (0: no limit)."
FILE_HELP = "A host file or folder the sandboxed bots may read (repeat), e.g. a model or opening book."
PYTHON_HELP = (
    "The interpreter of .py bots (a path or a name on PATH; default: the referee's own Python, so a bot "
    "imports what the referee's environment has)."
)


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
