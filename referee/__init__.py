"""koikoi-referee: a headless referee for Hanafuda Koi-Koi bots."""

__version__ = "0.1.0"

PROTOCOL = "koikoi/1"
"""The wire protocol the referee speaks (PROTOCOL.md): the ``protocol`` of every ``hello``, both ways."""
