"""Errors of the referee outside the engine. The CLI maps each to a one-line message and an exit code."""

from __future__ import annotations

from pathlib import Path


class RefereeError(Exception):
    """Base class of the referee's own errors (the engine's are :class:`referee.engine.EngineError`)."""


class UsageError(RefereeError):
    """Bad command-line input: a missing file, a bad option value."""


class OutputError(RefereeError):
    """The output cannot be written during a run (a full disk, a file grown over its limit, a folder made
    read-only): the run stops with exit 2 and can be resumed."""


class Interrupted(RefereeError):
    """The referee was told to stop (Ctrl-C or SIGTERM) and stopped every bot. ``code``: the exit status (130
    Ctrl-C, 143 SIGTERM); ``where``: the tournament folder to resume (None: nothing to resume)."""

    def __init__(self, message: str, *, code: int = 130, where: Path | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.where = where

    @staticmethod
    def resumable(where: Path | None) -> Interrupted:
        """A stopped tournament, to continue with ``--resume where``."""
        return Interrupted(f"interrupted; continue with: koikoi-referee tournament --resume {where}", where=where)
