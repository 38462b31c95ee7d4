"""The handshake, as every user of a seat performs it: the match, the RL opponent and the tournament's preflight.

:func:`open_seat` starts a seat with ``hello`` and checks the bot's answer (the seat then has the bot's name and
version), or tells a seat that is already running about its next match (``new_match``, no answer). Any fault is a
:class:`~referee.seats.base.SeatFailure`, also recorded as the seat's :attr:`~referee.seats.base.Seat.failed`
(by the seat, or through its :meth:`~referee.seats.base.Seat.fail` for a bad hello).
"""

from __future__ import annotations

from referee.engine import Rules
from referee.protocol import ProtocolError, check_hello, hello_message, new_match_message, quote_line
from referee.records import Failure, TimeControl
from referee.seats.base import Seat, SeatFailure
from referee.seats.bot import BotSeat

__all__ = ["bad_hello", "open_seat"]


async def open_seat(
    seat: Seat, seat_index: int, rules: Rules, match_id: str, time: TimeControl, *, index: int = 1
) -> None:
    """Start ``seat`` (engine seat ``seat_index``) with ``hello`` and check the answer within the start-up time of
    ``time``, or send ``new_match`` (the seat's ``index``-th match) to a started seat. :class:`SeatFailure` on any
    fault: a first line that is not a hello quotes the lines after it, and a bot that exited then is a crash."""
    if seat.started:
        await seat.new_match(new_match_message(seat_index, rules, match_id, time, index=index))
        return
    line = await seat.start(hello_message(seat_index, rules, match_id, time), time.startup_ms / 1000.0)
    try:
        hello = check_hello(line)
    except ProtocolError as exc:
        raise seat.fail(await bad_hello(seat, exc)) from None
    seat.name, seat.version = hello.name, hello.version


async def bad_hello(seat: Seat, exc: ProtocolError) -> SeatFailure:
    """The failure of a seat whose first line is not a hello: the lines that followed it are quoted too, and a
    bot that exited then is a ``crash`` (a runtime that failed to start, and said so on stdout)."""
    if not isinstance(seat, BotSeat):
        return SeatFailure(exc.reason, str(exc))
    lines, ended = await seat.trailing_lines()
    detail = str(exc)
    if lines:
        detail += "; then: " + " ".join(quote_line(x) for x in lines)
    if ended is not None:
        return SeatFailure(Failure.CRASH, f"{ended} before its hello; {detail}")
    return SeatFailure(exc.reason, detail)
