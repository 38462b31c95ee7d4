#!/usr/bin/env python3
"""A koikoi/1 bot with a simple heuristic, written with the bot helper (:func:`referee.bot.run` speaks the
protocol; ``bots/minimal_bot.py`` is the standalone example of the protocol itself).

Run: ``python3 bots/greedy_bot.py [--name NAME]``. It reads one JSON object per line on stdin, writes one
per line on stdout (flushed), and logs to stderr.

The policy (:func:`choose`) looks only at the request: it takes the most valuable capture (brights, then
animals and ribbons, more when they build a yaku it is close to), discards its least useful card when it
cannot capture, and stops at its first yaku unless the round is young and the opponent has little.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from referee.bot import run

BRIGHTS = {"pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix"}
POETRY = {"pine-ribbon", "plum-ribbon", "cherry-ribbon"}
BLUE = {"peony-ribbon", "chrysanthemum-ribbon", "maple-ribbon"}
BOAR_DEER_BUTTERFLY = {"clover-boar", "maple-deer", "peony-butterfly"}
SAKE = "chrysanthemum-sake"
# Each group of cards that forms a yaku, and how much one more card of it is worth when some are already held.
GROUPS: list[tuple[set[str], float]] = [
    (BRIGHTS, 6.0),
    (POETRY, 5.0),
    (BLUE, 5.0),
    (BOAR_DEER_BUTTERFLY, 5.0),
    ({SAKE, "pampas-moon"}, 6.0),
    ({SAKE, "cherry-curtain"}, 6.0),
]


def month(card: str) -> str:
    """The flower (month) of a card id: the part before the first dash."""
    return card.split("-", 1)[0]


def kind(card: str) -> str:
    """bright, animal, ribbon or chaff."""
    if card in BRIGHTS:
        return "bright"
    if "ribbon" in card:
        return "ribbon"
    if "chaff" in card or card == "willow-lightning":
        return "chaff"
    return "animal"


BASE_VALUE = {"bright": 10.0, "animal": 5.0, "ribbon": 4.0, "chaff": 1.0}


def value(card: str, mine: set[str]) -> float:
    """What taking ``card`` is worth, given the cards ``mine`` already captured."""
    v = BASE_VALUE[kind(card)]
    if card == SAKE:
        v += 4.0
    for group, bonus in GROUPS:
        if card in group:
            v += bonus * len(group & mine)
    k = kind(card)
    if k != "bright":
        same = sum(1 for c in mine if kind(c) == k)
        v += 0.3 * same  # ribbons, animals and chaff score by count
    return v


def _play_value(action: dict[str, Any], view: dict[str, Any], mine: set[str]) -> float:
    card: str = action["play"]
    field: list[str] = view["field"]
    if "capture" in action:
        taken = [action["capture"]]
    else:
        taken = [c for c in field if month(c) == month(card)]
        if len(taken) == 2:  # cannot happen without "capture"; be safe
            taken = taken[:1]
    if taken:
        return 2.0 + value(card, mine) + sum(value(c, mine) for c in taken)
    # A discard: give away the least, and prefer a month the opponent cannot take at once.
    return -value(card, mine) - 0.5 * sum(1 for c in view["hand"] if month(c) == month(card) and c != card)


def _koikoi(view: dict[str, Any]) -> bool:
    me = view["seat"] - 1
    opp = 1 - me
    hand_left = len(view["hand"])
    my_points = view["yaku"][me]["total"]
    opp_yaku = view["yaku"][opp]["total"]
    opp_captured = view["captured"][opp]
    last_round = view["round"] >= view["rounds"]
    ahead = view["scores"][me] > view["scores"][opp]
    if last_round and ahead:
        return False  # take the points and keep the lead
    if hand_left < 5 or opp_yaku > 0 or my_points >= 7:
        return False
    dangerous = sum(1 for c in opp_captured if c in BRIGHTS) >= 2 or len(opp_captured) >= 10
    return not dangerous


def choose(request: dict[str, Any]) -> dict[str, Any]:
    """One element of ``request["legal"]``: the heuristic's choice."""
    legal: list[dict[str, Any]] = request["legal"]
    view: dict[str, Any] = request["view"]
    mine = set(view["captured"][view["seat"] - 1])
    decision = request["decision"]
    if decision == "koikoi":
        want = _koikoi(view)
        return next((a for a in legal if a.get("koikoi") is want), legal[0])
    if decision == "capture":
        return max(legal, key=lambda a: value(a["capture"], mine))
    return max(legal, key=lambda a: _play_value(a, view, mine))


def main(argv: list[str] | None = None) -> int:
    """Answer the referee until ``bye`` or the end of stdin."""
    parser = argparse.ArgumentParser(description="A koikoi/1 bot with a greedy capture heuristic.")
    parser.add_argument("--name", default="greedy", help="the name sent in hello")
    args = parser.parse_args(argv)
    return run(choose, name=args.name, version="1.0")


if __name__ == "__main__":
    sys.exit(main())
