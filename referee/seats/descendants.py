"""Find a bot's descendants through ``/proc`` (Linux), also those that left its process group.

A bot's process group is killed as a whole, but a child may call ``setsid()`` (or ``setpgid()``) to leave the
group, and an orphan re-parents away from the bot. Three nets catch such a process:

* its parent chain leads to the bot or to a descendant seen before (:func:`descendants`; the bot process layer
  looks while the bot runs, so a chain seen once is remembered after it breaks);
* it carries the bot's token in its environment (:func:`with_token`; inherited unless the process clears it);
* with :func:`adopt_orphans` (``PR_SET_CHILD_SUBREAPER``), an orphan re-parents to the referee instead of
  ``init``, so it stays a child of the referee until it is found and reaped.

Each process is named by its pid and its start time, so a recycled pid is never mistaken for it. Elsewhere than
on Linux every function here finds nothing and the process group is the only net.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

TOKEN_VAR = "KOIKOI_REFEREE_BOT"
"""The environment variable carrying a bot's token (a random hex string, different for every bot process)."""

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProcInfo:
    """One line of ``/proc/PID/stat``: what the search needs."""

    pid: int
    ppid: int
    pgid: int
    state: str  # R, S, D, Z, T, ...
    start: int  # start time in clock ticks since boot: with the pid, the identity of a process


def snapshot() -> dict[int, ProcInfo]:
    """Every process visible in ``/proc`` (empty where there is no ``/proc``)."""
    out: dict[int, ProcInfo] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if entry.isdigit():
            info = read_stat(int(entry))
            if info is not None:
                out[info.pid] = info
    return out


def read_stat(pid: int) -> ProcInfo | None:
    """The stat line of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
        fields = raw[raw.rindex(b")") + 2 :].split()
        return ProcInfo(pid, int(fields[1]), int(fields[2]), fields[0].decode(), int(fields[19]))
    except (OSError, ValueError, IndexError):
        return None


def descendants(roots: Iterable[int], snap: dict[int, ProcInfo]) -> set[int]:
    """The pids in ``snap`` whose parent chain leads to one of ``roots`` (the roots excluded)."""
    children: dict[int, list[int]] = {}
    for info in snap.values():
        children.setdefault(info.ppid, []).append(info.pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found - set(roots)


def with_token(token: str, snap: dict[int, ProcInfo]) -> set[int]:
    """The pids in ``snap`` whose initial environment holds ``TOKEN_VAR=token`` (readable ones only)."""
    needle = f"{TOKEN_VAR}={token}\0".encode()
    found: set[int] = set()
    for pid in snap:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as f:
            if needle in f.read():
                found.add(pid)
    return found


@cache
def _prctl_fn() -> Callable[..., int] | None:
    """libc's ``prctl`` (looked up once, in the referee: never first between fork and exec)."""
    if os.uname().sysname != "Linux":
        return None
    try:
        import ctypes

        fn: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return fn
    except (OSError, AttributeError):
        return None


def _prctl(option: int, arg: int) -> bool:
    fn = _prctl_fn()
    return fn is not None and int(fn(option, arg, 0, 0, 0)) == 0


_adopting = False


def adopt_orphans() -> bool:
    """Make this process a child subreaper: orphans of its descendants re-parent here, not to ``init``.

    Meant for the referee's own process (the CLI): zombies of adopted orphans that no bot claims stay until
    the referee exits. True when it is in effect (Linux only)."""
    global _adopting
    if not _adopting:
        _adopting = _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    return _adopting


def die_with_parent() -> Callable[[], None]:
    """A function for a child between fork and exec: SIGKILL it when the referee's thread that started it
    ends (``PR_SET_PDEATHSIG``), so even a referee killed with SIGKILL leaves no bot (its descendants may
    stay). Call this in the referee; it prepares everything the child needs."""
    fn = _prctl_fn()
    sig = int(signal.SIGKILL)

    def _apply() -> None:
        if fn is not None:
            fn(_PR_SET_PDEATHSIG, sig, 0, 0, 0)

    return _apply


def reap(pids: Iterable[int]) -> None:
    """Collect the exit status of the given children of this process that have ended (never blocks)."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
