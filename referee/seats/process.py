"""A bot as an OS process: the one place that starts, limits, watches, kills and reaps bot processes.

:class:`BotProcess` starts a command line (``shlex`` rules; a bare ``.py`` path runs with this Python, a ``.js``
path with ``node``; see :mod:`referee.seats.launch`), by default inside the bwrap sandbox of
:mod:`referee.seats.sandbox`, writes lines to its stdin, reads capped lines from its stdout, copies its stderr
into a capped log file, and on :meth:`BotProcess.close` kills it. The rest of the referee only starts a bot,
talks to it and closes it.

* Sandboxed, the bot and everything it starts live in a PID namespace that dies with the bwrap process: closing
  kills that process group, and nothing can escape.
* Unsandboxed, the bot runs in a process group of its own and in a fresh empty working directory (removed at
  close); closing kills the group and every descendant that left it, found through ``/proc`` (see
  :mod:`referee.seats.descendants`; the scans run in a worker thread, off the event loop that times the bots).
* Where the referee is a child subreaper (:func:`~referee.seats.descendants.adopt_orphans`), the orphans that
  re-parent to it are reaped on SIGCHLD and every :data:`REAP_S` seconds.

Limits come from :class:`Limits` through exec wrappers (no ``preexec_fn``). Every line is logged at debug level
on the ``referee.seats.process`` logger with a direction marker (``>>`` to the bot, ``<<`` from it). Nothing
here knows the protocol; :mod:`referee.seats` turns these errors into failures of a seat.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import secrets
import shutil
import signal
import subprocess
import time
import weakref
from pathlib import Path
from typing import IO, Any, TypedDict

from referee.seats import cgroups
from referee.seats import descendants as desc
from referee.seats.descendants import ProcInfo, descendants, reap, snapshot, with_token
from referee.seats.launch import (
    DEFAULT_MEMORY_MB,
    DEFAULT_PROCESSES,
    DEFAULT_TMP_MB,
    BotCommandError,
    Launch,
    Limits,
    ProcessError,
    bot_environment,
    check_command,
    command_argv,
    expected_isolation,
    plan,
    resolve_paths,
)
from referee.seats.sandbox import SandboxError

__all__ = [
    "DEFAULT_MEMORY_MB", "DEFAULT_PROCESSES", "DEFAULT_TMP_MB", "EXIT_GRACE_S", "MAX_LINE", "MAX_PENDING_WRITE",
    "REAP_S", "STDERR_CAP", "WATCH_S", "BotClosedError", "BotCommandError", "BotProcess", "Limits",
    "LineTooLongError", "ProcessError", "SandboxError", "bot_environment", "check_command", "command_argv",
    "kill_all_now", "resolve_paths",
]  # fmt: skip

log = logging.getLogger("referee.seats.process")

MAX_LINE = 1 << 20
"""Default cap on one line from a bot (bytes, newline excluded)."""
STDERR_CAP = 1 << 20
"""Default cap on a bot's stderr log file (bytes); beyond it stderr is drained and dropped."""
STDERR_DRAIN_PAUSE_S = 0.01
"""Past the stderr cap, the pause after each chunk (at most 64 KiB) read and dropped: about 6 MB/s at most."""
MAX_PENDING_WRITE = 16 << 20
"""Bytes waiting to be written to a bot that does not read its input before the bot counts as stuck."""
WATCH_S = 0.2
"""How often a running bot's descendants are looked up (so a child that detaches later is still known)."""
MEMORY_WATCH_S = 0.05
"""How often the resident memory of a bot's processes together is checked against its memory limit (one timer
per event loop checks every bot)."""
REAP_S = 0.5
"""How often adopted orphans are reaped besides SIGCHLD (when the referee is a subreaper)."""
EXIT_GRACE_S = 0.2
"""After the bot's process exits, how long its last line may take to arrive before the bot counts as crashed
(its stdout may be held open by a child)."""


class BotClosedError(ProcessError):
    """The bot exited or closed its stdout (or its stdin)."""


