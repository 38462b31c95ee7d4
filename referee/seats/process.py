"""A bot as an OS process: asyncio subprocess in its own process group, JSON-line framing with a cap.

:class:`BotProcess` starts a command line (``shlex`` rules; a bare ``.py`` path runs with this Python, a
``.js`` path with ``node``), writes lines to its stdin, reads capped lines from its stdout, copies its stderr
into a capped log file, and on :meth:`BotProcess.close` kills its whole process group (SIGTERM, a short grace,
SIGKILL) and every descendant that left the group (see :mod:`referee.seats.descendants`). The child gets its
:class:`Limits` before it runs (address space, CPU seconds, no core files, SIGKILL when the referee dies) and a
working directory of its own: a fresh empty temporary directory by default, removed at close, so the files
the referee writes (the replay) are not reachable by a relative path. Every line is logged at debug level on
the ``referee.seats.process`` logger with a direction marker (``>>`` to the bot, ``<<`` from it).

Nothing here knows the protocol; :mod:`referee.seats` turns these errors into failures of a seat.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import resource
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from referee.errors import RefereeError
from referee.seats.descendants import TOKEN_VAR, ProcInfo, descendants, die_with_parent, reap, snapshot, with_token

log = logging.getLogger("referee.seats.process")

MAX_LINE = 1 << 20
"""Default cap on one line from a bot (bytes, newline excluded)."""
STDERR_CAP = 1 << 20
"""Default cap on a bot's stderr log file (bytes); beyond it stderr is drained and dropped."""
MAX_PENDING_WRITE = 16 << 20
"""Bytes waiting to be written to a bot that does not read its input before the bot counts as stuck."""
WATCH_S = 0.2
"""How often a running bot's descendants are looked up (so a child that detaches later is still known)."""
EXIT_GRACE_S = 0.2
"""After the bot's process exits, how long its last line may take to arrive before the bot counts as crashed
(its stdout may be held open by a child)."""


class ProcessError(RefereeError):
    """A bot process could not be used."""


class BotCommandError(ProcessError):
    """The command line cannot be started (empty, missing file, program not found)."""


class BotClosedError(ProcessError):
    """The bot exited or closed its stdout (or its stdin)."""


class LineTooLongError(ProcessError):
    """The bot wrote a line longer than the cap."""


DEFAULT_MEMORY_MB = 2048
"""The default address-space limit of a bot process, in MiB (``play --bot-memory-mb``; tournaments)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits and working directory of a bot process, applied in the child before it runs.

    ``cpu_seconds`` sets RLIMIT_CPU (SIGXCPU at the limit, SIGKILL a second later), ``memory_bytes`` sets
    RLIMIT_AS (allocations beyond it fail); None leaves them off. ``cwd`` is the bot's working directory;
    None gives each bot process a fresh empty temporary directory, removed when it is closed. Core dumps are
    always off and the bot gets SIGKILL if the referee dies (Linux).
    """

    cpu_seconds: int | None = None  # RLIMIT_CPU
    memory_bytes: int | None = None  # RLIMIT_AS
    cwd: Path | None = None  # None: a fresh temporary directory

    def preexec(self) -> Callable[[], None]:
        """The ``preexec_fn`` that applies the limits in the child (prepared here, in the referee)."""
        cpu, mem = self.cpu_seconds, self.memory_bytes
        orphan_guard = die_with_parent()

        def _apply() -> None:  # runs in the child between fork and exec: no imports, no allocation-heavy work
            _lower(resource.RLIMIT_CORE, 0)
            if cpu is not None:
                _lower(resource.RLIMIT_CPU, cpu, cpu + 1)
            if mem is not None:
                _lower(resource.RLIMIT_AS, mem)
            orphan_guard()

        return _apply


def _lower(which: int, soft: int, hard: int | None = None) -> None:
    """Set a limit, never above the current hard limit (raising it would fail without privileges)."""
    _, cur_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if cur_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, cur_hard), min(hard, cur_hard)
    resource.setrlimit(which, (soft, hard))


def _probe(test: Callable[[], bool]) -> bool:
    """``test()`` (a ``Path`` check), False where the path cannot even be looked up (too long, a NUL byte)."""
    try:
        return test()
    except (OSError, ValueError):
        return False


