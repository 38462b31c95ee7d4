"""A Python function as a seat: :class:`FunctionSeat` plays ``choose(request) -> action`` in the referee's own
process, the contract of :func:`referee.bot.run` (so the same function can later run as a bot program).

``choose`` gets each ``request`` message as a bot would read it (a dict, see PROTOCOL.md) and returns one element
of ``request["legal"]``; an optional ``observe`` sees every other message (``hello``, ``new_match``, ``event``).
As in :func:`referee.bot.answer`, an exception or an answer that is not legal plays the first legal action (the
problem goes to ``stderr``), so the seat never forfeits for it. The time a call takes is measured and charged
like a bot's; a call cannot be interrupted, so a slow one forfeits on a timeout only once it returns.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from referee.bot import Chooser, Observer, answer
from referee.protocol import Request, encode, hello_answer
from referee.seats.base import Seat


class FunctionSeat(Seat):
    """A seat played by ``choose(request) -> action`` (see the module documentation)."""

    def __init__(
        self,
        choose: Chooser,
        name: str | None = None,
        *,
        observe: Observer | None = None,
        stderr: IO[str] | None = None,
    ) -> None:
        label = name or str(getattr(choose, "__name__", "function"))
        super().__init__(label[:64], command=f"python:{label}"[:200])
        self.choose = choose
        self.observe = observe
        self.stderr = stderr

    def _see(self, msg: dict[str, Any]) -> None:
        if self.observe is not None:
            self.observe(json.loads(encode(msg)))  # a copy, as a bot would parse it

    async def _start(self, hello: dict[str, Any], timeout_s: float) -> bytes:
        """Answer ``hello`` with the seat's name."""
        self.started = True
        self._see(hello)
        return encode(hello_answer(self.name))

    async def send(self, msg: dict[str, Any]) -> None:
        """Show one message to the observer."""
        self._see(msg)

    async def _ask(
        self, request: Request, timeout_s: float, meanwhile: Callable[[], object] | None
    ) -> tuple[bytes, float]:
        """Call ``choose`` on the request message and return its answer line and the time taken."""
        if meanwhile is not None:
            meanwhile()
        copy = json.loads(encode(request))  # the message as a bot would parse it
        t0 = time.perf_counter()
        line = encode(answer(copy, self.choose, self.stderr or sys.stderr))
        return line, (time.perf_counter() - t0) * 1000.0

    async def close(self) -> None:
        """Nothing to release."""
