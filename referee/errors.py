"""Errors of the referee outside the engine. The CLI maps each to a one-line message and an exit code."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Self


class RefereeError(Exception):
    """Base class of the referee's own errors (the engine's are :class:`referee.engine.EngineError`).

    An error about one setting (made with :meth:`about`) keeps its name in :attr:`setting` and its message as a
    template: ``str(error)`` names the setting as the library knows it (``memory_mb``), :meth:`naming` as a
    caller does (the command line: ``--bot-memory-mb``)."""

    setting: str | None = None
    """The setting the error is about (a field or key name), or None."""
    _template: str | None = None

    @classmethod
    def about(cls, setting: str, template: str) -> Self:
        """An error about ``setting``: ``template`` with a ``{}`` (its first) where the setting is named."""
        error = cls(template.replace("{}", setting, 1))
        error.setting, error._template = setting, template
        return error

    def naming(self, names: Mapping[str, str]) -> str:
        """The message with its setting named as ``names`` has it (unchanged for a setting not in ``names``)."""
        if self.setting is None or self._template is None or self.setting not in names:
            return str(self)
        return self._template.replace("{}", names[self.setting], 1)


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
