"""The engine's error family: every failure the engine raises is one of these."""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error raised by ``referee.engine``."""


class UnknownCardError(EngineError, ValueError):
    """A card id that is not one of the 48 canonical ids."""


class RulesError(EngineError, ValueError):
    """A rules file or rules override that is malformed, names an unknown field or holds an impossible value."""


class IllegalActionError(EngineError, ValueError):
    """An action that is not legal in the given state; the state is left unchanged."""


class DealError(EngineError, ValueError):
    """An explicit deal that is not a partition of the 48 cards into two hands of 8, a field of 8 and a stock of 24."""
