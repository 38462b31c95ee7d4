"""The other seat of the single-agent environment: a policy on observations, or a bot program over ``koikoi/1``.

An :class:`Opponent` is told each match's start and every event, and asked for an action when its decision is
due. :class:`PolicyOpponent` calls ``policy(observation, action_mask)`` (a built-in of
:mod:`referee.rl.policies`, or a trained policy); :class:`BotOpponent` runs any bot command as a
:class:`~referee.seats.BotSeat`, in an event loop of its own, and speaks the protocol to it exactly as a match
does: what it sees is built by :mod:`referee.protocol` from ``observe`` and ``visible_event``.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import numpy as np

from referee.engine import Action, Event, MatchEnd, Rules
from referee.errors import RefereeError
from referee.protocol import ProtocolError, check_answer, encode, event_message
from referee.records import TimeControl
from referee.rl.observation import action_mask
from referee.rl.observation import encode as encode_view
from referee.rl.policies import Policy, random_policy
from referee.rl.table import Table
from referee.seats import BotSeat, SeatFailure
from referee.seats.exchange import open_seat
from referee.seats.settings import BotSettings

_T = TypeVar("_T")


class OpponentError(RefereeError):
    """The opponent could not play: a bot that failed (with the failure's reason) or a policy's illegal action."""


class Opponent(ABC):
    """One seat of the table, played by something other than the learning agent."""

    name = "opponent"

    def start(self, rules: Rules, seat: int, match_id: str, rng: np.random.Generator) -> None:  # noqa: B027
        """A match begins with this opponent in engine seat ``seat`` (0 or 1); ``rng`` is the environment's."""

    def tell(self, events: Sequence[Event], seat: int) -> None:  # noqa: B027
        """The events of one step (full information: filter them for ``seat`` before showing them)."""

    @abstractmethod
    def act(self, table: Table, seat: int) -> Action:
        """The action of ``seat``, whose decision is due; only ``table.view(seat)`` may be read."""

    def close(self) -> None:  # noqa: B027
        """Release what the opponent holds."""


class PolicyOpponent(Opponent):
    """An opponent that plays ``policy(observation, action_mask) -> index``."""

    def __init__(self, policy: Policy, name: str = "policy") -> None:
        self.policy = policy
        self.name = name

    def act(self, table: Table, seat: int) -> Action:
        """The policy's action on the seat's observation."""
        view = table.view(seat)
        mask = action_mask(view.legal)
        index = self.policy(encode_view(view), mask)
        try:
            return table.action(index)
        except ValueError as exc:
            raise OpponentError(f"the opponent policy {self.name} chose an illegal action: {exc}") from None


class RandomOpponent(PolicyOpponent):
    """Uniformly random legal actions, from the environment's generator (so a seeded episode repeats)."""

    def __init__(self) -> None:
        super().__init__(random_policy(np.random.default_rng(0)), "random")

    def start(self, rules: Rules, seat: int, match_id: str, rng: np.random.Generator) -> None:
        """Draw from the environment's ``rng``."""
        self.policy = random_policy(rng)


class BotOpponent(Opponent):
    """A bot program as the opponent. ``settings``: its limits, environment, readable files and interpreter (as
    for a match; each one unset takes its default, but memory is not limited unless set: a learning opponent
    may load a model), ``sandbox`` the sandbox it runs in; ``time``: its start-up
    time and, per decision, ``move_ms + bank_ms`` (no bank is spent: a slow answer is only a timeout when it
    passes that). The process is reused from match to match (``new_match``) until it fails or a match is left
    unfinished (an episode ended by an illegal action); :meth:`close` ends it (a later match starts another)."""

    def __init__(
        self, command: str, *, settings: BotSettings | None = None, sandbox: str = "auto",
        time: TimeControl | None = None,
    ) -> None:  # fmt: skip
        self.command = command
        self.limits = (settings or BotSettings()).over(BotSettings(memory_mb=0)).limits(sandbox=sandbox)
        self.time = time or TimeControl(startup_ms=30_000, move_ms=10_000, bank_ms=60_000)
        self.name = command
        self._loop = asyncio.new_event_loop()
        self._seat: BotSeat | None = None
        self._playing = False  # a match is under way (a new one before its end needs a fresh process)

    def _run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if self._loop.is_closed():  # closed, then used again (a reset after close): a loop and a process anew
            self._loop = asyncio.new_event_loop()
        try:
            return self._loop.run_until_complete(coro)
        except SeatFailure as failure:
            raise OpponentError(f"the opponent bot failed: {failure.reason}: {failure.detail}") from None

    def start(self, rules: Rules, seat: int, match_id: str, rng: np.random.Generator) -> None:
        """Start the bot (``hello``), or tell the running one ``new_match``."""
        bot = self._seat
        if bot is not None and (bot.failed is not None or self._playing):  # a fresh process: it failed, or its
            self._run(bot.close())  # last match was left unfinished
            bot = None
        if bot is None:
            bot = self._seat = BotSeat(self.command, label="opponent", limits=self.limits)
        self._run(open_seat(bot, seat, rules, match_id, self.time, index=bot.matches + 1))
        self.name = bot.name
        self._playing = True

    def _bot(self) -> BotSeat:
        if self._seat is None:
            raise OpponentError("the opponent bot was not started")
        return self._seat

    def tell(self, events: Sequence[Event], seat: int) -> None:
        """Send the events as the bot's seat sees them (held back until its next request or the match's end)."""
        bot = self._bot()
        msgs = [event_message(e, seat) for e in events]
        self._run(bot.send_encoded([(m, encode(m)) for m in msgs]))
        if events and isinstance(events[-1], MatchEnd):
            self._run(bot.flush())
            self._playing = False

    def act(self, table: Table, seat: int) -> Action:
        """Ask the bot; its answer is checked as in a match."""
        bot = self._bot()
        view = table.view(seat)
        tc = self.time
        request = bot.request(view, tc.move_ms, tc.bank_ms)
        line, _ = self._run(bot.ask(request, (tc.move_ms + tc.bank_ms) / 1000))
        try:
            index = check_answer(line, request)
        except ProtocolError as exc:
            bot.fail(SeatFailure(exc.reason, str(exc)))
            raise OpponentError(f"the opponent bot failed: {exc.reason}: {exc}") from None
        return view.legal[index]

    def close(self) -> None:
        """Say ``bye`` and end the bot's process group; close the event loop."""
        if self._loop.is_closed():
            return
        try:
            if self._seat is not None:
                self._loop.run_until_complete(self._seat.close())
        finally:
            self._seat = None
            self._loop.close()