class LineTooLongError(ProcessError):
    """The bot wrote a line longer than the cap."""


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The protocol of the bot's process (its stdin and stderr pipes; stdout is read through ``stdout_pipe``, a
    pipe of its own: see :meth:`BotProcess.start`) that ends the bot's stdout soon after the bot exits, even when a
    child of the bot still holds the pipe open (reads need no race against the exit)."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop, stdout_pipe: asyncio.ReadTransport) -> None:
        super().__init__(limit=limit, loop=loop)
        self.stdout_cut = False  # stdout was closed by the referee: the bot exited, something held it open
        self.stdout_pipe = stdout_pipe
        self._exit_loop = loop
        self._subprocess: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._subprocess = transport

    def process_exited(self) -> None:
        super().process_exited()
        transport = self._subprocess
        if isinstance(transport, asyncio.SubprocessTransport):
            desc.disown(transport.get_pid())  # its exit status is collected
        # The bot's last line may still be on the way; after a grace period a stdout still open (held by a child
        # of the bot) is closed here, so that a pending read ends instead of waiting for its timeout.
        self._exit_loop.call_later(EXIT_GRACE_S, self._cut_stdout)

    def _cut_stdout(self) -> None:
        if not self.stdout_pipe.is_closing():
            self.stdout_cut = True
            self.stdout_pipe.close()


_LIVE: dict[int, BotProcess] = {}


def kill_all_now() -> None:
    """SIGKILL every bot process group started here and not yet closed, with every descendant found (a last
    resort at exit)."""
    for pgid, bot in list(_LIVE.items()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        if bot.cgroup is not None:
            with contextlib.suppress(OSError):
                bot.cgroup.remove(wait_s=0.2)
        bot.kill_family()
        _LIVE.pop(pgid, None)
    cgroups.remove_run()


atexit.register(kill_all_now)

_snap_cache: tuple[float, dict[int, ProcInfo]] = (0.0, {})
_snap_pending: dict[asyncio.AbstractEventLoop, asyncio.Future[dict[int, ProcInfo]]] = {}


async def _recent_snapshot(max_age_s: float) -> dict[int, ProcInfo]:
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


def _start_reaper(loop: asyncio.AbstractEventLoop) -> None:
    """Reap adopted orphans on ``loop`` (on SIGCHLD where the loop runs in the main thread, and every
    :data:`REAP_S`) as long as it runs; only where this process adopts orphans."""
    if loop in _reaping or not desc.adopting():
        return
    _reaping.add(loop)

    def sweep() -> None:
        with contextlib.suppress(OSError):
            desc.reap_orphans()

    def tick() -> None:
        if loop.is_closed():
            _reaping.discard(loop)
            return
        sweep()
        loop.call_later(REAP_S, tick)

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGCHLD, sweep)
    loop.call_later(REAP_S, tick)


class _Deadline:
    """The timeout of one awaited read at a time (:meth:`start`, then :meth:`stop`), with one timer re-armed
    lazily: a read arms the timer only when none is armed or the armed one would fire after its deadline; a timer
    that fires while a later deadline is pending re-arms itself for it. Reads that answer in microseconds against
    deadlines of seconds (every decision) then schedule and cancel no timer at all."""

    __slots__ = ("_at", "_cancelling", "_expired", "_loop", "_task", "_timer")

    def __init__(self) -> None:
        self._at: float | None = None  # the pending read's deadline (loop time); None: no read pending
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._expired = False
        self._cancelling = 0  # the task's pending cancellations when the read began

    def start(self, timeout_s: float) -> None:
        """A read that must end within ``timeout_s`` begins in the current task (then :meth:`timed_out` or
        :meth:`stop`)."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        at = loop.time() + timeout_s
        if self._timer is None or self._loop is not loop or self._timer.when() > at:
            self._arm(loop, at)
        self._at, self._task, self._expired = at, task, False
        self._cancelling = task.cancelling()

    def timed_out(self) -> bool:
        """Whether the :class:`asyncio.CancelledError` the read got is this deadline's (then it is taken back),
        not a cancellation from elsewhere."""
        task = self._task
        return self._expired and task is not None and task.uncancel() <= self._cancelling

    def stop(self) -> None:
        """The read ended."""
        self._at = self._task = None

    def _arm(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._loop = loop
        self._timer = loop.call_at(at, self._fire)

    def _fire(self) -> None:
        fired, self._timer = self._timer, None
        at, task, loop = self._at, self._task, self._loop
        if at is None or task is None or loop is None or fired is None:
            return  # no read pending: the next one arms a timer
        if at > fired.when():
            self._arm(loop, at)  # a later read's deadline
            return
        self._expired = True
        task.cancel()

    def cancel(self) -> None:
        """Drop the armed timer (the process is closed)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


