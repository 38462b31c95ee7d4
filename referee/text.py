"""Small text helpers shared by the command-line summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def scores_text(scores: Sequence[int]) -> str:
    """Two scores as ``35-25``; with a negative one (points pass between players) as ``66 to -6``."""
    a, b = scores[0], scores[1]
    return f"{a}-{b}" if a >= 0 and b >= 0 else f"{a} to {b}"


SEATS = (("seat 1", 0), ("seat 2", 1))
"""How :func:`yaku_text` names the seats' koi-koi calls, and in which order."""


def yaku_text(round_end: Mapping[str, Any], seats: Sequence[tuple[str, int]] = SEATS, *, spaced: bool = False) -> str:
    """The yaku of a ``round_end`` (``chaff 3, animals 1``), and when the round scored more than their sum, how:
    ``chaff 3; 3 made 6 by the koi-koi and doubling rules (koi-koi calls: seat 1 1, seat 2 0)``. ``seats``: each
    seat's name and index, in the order told (a person's terminal: you first); ``spaced``: yaku names with blanks
    for underscores."""
    found = round_end.get("yaku") or []
    yaku = ", ".join(f"{y['name'].replace('_', ' ') if spaced else y['name']} {y['points']}" for y in found)
    base = sum(int(y["points"]) for y in found)
    calls = round_end.get("koikoi_calls") or [0, 0]
    if yaku and base != round_end.get("points"):
        told = ", ".join(f"{name} {calls[i]}" for name, i in seats)
        yaku += f"; {base} made {round_end.get('points')} by the koi-koi and doubling rules (koi-koi calls: {told})"
    return yaku


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, made plural unless ``n`` is 1: ``1 round``, ``6 rounds``, ``0 pairs``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
