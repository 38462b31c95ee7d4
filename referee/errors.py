"""Errors of the referee outside the engine. The CLI maps each to a one-line message and an exit code."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Self


class RefereeError(Exception):
    """Base class of the referee's own errors (the engine's are :class:`referee.engine.EngineError`).

    An error about settings (made with :meth:`about`) keeps their names in :attr:`settings` and its message as a
    template: ``str(error)`` names each setting as the library knows it (``memory_mb``), :meth:`naming` as a
    caller does (the command line: ``--bot-memory-mb``)."""

    settings: tuple[str, ...] = ()
    """The settings the error is about (field or key names), in the order the message names them."""
    _template: str = ""

    @classmethod
    def about(cls, settings: str | tuple[str, ...], template: str) -> Self:
        """An error about ``settings`` (one name or several): ``template`` with a ``{}`` where each is named, the
        first ``{}`` the first setting and so on."""
        names = (settings,) if isinstance(settings, str) else settings
        error = cls(_fill(template, names))
        error.settings, error._template = names, template
        return error

    def naming(self, names: Mapping[str, str]) -> str:
        """The message with its settings named as ``names`` has them (a setting not in ``names`` keeps its own
        name)."""
        if not self.settings:
            return str(self)
        return _fill(self._template, tuple(names.get(s, s) for s in self.settings))


def _fill(template: str, names: tuple[str, ...]) -> str:
    """``template`` with its first ``{}`` replaced by ``names[0]``, the next by ``names[1]``..."""
    parts = template.split("{}", len(names))
    return parts[0] + "".join(name + part for name, part in zip(names, parts[1:], strict=False))


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
