"""Errors of the referee outside the engine. The CLI maps each to a one-line message and an exit code."""

from __future__ import annotations


class RefereeError(Exception):
    """Base class of the referee's own errors (the engine's are :class:`referee.engine.EngineError`)."""


class UsageError(RefereeError):
    """Bad command-line input: a missing file, a bad option value."""
