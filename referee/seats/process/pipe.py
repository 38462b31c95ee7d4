"""The pipes to a bot process: newline framing with a capped line, the read deadline, and the stderr log.

:class:`BotPipe` is the stdio half of :class:`~referee.seats.process.BotProcess`: :meth:`BotPipe.write` queues
whole lines for the bot's stdin, :meth:`BotPipe.read_line` reads one capped line from its stdout within a
deadline (:class:`Deadline`: one lazily re-armed timer, not one per read), and the bot's stderr is copied into a
capped log file. The bot's stdout is a pipe of its own (:func:`open_stdout`), ended by :class:`ExitProtocol` soon
after the bot exits even when a child of the bot holds it open. Every line is logged at debug level on the
``referee.seats.process`` logger with a direction marker (``>>`` to the bot, ``<<`` from it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import IO, Any

from referee.protocol.answers import quote_line
from referee.seats.process import family
from referee.seats.process.plan import ProcessError

log = logging.getLogger("referee.seats.process")

MAX_LINE = 1 << 20
"""Default cap on one line from a bot (bytes, newline excluded)."""
STDERR_CAP = 1 << 20
"""Default cap on a bot's stderr log file (bytes); beyond it stderr is drained and dropped."""
STDERR_DRAIN_PAUSE_S = 0.01
"""Past the stderr cap, the pause after each chunk (at most 64 KiB) read and dropped: about 6 MB/s at most."""
MAX_PENDING_WRITE = 16 << 20
"""Bytes waiting to be written to a bot that does not read its input before the bot counts as stuck."""
EXIT_GRACE_S = 0.2
"""After the bot's process exits, how long its last line may take to arrive before the bot counts as crashed
(its stdout may be held open by a child)."""


class BotClosedError(ProcessError):
    """The bot exited or closed its stdout (or its stdin). ``unfinished``: what it wrote last with no newline
    after it, quoted (empty: nothing), for the failure's detail."""

    def __init__(self, message: str, unfinished: str = "") -> None:
        super().__init__(message + (f"; {unfinished}" if unfinished else ""))
        self.unfinished = unfinished


class LineTooLongError(ProcessError):
    """The bot wrote a line longer than the cap."""


class ExitProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The protocol of the bot's process (its stdin and stderr pipes; stdout is read through ``stdout_pipe``, a
    pipe of its own: see :func:`open_stdout`) that ends the bot's stdout soon after the bot exits, even when a
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
            family.disown(transport.get_pid())  # its exit status is collected
        # The bot's last line may still be on the way; after a grace period a stdout still open (held by a child
        # of the bot) is closed here, so that a pending read ends instead of waiting for its timeout.
        self._exit_loop.call_later(EXIT_GRACE_S, self._cut_stdout)

    def _cut_stdout(self) -> None:
        if not self.stdout_pipe.is_closing():
            self.stdout_cut = True
            self.stdout_pipe.close()


async def open_stdout(loop: asyncio.AbstractEventLoop, max_line: int) -> tuple[asyncio.StreamReader,
                                                                            asyncio.ReadTransport, int]:
    """A pipe for a bot's stdout: the stream that reads it (lines up to ``max_line`` bytes), its read end's
    transport, and the write end to hand to the bot (closed by the caller once the bot holds it). The stream is
    connected to the pipe directly: a line reaches the waiting read in one pass of the event loop, where the
    subprocess transport's pipes take two."""
    stdout = asyncio.StreamReader(limit=max_line, loop=loop)
    read_end, write_end = os.pipe()
    try:
        pipe, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stdout, loop=loop),
            open(read_end, "rb", buffering=0),  # noqa: SIM115 - the pipe transport closes it
        )
    except BaseException:
        os.close(write_end)
        raise
    return stdout, pipe, write_end


class Deadline:
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


class BotPipe:
    """The stdio of one bot process: lines to its stdin, capped lines from its stdout within a deadline, its
    stderr into a capped log file. The process sets ``_stdin``, ``_stdout`` and ``_protocol`` once it runs, and
    says how the bot ended (:meth:`_exit_text`) when its stdout ends."""

    def __init__(self, label: str, stderr_path: Path | None, max_line: int, stderr_cap: int) -> None:
        self.label = label
        self.stderr_path = stderr_path
        self.max_line = max_line
        self.stderr_cap = stderr_cap
        self._stdout: asyncio.StreamReader | None = None
        self._stdin: asyncio.StreamWriter | None = None
        self._protocol: ExitProtocol | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._deadline = Deadline()  # the timeout of reads
        self._debug = log.isEnabledFor(logging.DEBUG)

    def _exit_text(self) -> str:
        """How the bot ended, for the error of a read that found its stdout closed."""
        raise NotImplementedError

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
                line = await r.readline()  # ends at the latest EXIT_GRACE_S after the bot exits (ExitProtocol)
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
            unfinished = f"its last output, with no newline after it: {quote_line(line)}" if line.strip() else ""
            raise BotClosedError(self._exit_text(), unfinished)
        if self._debug:
            log.debug("%s << %s", self.label, line[:-1].decode("utf-8", "replace"))
        return line[:-1]

    def _copy_stderr_from(self, stream: asyncio.StreamReader | None) -> None:
        """Copy ``stream`` (the bot's stderr) into the stderr log, when there is one."""
        if self.stderr_path is not None and stream is not None:
            self._stderr_task = asyncio.ensure_future(self._copy_stderr(stream, self.stderr_path))

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
                if self.stderr_path is not None and self.stderr_path != path:  # the next match's log, its own cap
                    path, left = self.stderr_path, self.stderr_cap
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

    async def _close_pipes(self) -> None:
        """Drop the read deadline, close the stdout pipe and let the stderr copy finish (at most half a second)."""
        self._deadline.cancel()
        if self._protocol is not None:
            self._protocol.stdout_pipe.close()
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
            self._stderr_task.cancel()
