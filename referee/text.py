"""Small text helpers shared by the command-line summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def scores_text(scores: Sequence[int]) -> str:
    """Two scores as ``35-25``; with a negative one (points pass between players) as ``66 to -6``."""
    a, b = scores[0], scores[1]
    return f"{a}-{b}" if a >= 0 and b >= 0 else f"{a} to {b}"


def yaku_text(round_end: Mapping[str, Any]) -> str:
    """The yaku of a ``round_end`` (``chaff 3, animals 1``), and when the round scored more than their sum, how:
    ``chaff 3; 3 made 6 by the koi-koi and doubling rules (koi-koi calls: seat 1 1, seat 2 0)``."""
    yaku = ", ".join(f"{y['name']} {y['points']}" for y in round_end.get("yaku") or [])
    base = sum(int(y["points"]) for y in round_end.get("yaku") or [])
    calls = round_end.get("koikoi_calls") or [0, 0]
    if yaku and base != round_end.get("points"):
        yaku += (f"; {base} made {round_end.get('points')} by the koi-koi and doubling rules (koi-koi calls: seat 1 "
                 f"{calls[0]}, seat 2 {calls[1]})")  # fmt: skip
    return yaku


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, made plural unless ``n`` is 1: ``1 round``, ``6 rounds``, ``0 pairs``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
