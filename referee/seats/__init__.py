"""The seats a match talks to: the :class:`Seat` interface and :class:`BotSeat`, a bot program over
stdin/stdout.

A seat owns the per-process counters of the protocol: :meth:`Seat.decide` gives each request the next ``id``
of that process (written into the request dict), :meth:`Seat.start` and :meth:`Seat.new_match` set
``match.index``.

Every failure of a seat is a :class:`SeatFailure` with one of the failure names of ``docs/design.md``:
``timeout``, ``crash``, ``invalid_json``, ``invalid_message``, ``illegal_action`` (raised by the match, which
checks legality), ``oversized_line``, ``protocol_mismatch``.

A bot that writes a line nobody asked for (two answers to one request, an answer to an event) is caught when
the next answer is read: the stray line comes first, its ``id`` (or ``type``) does not answer the new request,
and the bot fails with ``invalid_message``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from referee.errors import RefereeError
from referee.protocol import BotAction, BotHello, ProtocolError, bye_message, encode, parse_bot_message
from referee.seats.process import (
    MAX_LINE,
    STDERR_CAP,
    BotClosedError,
    BotCommandError,
    BotProcess,
    Limits,
    LineTooLongError,
    command_argv,
)

FAILURES = (
    "timeout", "crash", "invalid_json", "invalid_message", "illegal_action", "oversized_line",
    "protocol_mismatch",
)  # fmt: skip
"""The failure names a seat (or the match, for ``illegal_action``) records."""


class SeatFailure(RefereeError):
    """A seat broke the rules of the match: ``reason`` is one of :data:`FAILURES`, ``detail`` says what
    happened."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class Seat(ABC):
    """One side of a match. The match calls :meth:`start` (or :meth:`new_match`), then :meth:`send` and
    :meth:`decide` as the game goes, and the owner calls :meth:`close` when done with the seat."""

    name: str = "seat"
    started: bool = False
    failed: SeatFailure | None = None  # set when the seat forfeits; such a seat is not reused

    @abstractmethod
    async def start(self, hello: dict[str, Any], timeout_s: float) -> None:
        """Start the seat, send ``hello`` (its ``match.index`` is set here) and read the answer.

        Raises :class:`SeatFailure`."""

    @abstractmethod
    async def new_match(self, msg: dict[str, Any]) -> None:
        """Announce another match on a started seat (``match.index`` is set here); no answer is read."""

    @abstractmethod
    async def send(self, msg: dict[str, Any]) -> None:
        """Send one message (event, error, bye) without waiting for an answer. Raises :class:`SeatFailure`."""

    async def send_many(self, msgs: list[dict[str, Any]]) -> None:
        """Send events. A seat may hold them back until its next request or :meth:`flush` (one write each)."""
        for msg in msgs:
            await self.send(msg)

    async def send_encoded(self, msgs: list[tuple[dict[str, Any], bytes]]) -> None:
        """Send events given both as messages and as their encoded lines (shared between seats and the replay).

        Seats that write bytes use the lines; others (a human seat) use the messages."""
        await self.send_many([msg for msg, _ in msgs])

    async def flush(self) -> None:  # noqa: B027 - optional: only seats that hold messages back need it
        """Deliver any messages held back by :meth:`send_many` (the match calls it when it ends)."""

    @abstractmethod
    async def decide(self, request: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], float]:
        """Send ``request`` (its ``id`` is set here) and return the answer and the milliseconds it took.

        The answer is ``{"type": "action", "id": n, "action": {...}}`` with a well-formed action answering
        this
        request; whether it is legal is the match's business. Raises :class:`SeatFailure`."""

    @abstractmethod
    async def close(self) -> None:
        """Say ``bye`` (best effort) and release everything; for a bot, kill its whole process group."""


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
        self.name = default_name(command)
        self.version: str | None = None
        self.started = False
        self.matches = 0
        self.failed: SeatFailure | None = None
        self.process = BotProcess(
            command,
            label=label,
            stderr_path=stderr_path,
            max_line=max_line,
            stderr_cap=stderr_cap,
            limits=limits,
        )
        self._next_id = 1
        self._held: list[bytes] = []  # events not yet written: they go out with the next request

    def _fail(self, reason: str, detail: str) -> SeatFailure:
        failure = SeatFailure(reason, detail)
        self.failed = failure
        return failure

    async def _read(self) -> bytes:
        """One line; maps process errors to failures (timeouts are the caller's)."""
        try:
            return await self.process.read_line()
        except LineTooLongError as exc:
            raise self._fail("oversized_line", str(exc)) from None
        except BotClosedError:
            raise self._fail("crash", await self.process.exit_text()) from None

    def _write(self, data: bytes) -> None:
        if self._held:
            data = b"".join([*self._held, data])
            self._held.clear()
        try:
            self.process.write(data)
        except BotClosedError as exc:
            self.failed = SeatFailure("crash", str(exc))
            raise self.failed from None

    async def start(self, hello: dict[str, Any], timeout_s: float) -> None:
        """Start the process, send ``hello`` and read the bot's ``hello`` within ``timeout_s``."""
        self.matches += 1
        hello["match"]["index"] = self.matches
        try:
            async with asyncio.timeout(timeout_s):
                try:
                    await self.process.start()
                except BotCommandError as exc:
                    raise self._fail("crash", str(exc)) from None
                self.started = True
                self._write(encode(hello))
                line = await self._read()
        except TimeoutError:
            raise self._fail("timeout", f"no hello within {timeout_s * 1000:.0f} ms") from None
        try:
            msg = parse_bot_message(line)
        except ProtocolError as exc:
            raise self._fail(exc.reason, f"hello: {exc}") from None
        if not isinstance(msg, BotHello):
            raise self._fail("invalid_message", f"expected a hello, got a {msg.type!r} message")
        self.name = msg.name
        self.version = msg.version

    async def new_match(self, msg: dict[str, Any]) -> None:
        """Send ``new_match`` to the running bot."""
        self.matches += 1
        msg["match"]["index"] = self.matches
        self._write(encode(msg))

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

    async def decide(self, request: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], float]:
        """Send ``request`` with the next id and read the bot's ``action`` within ``timeout_s``."""
        rid = self._next_id
        self._next_id = rid + 1
        request["id"] = rid
        data = encode(request)
        t0 = time.perf_counter()
        self._write(data)
        try:
            async with asyncio.timeout(timeout_s):
                line = await self._read()
        except TimeoutError:
            raise self._fail(
                "timeout", f"no answer to request {rid} within {timeout_s * 1000:.0f} ms"
            ) from None
        ms = (time.perf_counter() - t0) * 1000.0
        try:
            msg = parse_bot_message(line)
        except ProtocolError as exc:
            raise self._fail(exc.reason, f"request {rid}: {exc}") from None
        if not isinstance(msg, BotAction):
            raise self._fail("invalid_message", f"expected an action for request {rid}, got a {msg.type!r}")
        if msg.id != rid:
            raise self._fail(
                "invalid_message",
                f"action id {msg.id} does not answer request {rid} (a stale or stray answer?)",
            )
        return {"type": "action", "id": rid, "action": msg.action_json()}, ms

    async def close(self) -> None:
        """Send ``bye`` (best effort), then end the process and its whole group."""
        if self.started and self.failed is None:
            with contextlib.suppress(BotClosedError):
                self.process.write(encode(bye_message()))
        await self.process.close(exit_wait_s=0.2 if self.failed is None else 0.0)
