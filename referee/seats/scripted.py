"""A seat in memory, for tests: :class:`ScriptedSeat` plays from a script or a policy, no process involved.

The pattern of python-chess's ``MockTransport``: the test says which messages the seat expects and what it
answers, the match runs against it as against a bot, and the test checks what the seat was sent. Answers go
through the same checks as a bot's lines (:mod:`referee.protocol`), so a scripted seat can also send a line
that is not JSON, a malformed action, a stray answer or an illegal move::

    seat = ScriptedSeat("alice", policy=first_legal)
    seat.expect({"type": "request", "decision": "play"}, b'{"type":"action","id":1,"action":{"koikoi":true}}')
    result = run_match((lambda c, i: seat, "bots/greedy_bot.py"), config)
    assert result.forfeit.reason is Failure.ILLEGAL_ACTION
    seat.assert_done()

An answer is the raw line (``bytes`` or ``str``, sent as is), a whole message (a ``dict`` with a ``type``), an
action object (any other ``dict``, wrapped into the ``action`` answering the request), or a :class:`SeatFailure`
to raise (a timeout or a crash, as a bot process would). A ``(answer, ms)`` pair also sets the time the answer
took (default :attr:`ScriptedSeat.ms`), so bank arithmetic is exact.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from referee.protocol import Request, action_answer, bye_message, encode, hello_answer
from referee.records import Failure
from referee.seats.base import Seat, SeatFailure

Answer = bytes | str | dict[str, Any] | SeatFailure
"""What a scripted seat answers (see the module documentation)."""

Policy = Callable[[dict[str, Any]], Answer | tuple[Answer, float]]
"""Answers a request (the message as the seat got it) when no scripted step is due."""


def first_legal(request: dict[str, Any]) -> Answer:
    """A :data:`Policy`: the first legal action."""
    action: dict[str, Any] = request["legal"][0]
    return action


def last_legal(request: dict[str, Any]) -> Answer:
    """A :data:`Policy`: the last legal action (koi-koi rather than stop)."""
    action: dict[str, Any] = request["legal"][-1]
    return action


@dataclass
class _Step:
    expected: dict[str, Any]
    answer: Answer | None
    ms: float | None


def _matches(msg: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    return all(k in msg and msg[k] == v for k, v in expected.items())


class ScriptedSeat(Seat):
    """A seat that answers from :meth:`expect` steps, then from ``policy``, and records every message it gets.

    ``received`` holds each message sent to the seat (as a dict, with the ``id`` and ``match.index`` the seat
    set), ``lines`` the same messages encoded as a bot would read them. A message that does not match the next
    expected step raises ``AssertionError`` out of the match: a test fails loudly, never a forfeit.
    """

    def __init__(
        self,
        name: str = "scripted",
        *,
        policy: Policy | None = None,
        hello: Answer | None = None,
        ms: float = 1.0,
        timed: bool = True,
        command: str = "scripted",
    ) -> None:
        super().__init__(name, command=command, timed=timed)
        self.policy = policy
        self.hello_answer: Answer = hello if hello is not None else hello_answer(name)
        self.ms = ms
        self.received: list[dict[str, Any]] = []
        self.lines: list[bytes] = []
        self.closed = False
        self._steps: deque[_Step] = deque()

    # --- the script ---------------------------------------------------------------------------------------

    def expect(self, expected: Mapping[str, Any], answer: Answer | None = None, *, ms: float | None = None) -> None:
        """The next message that needs an answer (``hello`` or ``request``) must hold the fields of
        ``expected``; answer it with ``answer`` (default: the hello answer, or the policy's)."""
        self._steps.append(_Step(dict(expected), answer, ms))

    def assert_done(self) -> None:
        """Every expected step was met."""
        assert not self._steps, f"{self.name}: expected steps never met: {[s.expected for s in self._steps]}"

    # --- the Seat interface -------------------------------------------------------------------------------

    def _record(self, msg: dict[str, Any]) -> None:
        self.received.append(json.loads(encode(msg)))  # a copy, as a bot would parse it
        self.lines.append(encode(msg))

    def _reply(self, msg: dict[str, Any], default: Answer | None) -> tuple[bytes, float]:
        step = self._steps.popleft() if self._steps else None
        if step is not None and not _matches(msg, step.expected):
            raise AssertionError(f"{self.name}: expected a message with {step.expected}, got {msg}")
        answer: Answer | None = step.answer if step is not None else None
        ms = step.ms if step is not None and step.ms is not None else self.ms
        if answer is None:
            answer = default
        if answer is None and self.policy is not None:
            got = self.policy(msg)
            answer, ms = got if isinstance(got, tuple) else (got, ms)
        if answer is None:
            raise AssertionError(f"{self.name}: no scripted answer and no policy for {msg}")
        if isinstance(answer, SeatFailure):
            raise answer  # recorded by the exchange
        if isinstance(answer, str):
            return answer.encode(), ms
        if isinstance(answer, bytes):
            return answer, ms
        if "type" not in answer:
            answer = action_answer(msg["id"], answer)
        return encode(answer), ms

    async def _start(self, hello: dict[str, Any], timeout_s: float) -> bytes:
        """Record ``hello`` and give the scripted answer (by default a ``hello`` with the seat's name)."""
        self.started = True
        self._record(hello)
        line, _ = self._reply(hello, self.hello_answer)
        return line

    async def send(self, msg: dict[str, Any]) -> None:
        """Record one message."""
        self._record(msg)

    async def _ask(
        self, request: Request, timeout_s: float, meanwhile: Callable[[], object] | None
    ) -> tuple[bytes, float]:
        """Record ``request`` (as its message) and give the scripted or the policy's answer; an answer that
        would take longer than ``timeout_s`` is a timeout, as for a bot."""
        if meanwhile is not None:
            meanwhile()
        rid = request.id
        msg = request.message()
        self._record(msg)
        line, ms = self._reply(msg, None)
        if ms > timeout_s * 1000.0:
            raise SeatFailure(Failure.TIMEOUT, f"no answer to request {rid} within {timeout_s * 1000:.0f} ms")
        return line, ms

    async def close(self) -> None:
        """Record ``bye`` unless the seat failed (as a bot seat sends it)."""
        if self.started and self.failed is None and not self.closed:
            self._record(bye_message())
        self.closed = True
