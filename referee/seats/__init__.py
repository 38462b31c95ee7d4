"""Who sits at the table: the :class:`Seat` interface (:mod:`referee.seats.base`), a bot program as a process
(:mod:`referee.seats.bot` over :mod:`referee.seats.process`), and the human in the terminal
(:mod:`referee.seats.human`, imported on demand)."""

from __future__ import annotations

from referee.seats.base import Seat, SeatFailure
from referee.seats.bot import BotSeat, default_name

__all__ = ["BotSeat", "Seat", "SeatFailure", "default_name"]
