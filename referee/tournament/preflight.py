"""The preflight of the local backend: every bot started once, to its ``hello``, before the first match.

A misspelled script after an interpreter (``python3 nofile.py``) passes the command check (``python3`` exists)
and would otherwise make every one of the bot's matches a ``crash`` forfeit. The preflight finds it before any
match is played; the organiser may still let broken entrants play and forfeit (``--forfeit-broken``).
"""

from __future__ import annotations

import asyncio

from referee.errors import RefereeError
from referee.protocol import check_hello, hello_message
from referee.seats import BotSeat
from referee.seats.process import ProcessError
from referee.tournament.config import TournamentConfig
from referee.tournament.runner import bot_limits

MIN_S = 10.0
"""The least time a bot gets to answer ``hello`` in the preflight (its start-up time control if longer)."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def _check(config: TournamentConfig, name: str) -> str | None:
    """Start bot ``name`` with its own limits and wait for its ``hello``: None, or what failed in one line."""
    limit = max(MIN_S, config.time_of(name).startup_ms / 1000.0)
    seat: BotSeat | None = None
    try:
        seat = BotSeat(config.command_of(name), label=name, limits=bot_limits(config, name))
        check_hello(await seat.start(hello_message(0, config.rules, "preflight", config.time_of(name)), limit))
    except (ProcessError, RefereeError, OSError) as exc:
        return f"bot {name!r} does not start and answer hello: {_first_line(exc)}"
    finally:
        if seat is not None:
            await seat.close()
    return None


def check_bots(config: TournamentConfig) -> list[str]:
    """Start every bot of ``config`` here, one after another, each to its ``hello``; one line per bot that
    failed (empty: every bot answered)."""

    async def _all() -> list[str]:
        found = [await _check(config, b.name) for b in config.bots]
        return [f for f in found if f is not None]

    loop = asyncio.new_event_loop()  # not asyncio.run: it would leave its own Ctrl-C handling behind
    try:
        return loop.run_until_complete(_all())
    finally:
        loop.close()
