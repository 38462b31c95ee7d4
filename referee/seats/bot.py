"""A bot program as a seat: :class:`BotSeat` speaks ``koikoi/1`` over a :class:`~referee.seats.process.BotProcess`."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Unpack

from referee.protocol import Request, bye_message, encode
from referee.records import Failure
from referee.seats.base import Seat, SeatFailure
from referee.seats.process import (
    BotClosedError,
    BotCommandError,
    BotProcess,
    LineTooLongError,
    ProcessOptions,
    command_argv,
)


def default_name(command: str) -> str:
    """A short name for a bot command before its hello: the script or program file name."""
    try:
        argv = command_argv(command)
    except BotCommandError:
        return "bot"
    prog = argv[1] if len(argv) > 1 and argv[1].endswith((".py", ".js")) else argv[0]
    return Path(prog).name[:64] or "bot"


class BotSeat(Seat):
    """A bot program: a :class:`~referee.seats.process.BotProcess` speaking ``koikoi/1``."""

    messages: ClassVar[bool] = False  # it writes encoded lines only

    def __init__(self, command: str, **options: Unpack[ProcessOptions]) -> None:
        """``options`` are those of :class:`~referee.seats.process.BotProcess` (label, stderr log, caps,
        limits)."""
        super().__init__(default_name(command), command=command)
        self.process = BotProcess(command, **options)
        self._held: list[bytes] = []  # events not yet written: they go out with the next request
        self.log_of: Callable[[str], Path] | None = None  # the stderr log of a match, by its id

    def _fail(self, reason: Failure, detail: str) -> SeatFailure:
        return self.fail(SeatFailure(reason, detail))

    @property
    def peak_memory(self) -> int:
        """The most resident memory its processes held together, as sampled by the memory watch."""
        return self.process.peak_memory

    async def _read(self, timeout_s: float | None = None) -> bytes:
        """One line; maps process errors to failures (a :class:`TimeoutError` is the caller's)."""
        try:
            return await self.process.read_line(timeout_s)
        except (LineTooLongError, BotClosedError) as exc:
            raise await self._read_failure(exc) from None

    async def _read_failure(self, exc: LineTooLongError | BotClosedError) -> SeatFailure:
        """The failure of a read that raised ``exc``."""
        if isinstance(exc, LineTooLongError):
            return self._fail(Failure.OVERSIZED_LINE, str(exc))
        ended = await self.process.exit_text()
        return self._fail(Failure.CRASH, f"{ended}; {exc.unfinished}" if exc.unfinished else ended)

    async def trailing_lines(self, wait_s: float = 0.5, most: int = 5) -> tuple[list[bytes], str | None]:
        """After a first line that is not a hello: up to ``most`` more stdout lines within ``wait_s`` (a
        runtime's error message often spans several), and how the bot ended if it did (else None)."""
        lines: list[bytes] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        with contextlib.suppress(TimeoutError, LineTooLongError, BotClosedError):
            while len(lines) < most and (left := deadline - loop.time()) > 0:
                lines.append(await self.process.read_line(left))
        ended = await self.process.exit_text(max(deadline - loop.time(), 0.05))
        return lines, ended if self.process.returncode is not None else None

    def _write(self, data: bytes) -> None:
        if self._held:
            data = b"".join([*self._held, data])
            self._held.clear()
        try:
            self.process.write(data)
        except BotClosedError as exc:
            raise self._fail(Failure.CRASH, str(exc)) from None

    async def _start(self, hello: dict[str, Any], timeout_s: float) -> bytes:
        """Start the process, send ``hello`` and return the bot's first line, read within ``timeout_s``."""
        try:
            async with asyncio.timeout(timeout_s):
                try:
                    await self.process.start()
                except BotCommandError as exc:
                    raise self._fail(Failure.CRASH, str(exc)) from None
                self.started = True
                self._write(encode(hello))
                return await self._read()
        except TimeoutError:
            raise self._fail(Failure.TIMEOUT, f"no hello within {timeout_s * 1000:.0f} ms (is each line it writes "
                                              "flushed?)") from None  # the usual cause  # fmt: skip

    async def _new_match(self, msg: dict[str, Any]) -> None:
        """Send ``new_match`` to the running bot: held back, like events, until its first request (or
        :meth:`flush`), so that the announcement, the deal and the request reach the bot in one write."""
        if self.log_of is not None:  # from here on, its stderr goes to this match's log
            self.process.stderr_path = self.log_of(str(msg["match"]["id"]))
        if self.process.returncode is not None:  # it ended after its last match: it forfeits this one at once
            raise self._fail(Failure.CRASH, await self.process.exit_text())
        self._held.append(encode(msg))

    async def send(self, msg: dict[str, Any]) -> None:
        """Queue one message for the bot."""
        self._write(encode(msg))

    async def send_many(self, msgs: list[dict[str, Any]]) -> None:
        """Hold events back until the next request, message or :meth:`flush`: one pipe write per decision."""
        self._held.extend([encode(m) for m in msgs])

    async def send_encoded(self, msgs: list[tuple[dict[str, Any], bytes]]) -> None:
        """Hold the encoded event lines back until the next request, message or :meth:`flush`."""
        self._held.extend([line for _, line in msgs])

    async def flush(self) -> None:
        """Write the held-back events."""
        if self._held:
            self._write(b"")

    async def _ask(
        self, request: Request, timeout_s: float, meanwhile: Callable[[], object] | None
    ) -> tuple[bytes, float]:
        """Send ``request`` and call ``meanwhile``; return the bot's next line, read within ``timeout_s``, and
        the milliseconds it took (from the write of the request)."""
        self._write(encode(request))  # written from cached texts
        self.process.thaw()  # the clock starts after the thaw: the bot is never charged for it
        t0 = time.perf_counter()
        if meanwhile is not None:
            meanwhile()
        try:
            line = await self.process.read_line(timeout_s)  # not through _read: one coroutine less per decision
        except TimeoutError:
            raise self._fail(
                Failure.TIMEOUT, f"no answer to request {request.id} within {timeout_s * 1000:.0f} ms"
            ) from None
        except (LineTooLongError, BotClosedError) as exc:
            raise await self._read_failure(exc) from None
        return line, (time.perf_counter() - t0) * 1000.0

    def pause(self) -> None:
        """Freeze the bot's processes until its next request is written (see :meth:`BotProcess.freeze`)."""
        self.process.freeze()

    async def close(self) -> None:
        """Send ``bye`` (best effort), then end the process and its whole group."""
        if self.started and self.failed is None:
            with contextlib.suppress(BotClosedError):
                self.process.write(encode(bye_message()))
        await self.process.close(exit_wait_s=0.2 if self.failed is None else 0.0)