def resolve_paths(argv: list[str], base: Path) -> list[str]:
    """``argv`` with each relative argument that names an existing file or folder under ``base`` (and the
    program, if it is a relative path) made absolute: the command line is read where the referee runs, while
    the bot runs in a working directory of its own. Options (``-x``, ``--opt=value``) are left alone."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg and not arg.startswith("-") and not os.path.isabs(arg):
            path = base / arg
            if (i == 0 and "/" in arg) or (i > 0 and _probe(path.exists)):
                arg = str(path.absolute())
        out.append(arg)
    return out


def command_argv(command: str) -> list[str]:
    """The argument vector of a bot command line; :class:`BotCommandError` if it cannot name a program."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BotCommandError(f"bad bot command {command!r}: {exc}") from None
    if not argv:
        raise BotCommandError("empty bot command")
    first = argv[0]
    if first.endswith(".py"):
        return [sys.executable, *argv]
    if first.endswith(".js"):
        return ["node", *argv]
    return argv


def bot_environment(cwd: Path, token: str) -> dict[str, str]:
    """The environment of a bot: the referee's, with ``PWD`` naming the bot's own working directory (not the
    referee's, where the replay is written), no ``OLDPWD``, and the bot's token in ``KOIKOI_REFEREE_BOT``."""
    env = {k: v for k, v in os.environ.items() if k != "OLDPWD"}
    env["PWD"] = str(cwd.absolute())
    env[TOKEN_VAR] = token
    return env


def check_command(command: str, cwd: Path | None = None) -> list[str]:
    """The argument vector of ``command`` after checking that its program (or script file) exists."""
    argv = command_argv(command)
    first = shlex.split(command)[0]
    base = cwd or Path.cwd()
    if first.endswith((".py", ".js")):
        if not _probe((base / first).is_file):
            raise BotCommandError(f"bot file not found: {first}")
        if first.endswith(".js") and shutil.which("node") is None:
            raise BotCommandError("node is needed for a .js bot but is not on PATH")
        return argv
    if "/" in first:
        path = base / first
        if not _probe(path.is_file):
            raise BotCommandError(f"bot program not found: {first}")
        if not os.access(path, os.X_OK):
            raise BotCommandError(f"bot program is not executable: {first}")
    elif shutil.which(first) is None:
        raise BotCommandError(f"bot program not found on PATH: {first}")
    return argv


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol of :func:`asyncio.create_subprocess_exec` that ends the bot's stdout soon after the bot
    exits, even when a child of the bot still holds the pipe open (reads need no race against the exit)."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.stdout_cut = False  # stdout was closed by the referee: the bot exited, something held it open
        self._exit_loop = loop
        self._subprocess: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._subprocess = transport

    def process_exited(self) -> None:
        super().process_exited()
        # The bot's last line may still be on the way; after a grace period a stdout still open (held by a child
        # of the bot) is closed here, so that a pending read ends instead of waiting for its timeout.
        self._exit_loop.call_later(EXIT_GRACE_S, self._cut_stdout)

    def _cut_stdout(self) -> None:
        transport = self._subprocess
        pipe = transport.get_pipe_transport(1) if isinstance(transport, asyncio.SubprocessTransport) else None
        if pipe is not None and not pipe.is_closing():
            self.stdout_cut = True
            pipe.close()


_LIVE: dict[int, BotProcess] = {}


