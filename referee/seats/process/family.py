"""A bot's family of processes: finding them through ``/proc`` (Linux), reaping adopted orphans, killing them all.

A bot's process group is killed as a whole, but a child may call ``setsid()`` (or ``setpgid()``) to leave the
group, and an orphan re-parents away from the bot. Three nets catch such a process:

* its parent chain leads to the bot or to a descendant seen before (:func:`descendants`; :class:`Family` looks
  while the bot runs, so a chain seen once is remembered after it breaks);
* it carries the bot's token in its environment (:func:`with_token`; inherited unless the process clears it);
* with :func:`adopt_orphans` (``PR_SET_CHILD_SUBREAPER``), an orphan re-parents to the referee instead of
  ``init``, so it stays a child of the referee until it is found and reaped (:func:`start_reaper`: on SIGCHLD and
  every :data:`REAP_S` seconds).

Each process is named by its pid and its start time, so a recycled pid is never mistaken for it. Elsewhere than
on Linux every function here finds nothing and the process group is the only net. The live registry
(:func:`register`) holds every bot process started and not yet closed, for :func:`kill_all_now` at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

from referee.seats.process import cgroups

TOKEN_VAR = "KOIKOI_REFEREE_BOT"
"""The environment variable carrying a bot's token (a random hex string, different for every bot process)."""

WATCH_S = 0.2
"""How often a running bot's descendants are looked up (so a child that detaches later is still known)."""
REAP_S = 0.5
"""How often adopted orphans are reaped besides SIGCHLD (when the referee is a subreaper)."""

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
_adopter = 0  # the process that set it (a forked child has not)


def adopting() -> bool:
    """True when :func:`adopt_orphans` is in effect in this process."""
    return _adopting and _adopter == os.getpid()


def adopt_orphans() -> bool:
    """Make this process a child subreaper: orphans of its descendants re-parent here, not to ``init``.

    Meant for the referee's own process (the CLI) and its tournament workers (the attribute is not inherited
    through ``fork``); :func:`reap_orphans` collects the adopted ones that end. True when it is in effect
    (Linux only)."""
    global _adopting, _adopter
    if not adopting():
        _adopting = _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        _adopter = os.getpid()
    return _adopting


def reap(pids: Iterable[int]) -> None:
    """Collect the exit status of the given children of this process that have ended (never blocks)."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


# -- reaping adopted orphans ---------------------------------------------------------------------------------
#
# The referee's own children (bot processes, tournament workers) are waited for by their owners (asyncio's child
# watcher, multiprocessing); stealing their exit status would break them. An adopted orphan has no owner, so it
# stays a zombie until someone reaps it. :func:`reap_orphans` reaps the zombie children that are not owned
# (:func:`own`) and were already zombies at the previous sweep, or at once when nothing is being started
# (:func:`spawning`): a child is owned within the same loop iteration that started it.

_owned: set[int] = set()
_spawning = 0
_seen_zombies: set[int] = set()


def own(pid: int) -> None:
    """Mark ``pid`` as a child whose exit status its owner collects (never reaped by :func:`reap_orphans`)."""
    _owned.add(pid)


def disown(pid: int) -> None:
    """Forget :func:`own` (the owner has collected the exit status)."""
    _owned.discard(pid)


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """Wrap the start of an owned child: until it is owned, fresh zombies wait one more sweep."""
    global _spawning
    _spawning += 1
    try:
        yield
    finally:
        _spawning -= 1


def children() -> list[int] | None:
    """The pids of this process's children (every thread's), or None where ``/proc`` cannot list them."""
    me = os.getpid()
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{me}/task")
        for tid in tasks:
            with open(f"/proc/{me}/task/{tid}/children", "rb") as f:
                out += [int(p) for p in f.read().split()]
    except FileNotFoundError:  # a thread that just ended, or no CONFIG_PROC_CHILDREN
        if not out and not os.path.exists(f"/proc/{me}/task/{me}/children"):
            return None
    except (OSError, ValueError):
        return None
    return out


def tree(root: int) -> list[int]:
    """``root`` and every descendant still in its process tree, through ``/proc/PID/task/TID/children`` (cheap:
    no scan of ``/proc``). In a bwrap sandbox this is every process of the bot: orphans re-parent to its init."""
    out: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                    todo += [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def resident_bytes(pids: Iterable[int]) -> int:
    """The resident memory of ``pids`` together (``/proc/PID/statm``; shared pages count once per process)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/statm", "rb") as f:
            total += int(f.read().split()[1])
    return total * _PAGE


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def zombie_children() -> set[int]:
    """The children of this process that have ended and are not yet reaped."""
    kids = children()
    if kids is None:
        me = os.getpid()
        return {i.pid for i in snapshot().values() if i.ppid == me and i.state == "Z"}
    return {pid for pid in kids if (i := read_stat(pid)) is not None and i.state == "Z"}


