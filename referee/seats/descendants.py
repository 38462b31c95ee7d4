"""The old home of :mod:`referee.seats.process.family`, kept only for the importers under ``referee/tournament/``
until they import from :mod:`referee.seats.process`; nothing else may import it."""

from __future__ import annotations

from referee.seats.process.family import adopt_orphans

__all__ = ["adopt_orphans"]