def kill_all_now() -> None:
    """SIGKILL every bot process group started here and not yet closed, with every descendant found (a last
    resort at exit)."""
    for pgid, bot in list(_LIVE.items()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        bot.kill_family()
        _LIVE.pop(pgid, None)


_snap_cache: tuple[float, dict[int, ProcInfo]] = (0.0, {})


def _recent_snapshot(max_age_s: float) -> dict[int, ProcInfo]:
    """A snapshot of ``/proc`` at most ``max_age_s`` old, shared by every bot watched in this process."""
    global _snap_cache
    now = time.monotonic()
    if now - _snap_cache[0] > max_age_s:
        _snap_cache = (now, snapshot())
    return _snap_cache[1]


atexit.register(kill_all_now)


class BotProcess:
    """One bot program running as a child process in its own process group."""

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
        self._stdout: asyncio.StreamReader | None = None
        self._stdin: asyncio.StreamWriter | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._debug = log.isEnabledFor(logging.DEBUG)
        self._token = secrets.token_hex(12)
        self._family: dict[int, int] = {}  # every descendant seen: pid -> start time
        self._tmpdir: str | None = None
        self._protocol: _Protocol | None = None

    @property
    def token(self) -> str:
        """The value of ``KOIKOI_REFEREE_BOT`` in the bot's environment (it marks its descendants)."""
        return self._token

    @property
    def cwd(self) -> Path | None:
        """The bot's working directory once started."""
        if self._tmpdir is not None:
            return Path(self._tmpdir)
        return self.limits.cwd

    @property
    def pid(self) -> int | None:
        """The process id (and process group id) once started."""
        return None if self._proc is None else self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has exited, else None."""
        return None if self._proc is None else self._proc.returncode

    async def start(self) -> None:
        """Start the process. :class:`BotCommandError` if it cannot be started."""
        argv = command_argv(self.command)
        here = Path.cwd()
        cwd = self.limits.cwd
        if cwd is None:
            self._tmpdir = tempfile.mkdtemp(prefix="koikoi-bot-")
            cwd = Path(self._tmpdir)
        if cwd.absolute() != here.absolute():
            argv = resolve_paths(argv, here)
        stderr: int = asyncio.subprocess.PIPE if self.stderr_path is not None else asyncio.subprocess.DEVNULL
        try:
            loop = asyncio.get_running_loop()
            transport, protocol = await loop.subprocess_exec(
                lambda: _Protocol(self.max_line, loop),
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                cwd=cwd,
                env=bot_environment(cwd, self._token),
                preexec_fn=self.limits.preexec(),
            )
            proc = asyncio.subprocess.Process(transport, protocol, loop)
            self._protocol = protocol
        except (OSError, ValueError, RuntimeError, subprocess.SubprocessError) as exc:
            self._remove_tmpdir()
            raise BotCommandError(f"cannot start {self.command!r}: {exc}") from None
        self._proc = proc
        _LIVE[proc.pid] = self
        self._watch_task = asyncio.ensure_future(self._watch())
        assert proc.stdout is not None and proc.stdin is not None
        self._stdout, self._stdin = proc.stdout, proc.stdin
        if self.stderr_path is not None and proc.stderr is not None:
            self._stderr_task = asyncio.ensure_future(self._copy_stderr(proc.stderr, self.stderr_path))
        log.debug("%s: started pid %d: %s", self.label, proc.pid, self.command)

    async def _watch(self) -> None:
        """Remember the bot's descendants while it runs: a chain seen once is known after it breaks."""
        with contextlib.suppress(asyncio.CancelledError):
            while self._proc is not None and self._proc.returncode is None:
                self._track(_recent_snapshot(WATCH_S / 2))
                await asyncio.sleep(WATCH_S)

    def _track(self, snap: dict[int, ProcInfo], *, all_tokens: bool = False) -> None:
        """Add to the family: the group, the descendants of the bot and of every live member seen before,
        and the processes carrying the bot's token (adopted orphans only, unless ``all_tokens``)."""
        pid = self.pid
        if pid is None:
            return
        live = [p for p, start in self._family.items() if p in snap and snap[p].start == start]
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
        reap those that became children of the referee."""
        pid = self.pid
        if pid is None:
            return
        me = os.getpid()
        snap: dict[int, ProcInfo] = {}
        for k in range(rounds):
            self._signal_group(signal.SIGKILL)
            snap = snapshot()
            self._track(snap, all_tokens=True)
            live = [
                p for p, start in self._family.items()
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
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

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
                if out is not None and left > 0:
                    part = chunk[:left]
                    out.write(part)
                    out.flush()
                    left -= len(part)
                    if left <= 0:
                        out.write(b"\n[stderr log truncated]\n")
                        out.flush()
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

    async def read_line(self) -> bytes:
        """The next line from the bot's stdout, without its newline.

        :class:`BotClosedError` at end of file (a last line without newline counts as end of file);
        :class:`LineTooLongError` for a line over the cap (read with a bounded buffer).
        """
        r = self._stdout
        if r is None or self._protocol is None:
            raise BotClosedError("the bot is not running")
        try:
            line = await r.readline()  # ends at the latest EXIT_GRACE_S after the bot exits (_Protocol)
        except ValueError:
            raise LineTooLongError(f"a line longer than {self.max_line} bytes") from None
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
        """Close stdin, give the bot ``exit_wait_s`` to exit, then kill its whole process group.
        Idempotent."""
        proc = self._proc
        if proc is None:
            return
        try:
            if self._stdin is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    self._stdin.close()
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), exit_wait_s)
            self._track(snapshot())  # while the bot runs, its children's parent chains are intact
            self._signal_group(signal.SIGTERM)
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), grace_s)
            self.kill_family()
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), 5.0)
        finally:
            self._signal_group(signal.SIGKILL)
            _LIVE.pop(proc.pid, None)
            if self._watch_task is not None:
                self._watch_task.cancel()
            self._remove_tmpdir()
            transport = getattr(proc, "_transport", None)  # release the pipes now, not at garbage collection
            if transport is not None:
                transport.close()
            if self._stderr_task is not None:
                with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                    await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
                self._stderr_task.cancel()
            log.debug("%s: closed (%s)", self.label, self._exit_text())

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)
