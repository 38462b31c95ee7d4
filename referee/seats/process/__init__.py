"""A bot as an OS process: the one place that starts, limits, watches, kills and reaps bot processes.

* :mod:`~referee.seats.process.botprocess`: :class:`BotProcess`, one bot program (start, freeze, close);
* :mod:`~referee.seats.process.pipe`: its stdio (line framing with a cap, the read deadline, the stderr log);
* :mod:`~referee.seats.process.family`: its processes through ``/proc`` (descendants, the subreaper and its
  reaper, the live registry and :func:`kill_all_now`);
* the limits: :mod:`~referee.seats.process.plan` (the command line, :class:`Limits`, the exec wrappers and the
  sandbox's arguments), :mod:`~referee.seats.process.cgroups` (a cgroup per bot, the freezer),
  :mod:`~referee.seats.process.seccomp` (the syscall filter) and :mod:`~referee.seats.process.memory` (the
  memory watch).

The names other modules use are re-exported here. Nothing here knows the protocol; :mod:`referee.seats` turns
these errors into failures of a seat.
"""

from __future__ import annotations

from referee.seats.process import cgroups, seccomp
from referee.seats.process.botprocess import BotProcess, ProcessOptions
from referee.seats.process.family import REAP_S, WATCH_S, adopt_orphans, kill_all_now
from referee.seats.process.pipe import (
    EXIT_GRACE_S,
    MAX_LINE,
    MAX_PENDING_WRITE,
    STDERR_CAP,
    BotClosedError,
    LineTooLongError,
)
from referee.seats.process.plan import (
    DEFAULT_CPUS,
    DEFAULT_MEMORY_MB,
    DEFAULT_PROCESSES,
    DEFAULT_TMP_MB,
    BotCommandError,
    Limits,
    ProcessError,
    absolute_command,
    bot_environment,
    check_command,
    command_argv,
    expected_isolation,
    isolation_warnings,
    readable,
    resolve_paths,
)
from referee.seats.sandbox import SandboxError

__all__ = [
    "DEFAULT_CPUS", "DEFAULT_MEMORY_MB", "DEFAULT_PROCESSES", "DEFAULT_TMP_MB", "EXIT_GRACE_S", "MAX_LINE",
    "MAX_PENDING_WRITE", "REAP_S", "STDERR_CAP", "WATCH_S", "BotClosedError", "BotCommandError", "BotProcess",
    "Limits", "LineTooLongError", "ProcessError", "ProcessOptions", "SandboxError", "absolute_command",
    "adopt_orphans", "bot_environment", "cgroups", "check_command", "command_argv", "expected_isolation",
    "isolation_warnings", "kill_all_now", "readable", "resolve_paths", "seccomp",
]  # fmt: skip
