"""The :class:`Seat` interface every seat implements (a bot process, a person, a scripted seat), and
:class:`SeatFailure`.

A seat owns the per-process counters of the protocol: :meth:`Seat.request` numbers each request with the next
``id`` of that process, :meth:`Seat.start` and :meth:`Seat.new_match` set ``match.index``.

Every failure of a seat is a :class:`SeatFailure` carrying a :class:`~referee.records.Failure`. A seat raises
those only it can see (no answer in time, a crash, an oversized line, a person who quits); the match raises
those of the content of a line, which :mod:`referee.protocol` checks (not JSON, a malformed or stray message,
an illegal action, another protocol).

A bot that writes a line nobody asked for (two answers to one request, an answer to an event) is caught when
the next answer is read: the stray line comes first, its ``id`` (or ``type``) does not answer the new request,
and the bot fails with ``invalid_message``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from referee.engine import View
from referee.errors import RefereeError
from referee.protocol import Request
from referee.records import Failure


class SeatFailure(RefereeError):
    """A seat broke the rules of the match: ``reason`` says how (a :class:`~referee.records.Failure`),
    ``detail`` what happened."""

    def __init__(self, reason: Failure, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class Seat(ABC):
    """One side of a match. The match calls :meth:`start` (or :meth:`new_match`), then :meth:`send` and
    :meth:`ask` as the game goes, and the owner calls :meth:`close` when done with the seat.

    The exchange is the base's: :meth:`start`, :meth:`new_match` and :meth:`ask` count the seat's matches, stamp
    ``match.index``, mark the seat started and record any :class:`SeatFailure` as :attr:`failed`; a seat fills in
    the hooks :meth:`_start`, :meth:`_new_match` and :meth:`_ask`. A failure a seat raises from its other methods
    goes through :meth:`fail` too, as does one the match finds in an answer it checks: :attr:`failed` is written
    only there.

    Every member the match and the replay read is declared here and set by :meth:`__init__`: ``name`` and
    ``version`` (replaced by those of the seat's ``hello``), ``command`` (what the replay header records),
    ``timed`` (whether time beyond ``move_ms`` is charged to the bank: a person has no clock), ``started``,
    ``matches`` (the matches announced to the seat's process) and ``failed`` (set when the seat forfeits; such a
    seat is not reused). The class attribute :attr:`messages` says whether the seat reads messages as dicts.
    """

    messages: ClassVar[bool] = True
    """Whether the seat reads the dict form of the events it is sent. False for a seat that only writes each
    message's encoded line (a bot process): its events come as lines only (:meth:`send_encoded`)."""

    name: str
    version: str | None
    command: str
    timed: bool
    started: bool
    matches: int
    failed: SeatFailure | None

    def __init__(self, name: str, *, command: str, timed: bool = True) -> None:
        self.name = name
        self.version = None
        self.command = command
        self.timed = timed
        self.started = False
        self.matches = 0
        self.failed = None
        self._next_request_id = 1

    def fail(self, failure: SeatFailure) -> SeatFailure:
        """Record ``failure`` as the seat's (it is not reused) and return it, to raise."""
        self.failed = failure
        return failure

    def request(self, view: View, move_ms: int, bank_ms: int) -> Request:
        """The next :class:`~referee.protocol.Request` of this seat's process (ids count from 1 over the
        process's life, across matches) for the decision of ``view``."""
        rid = self._next_request_id
        self._next_request_id = rid + 1
        return Request(rid, view, move_ms, bank_ms)

    async def start(self, hello: dict[str, Any], timeout_s: float) -> bytes:
        """Start the seat, send ``hello`` (its ``match.index`` set to the seat's first match) and return the
        answer line, which the caller checks (:func:`referee.protocol.check_hello`). Raises :class:`SeatFailure`,
        recorded."""
        self.matches += 1
        hello["match"]["index"] = self.matches
        try:
            return await self._start(hello, timeout_s)
        except SeatFailure as failure:
            raise self.fail(failure) from None

    async def new_match(self, msg: dict[str, Any]) -> None:
        """Announce another match on a started seat (``match.index`` set to its next match); no answer is read.
        Raises :class:`SeatFailure`, recorded."""
        self.matches += 1
        msg["match"]["index"] = self.matches
        try:
            await self._new_match(msg)
        except SeatFailure as failure:
            raise self.fail(failure) from None

    async def ask(
        self, request: Request, timeout_s: float, meanwhile: Callable[[], object] | None = None
    ) -> tuple[bytes, float]:
        """Send ``request`` (from :meth:`request`) and return the answer line and the milliseconds it took,
        with ``meanwhile`` called once while the seat thinks: the match's bookkeeping (the replay's lines) then
        costs no wall time. The match checks the line (:func:`referee.protocol.check_answer`). Raises
        :class:`SeatFailure`, recorded, for what only the seat can see (no answer in time, a crash)."""
        try:
            return await self._ask(request, timeout_s, meanwhile)
        except SeatFailure as failure:
            raise self.fail(failure) from None

    @abstractmethod
    async def _start(self, hello: dict[str, Any], timeout_s: float) -> bytes:
        """Start the seat (:attr:`started` from the moment it can be sent messages), send ``hello`` and return
        the answer line, within ``timeout_s``."""

    async def _new_match(self, msg: dict[str, Any]) -> None:
        """Send ``new_match``: by default as any message."""
        await self.send(msg)

    @abstractmethod
    async def _ask(
        self, request: Request, timeout_s: float, meanwhile: Callable[[], object] | None
    ) -> tuple[bytes, float]:
        """Send ``request`` and return the answer line and the milliseconds it took. A seat that is a process
        calls ``meanwhile`` once its request is written, and its time, which runs from that write to the read of
        its answer, then holds that work only where the bot answered sooner than the work took: microseconds, a
        fraction of a millisecond at a match's first request (the replay file is created then); another seat
        calls it first."""

    @abstractmethod
    async def send(self, msg: dict[str, Any]) -> None:
        """Send one message (event, error, bye) without waiting for an answer. Raises :class:`SeatFailure`
        (through :meth:`fail`)."""

    async def send_many(self, msgs: list[dict[str, Any]]) -> None:
        """Send events. A seat may hold them back until its next request or :meth:`flush` (one write each)."""
        for msg in msgs:
            await self.send(msg)

    async def send_encoded(self, msgs: list[tuple[dict[str, Any], bytes]]) -> None:
        """Send events given both as messages and as their encoded lines (shared between seats and the replay).

        Seats that write bytes use the lines; others (a human seat) use the messages."""
        await self.send_many([msg for msg, _ in msgs])

    @property
    def peak_memory(self) -> int:
        """The most resident memory (bytes) the seat's processes held together, as sampled; 0 when not
        measured (a seat that is no process, or a bot without a memory cap)."""
        return 0

    def pause(self) -> None:  # noqa: B027 - optional: only seats that are processes can be stopped
        """It is not this seat's turn: stop it until it is asked again (a bot process is frozen, unless it may
        ponder). The match calls it on the seat that just answered when the other seat is asked, and on both
        when the match ends."""

    async def flush(self) -> None:  # noqa: B027 - optional: only seats that hold messages back need it
        """Deliver any messages held back by :meth:`send_many` (the match calls it when it ends)."""

    @abstractmethod
    async def close(self) -> None:
        """Say ``bye`` (best effort) and release everything; for a bot, kill its whole process group."""
