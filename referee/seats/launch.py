"""The old home of :mod:`referee.seats.process.plan`, kept only for the importers under ``referee/tournament/``
until they import from :mod:`referee.seats.process`; nothing else may import it."""

from __future__ import annotations

from referee.seats.process.plan import (
    DEFAULT_CPUS,
    ProcessError,
    absolute_command,
    expected_isolation,
    isolation_warnings,
)

__all__ = ["DEFAULT_CPUS", "ProcessError", "absolute_command", "expected_isolation", "isolation_warnings"]
