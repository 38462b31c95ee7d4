"""koikoi-referee: a headless referee for Hanafuda Koi-Koi bots."""

__version__ = "0.1.0"