_memory_watched: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[BotProcess]] = weakref.WeakKeyDictionary()


def _watch_memory(loop: asyncio.AbstractEventLoop, bot: BotProcess) -> None:
    """Check ``bot``'s memory every :data:`MEMORY_WATCH_S` on ``loop``: one timer for every bot of the loop,
    checked inline (no thread hop per bot and tick)."""
    bots = _memory_watched.get(loop)
    if bots is None:
        bots = _memory_watched[loop] = set()
        loop.call_later(MEMORY_WATCH_S, _memory_tick, loop)
    bots.add(bot)


def _unwatch_memory(bot: BotProcess) -> None:
    for bots in list(_memory_watched.values()):
        bots.discard(bot)


def _memory_tick(loop: asyncio.AbstractEventLoop) -> None:
    bots = _memory_watched.get(loop, set())
    for bot in list(bots):
        if not bot._check_memory(loop):
            bots.discard(bot)
    if bots and not loop.is_closed():
        loop.call_later(MEMORY_WATCH_S, _memory_tick, loop)
    else:
        _memory_watched.pop(loop, None)


class ProcessOptions(TypedDict, total=False):
    """The keyword options of :class:`BotProcess` (and of the seat that owns one)."""

    label: str
    stderr_path: Path | None
    max_line: int
    stderr_cap: int
    limits: Limits | None


