"""The bot options shared by ``play`` and ``tournament``: the sandbox, environment, limits, readable files and
interpreter of the bots."""

from __future__ import annotations

import typer

from referee.commands import fail

SANDBOX_HELP = (
    "auto (default): each bot in a bwrap sandbox when bwrap works here, else unsandboxed with a warning; "
    "bwrap: the sandbox or an error; none: no sandbox."
)
BOT_ENV_HELP = "NAME=VALUE for the bots' environment (repeat); bots get only PATH, LANG, LC_*, TERM, TZ and these."
MEMORY_HELP = (
    "Memory of each bot as a whole (MiB; 0: none): its cgroup's limit (anonymous memory, page cache, tmpfs and "
    "memfd pages), or where cgroups do not work an address-space limit per process."
)
CPUS_HELP = "CPU quota of each bot (CPUs, e.g. 1 or 0.5; 0: none), enforced by its cgroup. [default: 1]"
PONDER_HELP = (
    "Let bots run while it is not their turn (default: a bot is frozen from its answer to its next request, so "
    "it cannot think, or take CPU, on its opponent's time)."
)
REQUIRE_CGROUPS_HELP = "Fail (exit 2) where cgroups cannot bound the bots, instead of falling back to rlimits."
CPU_HELP = "CPU-time limit per bot process (seconds; 0: none)."
PROCESSES_HELP = "Processes and threads of one sandboxed bot (0: no limit)."
FILE_HELP = "A host file or folder the sandboxed bots may read (repeat), e.g. a model or opening book."
SETTING_FLAGS = {
    "startup_ms": "--startup-ms", "move_ms": "--move-ms", "bank_ms": "--bank-ms", "memory_mb": "--bot-memory-mb",
    "cpu_s": "--bot-cpu-s", "processes": "--bot-processes", "cpus": "--bot-cpus", "env": "--bot-env",
    "files": "--bot-file", "python": "--python", "sandbox": "--sandbox", "ponder": "--ponder",
    "require_cgroups": "--require-cgroups", "key": "--key",
}  # fmt: skip
"""The flag of each bot setting (:class:`~referee.seats.settings.BotSettings`) and sandbox option, for the
errors that name a setting (:meth:`~referee.errors.RefereeError.naming`)."""
PYTHON_HELP = (
    "The interpreter of .py bots (a path or a name on PATH; default: the referee's own Python, so a bot "
    "imports what the referee's environment has)."
)


def sandbox_options(
    mode: str, bot_env: list[str] | None, *, require_cgroups: bool = False
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The sandbox chosen for ``--sandbox`` and the environment pairs of ``--bot-env``: a one-line error (exit 2)
    when the sandbox asked for cannot work (or cgroups, where ``--require-cgroups``), a one-line warning for
    each defence the bots go without (no sandbox with ``auto``, no cgroups, no syscall filter)."""
    from referee.seats.process import isolation_warnings
    from referee.seats.sandbox import SandboxError, parse_env, resolve

    def warn(line: str) -> None:
        typer.echo(f"koikoi-referee: warning: {line}", err=True)

    try:
        env = parse_env(bot_env or ())
        chosen = resolve(mode, warn)
        for line in isolation_warnings(chosen == "bwrap", require_cgroups=require_cgroups):
            warn(line)
    except SandboxError as exc:
        fail(exc.naming(SETTING_FLAGS))
    return chosen, env
