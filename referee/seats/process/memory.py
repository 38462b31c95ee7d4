"""The memory watch: one timer per event loop checks the memory of every bot of that loop that has a limit.

A bot's cgroup bounds its memory where cgroups work, and the watch then only notices the kernel's kills (the
whole bot forfeits, not only the process killed); elsewhere RLIMIT_AS bounds each process alone, and the watch
kills a bot whose processes together hold more than its limit. The check itself is the bot's
(:meth:`Watched.check_memory`); this module only schedules it, inline on the loop (a few small ``/proc`` files:
cheaper than a thread hop per bot and tick).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Protocol

MEMORY_WATCH_S = 0.05
"""How often the resident memory of a bot's processes together is checked against its memory limit (one timer
per event loop checks every bot)."""


class Watched(Protocol):
    """A bot process whose memory is watched."""

    def check_memory(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Kill the bot if it went over its memory limit; False once it needs no more watching."""


_memory_watched: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[Watched]] = weakref.WeakKeyDictionary()


def watch(loop: asyncio.AbstractEventLoop, bot: Watched) -> None:
    """Check ``bot``'s memory every :data:`MEMORY_WATCH_S` on ``loop``: one timer for every bot of the loop,
    checked inline (no thread hop per bot and tick)."""
    bots = _memory_watched.get(loop)
    if bots is None:
        bots = _memory_watched[loop] = set()
        loop.call_later(MEMORY_WATCH_S, _tick, loop)
    bots.add(bot)


def unwatch(bot: Watched) -> None:
    """Stop watching ``bot`` (it is closed)."""
    for bots in list(_memory_watched.values()):
        bots.discard(bot)


def _tick(loop: asyncio.AbstractEventLoop) -> None:
    bots = _memory_watched.get(loop, set())
    for bot in list(bots):
        if not bot.check_memory(loop):
            bots.discard(bot)
    if bots and not loop.is_closed():
        loop.call_later(MEMORY_WATCH_S, _tick, loop)
    else:
        _memory_watched.pop(loop, None)
