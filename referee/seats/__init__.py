"""Who sits at the table: the :class:`Seat` interface (:mod:`referee.seats.base`), a bot program as a process
(:mod:`referee.seats.bot` over :mod:`referee.seats.process`), the human in the terminal
(:mod:`referee.seats.human`, imported on demand), and a scripted seat in memory for tests
(:mod:`referee.seats.scripted`)."""

from __future__ import annotations

from referee.seats.base import Seat, SeatFailure
from referee.seats.bot import BotSeat, default_name

__all__ = ["BotSeat", "Seat", "SeatFailure", "default_name"]
