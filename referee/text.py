"""Small text helpers shared by the command-line summaries."""

from __future__ import annotations

from collections.abc import Sequence


def scores_text(scores: Sequence[int]) -> str:
    """Two scores as ``35-25``; with a negative one (points pass between players) as ``66 to -6``."""
    a, b = scores[0], scores[1]
    return f"{a}-{b}" if a >= 0 and b >= 0 else f"{a} to {b}"


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, made plural unless ``n`` is 1: ``1 round``, ``6 rounds``, ``0 pairs``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