class BotProcess:
    """One bot program running as a child process: sandboxed (bwrap) or in its own process group."""

    def __init__(
        self,
        command: str,
        *,
        label: str = "bot",
        stderr_path: Path | None = None,
        max_line: int = MAX_LINE,
        stderr_cap: int = STDERR_CAP,
        limits: Limits | None = None,
    ) -> None:
        self.command = command
        self.label = label
        self.stderr_path = stderr_path
        self.max_line = max_line
        self.stderr_cap = stderr_cap
        self.limits = limits or Limits()
        self._proc: asyncio.subprocess.Process | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdout: asyncio.StreamReader | None = None
        self._stdin: asyncio.StreamWriter | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._kill_task: asyncio.Future[None] | None = None  # killing an unsandboxed bot's family, off the loop
        self.killed_for: str | None = None  # why the referee killed the bot (its memory), if it did
        self._peak_rss = 0  # the most resident memory (bytes) its processes held together, as sampled
        self._debug = log.isEnabledFor(logging.DEBUG)
        self._token = secrets.token_hex(12)
        self._family: dict[int, int] = {}  # every descendant seen: pid -> start time
        self._launch: Launch | None = None
        self._protocol: _Protocol | None = None
        self._deadline = _Deadline()  # the timeout of reads
        self.cgroup: cgroups.BotCgroup | None = None  # the bot's control group, once started (where cgroups work)
        self._stopped: list[int] = []  # without a cgroup: the processes the SIGSTOP freezer stopped
        self._release_tries = 3  # bwrap's own processes leave the frozen group at one of the first freezes
        self.frozen = False

    @property
    def token(self) -> str:
        """The value of ``KOIKOI_REFEREE_BOT`` in an unsandboxed bot's environment (it marks its descendants)."""
        return self._token

    @property
    def sandbox(self) -> str | None:
        """``"bwrap"`` or ``"none"``: the sandbox this bot runs in (or will run in; None if it cannot start)."""
        if self._launch is not None:
            return self._launch.mode
        try:
            return self.limits.mode()
        except SandboxError:
            return None

    @property
    def isolation(self) -> dict[str, str]:
        """How the bot is held once started, as the replay header records it: ``limits`` (``cgroup-v2``,
        ``cgroup-v1``: the whole bot's memory, processes and CPU share; ``rlimit``: per-process limits and the
        referee's memory check; ``none``), ``freezer`` (``cgroup.freeze``, ``freezer.state``, ``sigstop``, or
        ``off`` when the bot may ponder) and ``filter`` (``seccomp`` or ``off``)."""
        mode = self.sandbox
        if mode is None:
            return {}
        launch, group = self._launch, self.cgroup
        if launch is None:  # not started yet: what it will get
            return expected_isolation(mode, self.limits.ponder)
        limits = group.support.mode if group is not None else launch.limits
        freezer = "off" if self.limits.ponder else group.support.freezer if group is not None else "sigstop"
        return {"limits": limits, "freezer": freezer, "filter": "seccomp" if launch.filtered else "off"}

    @property
    def cwd(self) -> Path | None:
        """The bot's working directory once started, as the bot sees it."""
        if self._launch is not None:
            return self._launch.bot_cwd
        return self.limits.cwd

    @property
    def pid(self) -> int | None:
        """The process id (and process group id) once started: the bwrap process in the sandbox."""
        return None if self._proc is None else self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has exited, else None."""
        return None if self._proc is None else self._proc.returncode

    async def start(self) -> None:
        """Start the process. :class:`BotCommandError` if it cannot be started; :class:`SandboxError` if the
        ``bwrap`` sandbox was asked for and cannot work here."""
        self.cgroup = self._make_cgroup()
        try:
            launch = plan(
                self.command, self.limits, self._token, None if self.cgroup is None else self.cgroup.procs_files
            )
        except BaseException:
            self._remove_cgroup()
            raise
        self._launch = launch
        stderr: int = asyncio.subprocess.PIPE if self.stderr_path is not None else asyncio.subprocess.DEVNULL
        loop = asyncio.get_running_loop()
        _start_reaper(loop)
        # stdout is a pipe of our own, read by a stream connected to it directly: a line reaches the waiting read
        # in one pass of the event loop, where the subprocess transport's pipes take two.
        stdout = asyncio.StreamReader(limit=self.max_line, loop=loop)
        stdout_pipe: asyncio.ReadTransport | None = None
        write_end = -1
        try:
            read_end, write_end = os.pipe()
            stdout_pipe, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(stdout, loop=loop),
                open(read_end, "rb", buffering=0),  # noqa: SIM115 - the pipe transport closes it
            )
            pipe = stdout_pipe
            with desc.spawning():
                transport, protocol = await loop.subprocess_exec(
                    lambda: _Protocol(self.max_line, loop, pipe),
                    *launch.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=write_end,
                    stderr=stderr,
                    start_new_session=True,
                    cwd=launch.cwd,
                    env=launch.env,
                    pass_fds=launch.fds,
                )
                desc.own(transport.get_pid())
                if transport.get_returncode() is not None:
                    desc.disown(transport.get_pid())
        except BaseException as exc:
            if stdout_pipe is not None:
                stdout_pipe.close()
            self._remove_tmpdir()
            self._remove_cgroup()
            if isinstance(exc, OSError | ValueError | RuntimeError | subprocess.SubprocessError):
                raise BotCommandError(f"cannot start {self.command!r}: {exc}") from None
            raise
        finally:
            launch.close_fds()
            if write_end >= 0:
                os.close(write_end)  # the bot holds it now
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        self._proc, self._transport, self._protocol = proc, transport, protocol
        _LIVE[proc.pid] = self
        if launch.mode == "none":
            self._watch_task = asyncio.ensure_future(self._watch())
        if self.limits.memory_bytes is not None:
            _watch_memory(loop, self)
        assert proc.stdin is not None
        self._stdout, self._stdin = stdout, proc.stdin
        if self.stderr_path is not None and proc.stderr is not None:
            self._stderr_task = asyncio.ensure_future(self._copy_stderr(proc.stderr, self.stderr_path))
        log.debug("%s: started pid %d (sandbox %s): %s", self.label, proc.pid, launch.mode, self.command)

    def _make_cgroup(self) -> cgroups.BotCgroup | None:
        """The bot's control group, or None where cgroups cannot be used (the rlimits then apply);
        :class:`BotCommandError` where they are required and cannot be made."""
        limits = self.limits
        why = cgroups.reason()
        if why is None:
            try:
                quota = cgroups.Quota(limits.memory_bytes, limits.processes, limits.cpus)
                return cgroups.BotCgroup.create(quota)
            except (OSError, cgroups.CgroupUnavailable) as exc:
                why = f"cannot make the bot's cgroup: {exc}"
        if limits.require_cgroups:
            raise BotCommandError(f"cgroups are required and unavailable: {why}")
        return None

    def _remove_cgroup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()

    @property
    def peak_memory(self) -> int:
        """The most memory the bot held: its cgroup's peak charge, else the most resident memory its processes
        held together as sampled by the memory watch (bytes; 0 when not measured)."""
        if self.cgroup is not None:
            return self.cgroup.peak_memory()
        return self._peak_rss

    def freeze(self) -> None:
        """Stop every process of the bot until :meth:`thaw` (its cgroup's freezer; without a cgroup, SIGSTOP to
        every process of its tree, read again until it no longer grows). Idempotent; a no-op for a bot that may
        ponder or is not running."""
        if self.frozen or self.limits.ponder or self._proc is None or self._proc.returncode is not None:
            return
        self.frozen = True
        if self.cgroup is not None:
            if not self.cgroup.released and self._release_tries > 0:
                self._release_tries -= 1
                self.cgroup.release(self._sandbox_own())
            self.cgroup.freeze()
            return
        pid = self._proc.pid
        self._stopped = cgroups.stop_all(lambda: desc.tree(pid))

    def _sandbox_own(self) -> list[int]:
        """bwrap's own processes once the bot runs: the monitor (the process the referee started) and the
        sandbox's pid 1 (its only child, which has the bot's first process as its child); empty otherwise."""
        if self._proc is None or self._launch is None or self._launch.mode != "bwrap":
            return []
        outer = self._proc.pid

        def children(pid: int) -> list[int]:
            try:
                return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
            except (OSError, ValueError):
                return []

        def is_bwrap(pid: int) -> bool:
            try:
                return Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap"
            except OSError:
                return False

        inner = children(outer)
        if len(inner) != 1 or not is_bwrap(outer) or not is_bwrap(inner[0]) or not children(inner[0]):
            return []
        return [outer, inner[0]]

    def thaw(self) -> None:
        """Let a frozen bot run again (idempotent)."""
        if not self.frozen:
            return
        self.frozen = False
        if self.cgroup is not None:
            self.cgroup.thaw()
            return
        cgroups.continue_all(self._stopped)
        self._stopped = []

    def _check_memory(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Kill the bot if it went over its memory limit: where its cgroup bounds it, once the kernel killed one
        of its processes for it (the whole bot forfeits, not only that process); else when its processes
        together hold more than the limit (RLIMIT_AS bounds each process alone). False once the bot needs no
        more watching."""
        pid, limit = self.pid, self.limits.memory_bytes
        if pid is None or limit is None or self._proc is None or self._proc.returncode is not None:
            return False
        if self.cgroup is not None:
            if not self.cgroup.memory_kills():
                return True
            self.killed_for = f"its memory cgroup killed a process of it, over the {limit >> 20} MiB limit"
            self.cgroup.kill()
        else:
            used = desc.resident_bytes(desc.tree(pid))  # a few small /proc files: cheaper than a thread hop
            self._peak_rss = max(self._peak_rss, used)
            if used <= limit:
                return True
            self.killed_for = f"its processes used {used >> 20} MiB of memory, over the {limit >> 20} MiB limit"
            self._signal_group(signal.SIGKILL)
            if self.sandbox == "none":
                self._kill_task = loop.run_in_executor(None, self.kill_family)
        log.debug("%s: killed: %s", self.label, self.killed_for)
        return False

    async def _watch(self) -> None:
        """Remember an unsandboxed bot's descendants while it runs: a chain seen once is known after it breaks."""
        with contextlib.suppress(asyncio.CancelledError):
            while self._proc is not None and self._proc.returncode is None:
                snap = await _recent_snapshot(WATCH_S / 2)
                await asyncio.get_running_loop().run_in_executor(None, self._track, snap)  # reads /proc too
                await asyncio.sleep(WATCH_S)

    def _track(self, snap: dict[int, ProcInfo], *, all_tokens: bool = False) -> None:
        """Add to the family: the group, the descendants of the bot and of every live member seen before,
        and the processes carrying the bot's token (adopted orphans only, unless ``all_tokens``)."""
        pid = self.pid
        if pid is None:
            return
        live = [p for p, start in list(self._family.items()) if p in snap and snap[p].start == start]
        found = descendants([pid, *live], snap)
        found.update(i.pid for i in snap.values() if i.pgid == pid)
        me = os.getpid()
        pool = snap if all_tokens else {i.pid: i for i in snap.values() if i.ppid in (me, 1)}
        found |= with_token(self._token, pool)
        found.discard(pid)
        found.discard(me)
        for p in found:
            if p in snap:
                self._family.setdefault(p, snap[p].start)

    def kill_family(self, rounds: int = 10) -> None:
        """SIGKILL the process group and every descendant found, until none is left (or ``rounds`` tries);
        reap those that became children of the referee. Blocking (``/proc`` scans): off the loop, or at exit.
        In the sandbox the group alone is enough: the PID namespace dies with the bwrap process."""
        pid = self.pid
        if pid is None:
            return
        if self.sandbox == "bwrap":
            self._signal_group(signal.SIGKILL)
            return
        me = os.getpid()
        snap: dict[int, ProcInfo] = {}
        for k in range(rounds):
            self._signal_group(signal.SIGKILL)
            snap = snapshot()
            self._track(snap, all_tokens=True)
            live = [
                p for p, start in list(self._family.items())
                if (i := snap.get(p)) is not None and i.start == start and i.state != "Z"
            ]  # fmt: skip
            if not live:
                break
            for p in live:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, signal.SIGKILL)
            time.sleep(0.002 * (k + 1))
        reap(p for p, start in self._family.items() if (i := snap.get(p)) is not None and i.ppid == me)

    def _remove_tmpdir(self) -> None:
        if self._launch is not None and self._launch.tmpdir is not None:
            shutil.rmtree(self._launch.tmpdir, ignore_errors=True)
            self._launch.tmpdir = None

    async def _copy_stderr(self, stream: asyncio.StreamReader, path: Path) -> None:
        left = self.stderr_cap
        out: IO[bytes] | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            out = open(path, "ab")  # noqa: SIM115 - closed in finally
        except OSError as exc:
            log.warning("%s: cannot open stderr log %s: %s", self.label, path, exc)
        try:
            while True:
                chunk = await stream.read(65536)
                if not chunk:
                    break
                if self.stderr_path is not None and self.stderr_path != path:  # the next match's log
                    path = self.stderr_path
                    if out is not None:
                        out.close()
                    try:
                        out = open(path, "ab")  # noqa: SIM115 - closed in finally
                    except OSError:
                        out = None
                if out is not None and left > 0:
                    part = chunk[:left]
                    out.write(part)
                    out.flush()
                    left -= len(part)
                    if left <= 0:
                        out.write(b"\n[stderr log truncated]\n")
                        out.flush()
                elif left <= 0:  # past the cap: drain slowly, so a flood blocks the bot, not a core of the referee
                    await asyncio.sleep(STDERR_DRAIN_PAUSE_S)
        except (OSError, ValueError):
            pass
        finally:
            if out is not None:
                out.close()

    def write(self, data: bytes) -> None:
        """Queue ``data`` (whole lines) for the bot's stdin without waiting.

        :class:`BotClosedError` if the pipe is closed or the bot leaves more than 16 MiB unread.
        """
        w = self._stdin
        if w is None or w.transport.is_closing():
            raise BotClosedError("the bot's stdin is closed")
        if w.transport.get_write_buffer_size() > MAX_PENDING_WRITE:
            raise BotClosedError("the bot does not read its input")
        if self._debug:
            for line in data.splitlines():
                log.debug("%s >> %s", self.label, line.decode("utf-8", "replace"))
        w.write(data)

    async def read_line(self, timeout_s: float | None = None) -> bytes:
        """The next line from the bot's stdout, without its newline; :class:`TimeoutError` when none came
        within ``timeout_s`` (None: no limit).

        :class:`BotClosedError` at end of file (a last line without newline counts as end of file);
        :class:`LineTooLongError` for a line over the cap (read with a bounded buffer).
        """
        r = self._stdout
        if r is None or self._protocol is None:
            raise BotClosedError("the bot is not running")
        try:
            if timeout_s is None:
                line = await r.readline()  # ends at the latest EXIT_GRACE_S after the bot exits (_Protocol)
            else:
                deadline = self._deadline
                deadline.start(timeout_s)
                try:
                    line = await r.readline()
                except asyncio.CancelledError:
                    if deadline.timed_out():
                        raise TimeoutError from None
                    raise
                finally:
                    deadline.stop()
        except ValueError:
            raise LineTooLongError(f"a line longer than {self.max_line} bytes") from None
        except TimeoutError:  # an OSError, but the caller's
            raise
        except (ConnectionError, OSError) as exc:
            raise BotClosedError(f"stdout: {exc}") from None
        if not line.endswith(b"\n"):
            if self._protocol.stdout_cut:
                raise BotClosedError(f"{self._exit_text()}; its stdout is still held open (by a child?)")
            raise BotClosedError(self._exit_text())
        if self._debug:
            log.debug("%s << %s", self.label, line[:-1].decode("utf-8", "replace"))
        return line[:-1]

    def _exit_text(self) -> str:
        if self.killed_for is None and self.cgroup is not None and self.cgroup.memory_kills():
            limit = self.limits.memory_bytes
            over = "" if limit is None else f", over the {limit >> 20} MiB limit"
            self.killed_for = f"its memory cgroup killed a process of it{over}"
        if self.killed_for is not None:
            return f"the bot was killed: {self.killed_for}"
        code = self.returncode
        if code is None:
            return "the bot closed its stdout"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"the bot was killed by {signal.Signals(-code).name}"
        return f"the bot exited with status {code}"

    async def exit_text(self, wait_s: float = 0.2) -> str:
        """How the bot ended, waiting up to ``wait_s`` for its exit status."""
        if self._proc is not None and self._proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._proc.wait(), wait_s)
        return self._exit_text()

    async def close(self, *, exit_wait_s: float = 0.2, grace_s: float = 0.2) -> None:
        """Close stdin, give the bot ``exit_wait_s`` to exit, then kill it: its process group (the sandbox),
        and unsandboxed every descendant found. Idempotent."""
        proc = self._proc
        if proc is None:
            return
        loop = asyncio.get_running_loop()
        self.thaw()  # a frozen bot could not read its bye, nor exit
        try:
            if self._stdin is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    self._stdin.close()
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), exit_wait_s)
            if self.sandbox == "none":  # while the bot runs, its children's parent chains are intact
                await loop.run_in_executor(None, lambda: self._track(snapshot()))
            self._signal_group(signal.SIGTERM)
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), grace_s)
            if self._watch_task is not None:
                self._watch_task.cancel()
            await loop.run_in_executor(None, self.kill_family)
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), 5.0)
        finally:
            self._signal_group(signal.SIGKILL)
            if self.cgroup is not None:
                with contextlib.suppress(Exception):
                    self._exit_text()  # read the memory kills before the group goes
                await loop.run_in_executor(None, self.cgroup.remove)
            _LIVE.pop(proc.pid, None)
            _unwatch_memory(self)
            self._deadline.cancel()
            if self._watch_task is not None:
                self._watch_task.cancel()
            self._remove_tmpdir()
            if self._transport is not None:  # release the pipes now, not at garbage collection
                self._transport.close()
            if self._protocol is not None:
                self._protocol.stdout_pipe.close()
            if self._stderr_task is not None:
                with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                    await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
                self._stderr_task.cancel()
            log.debug("%s: closed (%s)", self.label, self._exit_text())

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)
