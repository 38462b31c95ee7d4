"""The preflight: every bot started once, to its ``hello``, before the first match (the local backend here,
the Ray backend on every node).

A misspelled script after an interpreter (``python3 nofile.py``) passes the command check (``python3`` exists)
and would otherwise make every one of the bot's matches a ``crash`` forfeit. The preflight finds it before any
match is played; the organiser may still let broken entrants play and forfeit (``--forfeit-broken``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from referee.errors import RefereeError
from referee.seats import BotSeat
from referee.seats.exchange import open_seat
from referee.seats.process import ProcessError, check_command
from referee.tournament.config import TournamentConfig
from referee.tournament.runner import bot_limits

MIN_S = 10.0
"""The least time a bot gets to answer ``hello`` in the preflight (its start-up time control if longer)."""


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (its type's name when it has none)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


async def _hello_s(config: TournamentConfig, name: str) -> float:
    """Start bot ``name`` once and wait for its ``hello`` (at least :data:`MIN_S`): the seconds it took."""
    limit = max(MIN_S, config.time_of(name).startup_ms / 1000.0)
    command = config.command_of(name)
    seat: BotSeat | None = None
    try:
        check_command(command, python=config.settings_of(name).python)
        seat = BotSeat(command, label=name, limits=bot_limits(config, name))
        time = config.time_of(name)
        t0 = asyncio.get_running_loop().time()
        await open_seat(seat, 0, config.rules, "preflight", dataclasses.replace(time, startup_ms=round(limit * 1000)))
        return asyncio.get_running_loop().time() - t0
    finally:
        if seat is not None:
            await seat.close()


async def check_bot(config: TournamentConfig, name: str) -> str | None:
    """Start bot ``name`` with its own command, limits and start-up time, and wait for its ``hello``: None, or
    what failed in one line (``bot 'NAME' does not start and answer hello: ...``). A first start may take longer
    than the bot's start-up time (caches are cold): a bot that is over it twice in a row would forfeit every
    match, and fails too."""
    allowed = config.time_of(name).startup_ms / 1000.0
    try:
        took = await _hello_s(config, name)
        if took > allowed:
            took = min(took, await _hello_s(config, name))
    except (ProcessError, RefereeError, OSError) as exc:
        return f"bot {name!r} does not start and answer hello: {first_line(exc)}"
    if took > allowed:
        return (f"bot {name!r} took {took:.1f} s to answer hello (the faster of two starts), more than its "
                f"start-up time of {allowed:g} s: every match would be its forfeit (raise --startup-ms)")  # fmt: skip
    return None


async def check_all(
    config: TournamentConfig, first_only: bool = False, names: Sequence[str] | None = None
) -> list[str]:
    """:func:`check_bot` of every bot of ``config`` (or of ``names``), one after another: one line per bot that
    failed (with ``first_only``, the first failure ends the check)."""
    found: list[str] = []
    for name in names if names is not None else [b.name for b in config.bots]:
        failure = await check_bot(config, name)
        if failure is not None:
            found.append(failure)
            if first_only:
                break
    return found


def check_bots(config: TournamentConfig, names: Sequence[str] | None = None) -> list[str]:
    """:func:`check_all` on an event loop of its own: one line per bot that failed (empty: every bot
    answered)."""
    loop = asyncio.new_event_loop()  # not asyncio.run: it would leave its own Ctrl-C handling behind
    try:
        return loop.run_until_complete(check_all(config, names=names))
    finally:
        loop.close()
