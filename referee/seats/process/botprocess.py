"""A bot as an OS process: :class:`BotProcess` starts, freezes, watches, closes and kills one bot program.

:class:`BotProcess` starts a command line (``shlex`` rules; a bare ``.py`` path runs with this Python, a ``.js``
path with ``node``; see :mod:`referee.seats.process.plan`), by default inside the bwrap sandbox of
:mod:`referee.seats.sandbox`, talks to it through its pipes (:mod:`referee.seats.process.pipe`), and on
:meth:`BotProcess.close` kills it. The rest of the referee only starts a bot, talks to it and closes it.

* Sandboxed, the bot and everything it starts live in a PID namespace that dies with the bwrap process: closing
  kills that process group, and nothing can escape.
* Unsandboxed, the bot runs in a process group of its own and in a fresh empty working directory (removed at
  close); closing kills the group and every descendant that left it, found through ``/proc`` (see
  :mod:`referee.seats.process.family`; the scans run in a worker thread, off the event loop that times the bots).
* Where the referee is a child subreaper (:func:`~referee.seats.process.family.adopt_orphans`), the orphans that
  re-parent to it are reaped on SIGCHLD and every :data:`~referee.seats.process.family.REAP_S` seconds.

Limits come from :class:`~referee.seats.process.plan.Limits` through exec wrappers (no ``preexec_fn``), the
bot's cgroup (:mod:`referee.seats.process.cgroups`) and the memory watch (:mod:`referee.seats.process.memory`).
Nothing here knows the protocol; :mod:`referee.seats` turns these errors into failures of a seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
from pathlib import Path
from typing import TypedDict

from referee.seats.process import cgroups, family, memory
from referee.seats.process.family import WATCH_S, Family, ProcInfo, recent_snapshot, signal_group, snapshot
from referee.seats.process.pipe import MAX_LINE, STDERR_CAP, BotPipe, ExitProtocol, log, open_stdout
from referee.seats.process.plan import BotCommandError, Launch, Limits, expected_isolation, plan
from referee.seats.sandbox import SandboxError


class ProcessOptions(TypedDict, total=False):
    """The keyword options of :class:`BotProcess` (and of the seat that owns one)."""

    label: str
    stderr_path: Path | None
    max_line: int
    stderr_cap: int
    limits: Limits | None


class BotProcess(BotPipe):
    """One bot program running as a child process: sandboxed (bwrap) or in its own process group. Its stdio
    (:meth:`write`, :meth:`read_line`, the stderr log) is that of :class:`~referee.seats.process.pipe.BotPipe`."""

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
        super().__init__(label, stderr_path, max_line, stderr_cap)
        self.command = command
        self.limits = limits or Limits()
        self.files: str | None = None  # the fingerprint of the bot's own files (referee.seats.files), once worked out
        self._proc: asyncio.subprocess.Process | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._kill_task: asyncio.Future[None] | None = None  # killing an unsandboxed bot's family, off the loop
        self.killed_for: str | None = None  # why the referee killed the bot (its memory), if it did
        self._peak_rss = 0  # the most resident memory (bytes) its processes held together, as sampled
        self._family = Family(secrets.token_hex(12))  # every descendant seen, unsandboxed
        self._launch: Launch | None = None
        self.cgroup: cgroups.BotCgroup | None = None  # the bot's control group, once started (where cgroups work)
        self._stopped: list[int] = []  # without a cgroup: the processes the SIGSTOP freezer stopped
        self._release_tries = 3  # bwrap's own processes leave the frozen group at one of the first freezes
        self.frozen = False

    @property
    def token(self) -> str:
        """The value of ``KOIKOI_REFEREE_BOT`` in an unsandboxed bot's environment (it marks its descendants)."""
        return self._family.token

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
        stderr: int = asyncio.subprocess.PIPE if self.stderr_path is not None else asyncio.subprocess.DEVNULL
        loop = asyncio.get_running_loop()
        family.start_reaper(loop)
        stdout_pipe: asyncio.ReadTransport | None = None
        write_end = -1
        launch: Launch | None = None
        try:
            stdout, stdout_pipe, write_end = await open_stdout(loop, self.max_line)
            pipe = stdout_pipe
            procs = None if self.cgroup is None else self.cgroup.procs_files
            launch = self._launch = plan(self.command, self.limits, self.token, procs, write_end)
            passed = launch.stdout_fd is not None  # a descriptor of its own, not the stdout bwrap would hold
            with family.spawning():
                transport, protocol = await loop.subprocess_exec(
                    lambda: ExitProtocol(self.max_line, loop, pipe),
                    *launch.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.DEVNULL if passed else write_end,
                    stderr=stderr,
                    start_new_session=True,
                    cwd=launch.cwd,
                    env=launch.env,
                    pass_fds=(*launch.fds, write_end) if passed else launch.fds,
                )
                family.own(transport.get_pid())
                if transport.get_returncode() is not None:
                    family.disown(transport.get_pid())
        except BaseException as exc:
            if stdout_pipe is not None:
                stdout_pipe.close()
            self._remove_tmpdir()
            self._remove_cgroup()
            if isinstance(exc, OSError | ValueError | RuntimeError | subprocess.SubprocessError):
                raise BotCommandError(f"cannot start {self.command!r}: {exc}") from None
            raise
        finally:
            if launch is not None:
                launch.close_fds()
            if write_end >= 0:
                os.close(write_end)  # the bot holds it now
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        self._proc, self._transport, self._protocol = proc, transport, protocol
        family.register(proc.pid, self)
        if launch.mode == "none":
            self._watch_task = asyncio.ensure_future(self._watch())
        if self.limits.memory_bytes is not None:
            memory.watch(loop, self)
        assert proc.stdin is not None
        self._stdout, self._stdin = stdout, proc.stdin
        self._copy_stderr_from(proc.stderr)
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
        self._stopped = cgroups.stop_all(lambda: family.tree(pid))

    def _sandbox_own(self) -> list[int]:
        """bwrap's own processes once the bot runs (see :func:`~referee.seats.process.family.sandbox_own`)."""
        if self._proc is None or self._launch is None or self._launch.mode != "bwrap":
            return []
        return family.sandbox_own(self._proc.pid)

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

    def check_memory(self, loop: asyncio.AbstractEventLoop) -> bool:
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
            used = family.resident_bytes(family.tree(pid))  # a few small /proc files: cheaper than a thread hop
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
                snap = await recent_snapshot(WATCH_S / 2)
                await asyncio.get_running_loop().run_in_executor(None, self._track, snap)  # reads /proc too
                await asyncio.sleep(WATCH_S)

    def _track(self, snap: dict[int, ProcInfo], *, all_tokens: bool = False) -> None:
        """Add to the family what ``snap`` shows of it (see :meth:`~referee.seats.process.family.Family.track`)."""
        pid = self.pid
        if pid is not None:
            self._family.track(pid, snap, all_tokens=all_tokens)

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
        self._family.kill(pid, rounds)

    def kill_now(self) -> None:
        """SIGKILL the bot's process group, remove its cgroup and kill every descendant found (blocking: a last
        resort, see :func:`~referee.seats.process.family.kill_all_now`)."""
        if self._proc is None:
            return
        signal_group(self._proc.pid, signal.SIGKILL)
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.remove(wait_s=0.2)
        self.kill_family()

    def _remove_tmpdir(self) -> None:
        if self._launch is not None and self._launch.tmpdir is not None:
            shutil.rmtree(self._launch.tmpdir, ignore_errors=True)
            self._launch.tmpdir = None

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
            family.unregister(proc.pid)
            memory.unwatch(self)
            if self._watch_task is not None:
                self._watch_task.cancel()
            self._remove_tmpdir()
            if self._transport is not None:  # release the pipes now, not at garbage collection
                self._transport.close()
            await self._close_pipes()
            log.debug("%s: closed (%s)", self.label, self._exit_text())

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc is not None
        signal_group(self._proc.pid, sig)