def reap_orphans() -> int:
    """Reap the zombie children nobody owns (see above); the number reaped. Never blocks."""
    global _seen_zombies
    zombies = zombie_children() - _owned
    ready = zombies if _spawning == 0 else zombies & _seen_zombies
    reap(ready)
    _seen_zombies = zombies - ready
    return len(ready)


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to the process group ``pgid`` (nothing if it is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def sandbox_own(outer: int) -> list[int]:
    """bwrap's own processes once the bot runs under the bwrap process ``outer``: the monitor (``outer``) and the
    sandbox's pid 1 (its only child, which has the bot's first process as its child); empty otherwise."""

    def kids(pid: int) -> list[int]:
        try:
            return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except (OSError, ValueError):
            return []

    def is_bwrap(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap"
        except OSError:
            return False

    inner = kids(outer)
    if len(inner) != 1 or not is_bwrap(outer) or not is_bwrap(inner[0]) or not kids(inner[0]):
        return []
    return [outer, inner[0]]


class Family:
    """Every descendant of one unsandboxed bot seen so far (pid -> start time), found by parent chain, process
    group and the bot's ``token``; :meth:`kill` kills them all."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.members: dict[int, int] = {}  # every descendant seen: pid -> start time

    def track(self, pid: int, snap: dict[int, ProcInfo], *, all_tokens: bool = False) -> None:
        """Add to the family of the bot ``pid``: its group, the descendants of the bot and of every live member
        seen before, and the processes carrying the bot's token (adopted orphans only, unless ``all_tokens``)."""
        live = [p for p, start in list(self.members.items()) if p in snap and snap[p].start == start]
        found = descendants([pid, *live], snap)
        found.update(i.pid for i in snap.values() if i.pgid == pid)
        me = os.getpid()
        pool = snap if all_tokens else {i.pid: i for i in snap.values() if i.ppid in (me, 1)}
        found |= with_token(self.token, pool)
        found.discard(pid)
        found.discard(me)
        for p in found:
            if p in snap:
                self.members.setdefault(p, snap[p].start)

    def kill(self, pid: int, rounds: int = 10) -> None:
        """SIGKILL the process group of the bot ``pid`` and every member found, until none is left (or ``rounds``
        tries); reap those that became children of the referee. Blocking (``/proc`` scans): off the loop, or at
        exit."""
        me = os.getpid()
        snap: dict[int, ProcInfo] = {}
        for k in range(rounds):
            signal_group(pid, signal.SIGKILL)
            snap = snapshot()
            self.track(pid, snap, all_tokens=True)
            live = [
                p for p, start in list(self.members.items())
                if (i := snap.get(p)) is not None and i.start == start and i.state != "Z"
            ]  # fmt: skip
            if not live:
                break
            for p in live:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, signal.SIGKILL)
            time.sleep(0.002 * (k + 1))
        reap(p for p, start in self.members.items() if (i := snap.get(p)) is not None and i.ppid == me)


# -- the shared /proc snapshot and the reaper, per event loop --------------------------------------------------

_snap_cache: tuple[float, dict[int, ProcInfo]] = (0.0, {})
_snap_pending: dict[asyncio.AbstractEventLoop, asyncio.Future[dict[int, ProcInfo]]] = {}


async def recent_snapshot(max_age_s: float) -> dict[int, ProcInfo]:
    """A snapshot of ``/proc`` at most ``max_age_s`` old, shared by every bot watched on this loop, taken in a
    worker thread (a scan costs tens of milliseconds on a busy machine: never on the loop that times bots)."""
    global _snap_cache
    if time.monotonic() - _snap_cache[0] <= max_age_s:
        return _snap_cache[1]
    loop = asyncio.get_running_loop()
    pending = _snap_pending.get(loop)
    if pending is None:
        pending = _snap_pending[loop] = loop.run_in_executor(None, snapshot)
        try:
            snap = await pending
        finally:
            _snap_pending.pop(loop, None)
        _snap_cache = (time.monotonic(), snap)
        return snap
    return await asyncio.shield(pending)


_reaping: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def start_reaper(loop: asyncio.AbstractEventLoop) -> None:
    """Reap adopted orphans on ``loop`` (on SIGCHLD where the loop runs in the main thread, and every
    :data:`REAP_S`) as long as it runs; only where this process adopts orphans."""
    if loop in _reaping or not adopting():
        return
    _reaping.add(loop)

    def sweep() -> None:
        with contextlib.suppress(OSError):
            reap_orphans()

    def tick() -> None:
        if loop.is_closed():
            _reaping.discard(loop)
            return
        sweep()
        loop.call_later(REAP_S, tick)

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGCHLD, sweep)
    loop.call_later(REAP_S, tick)


# -- the live registry ---------------------------------------------------------------------------------------


class Live(Protocol):
    """A bot process started and not yet closed, as the registry sees it."""

    def kill_now(self) -> None:
        """SIGKILL the bot's whole family at once and remove its cgroup (blocking; a last resort)."""


_LIVE: dict[int, Live] = {}


def register(pgid: int, bot: Live) -> None:
    """Remember ``bot``, started as the process group ``pgid``, until :func:`unregister`."""
    _LIVE[pgid] = bot


def unregister(pgid: int) -> None:
    """Forget the bot of process group ``pgid`` (it is closed)."""
    _LIVE.pop(pgid, None)


def kill_all_now() -> None:
    """SIGKILL every bot process group started here and not yet closed, with every descendant found (a last
    resort at exit)."""
    for pgid, bot in list(_LIVE.items()):
        bot.kill_now()
        _LIVE.pop(pgid, None)
    cgroups.remove_run()


atexit.register(kill_all_now)
