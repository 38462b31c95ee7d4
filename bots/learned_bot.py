#!/usr/bin/env python3
"""A koikoi/1 bot that plays the card play learned from the search bot's own choices, with the greedy bot's koi-koi
rule: no search, a weighted sum of a few features of each legal action.

Run: ``python3 bots/learned_bot.py [--weights FILE] [--name NAME]``. It needs the ``referee`` package (it reads
the features and the shipped weights of :class:`referee.engine.policies.Learned`), so it runs with the Python of
the environment where ``koikoi-referee`` is installed, as ``bots/search_bot.py`` does.

The policy (:func:`chooser`) reads only its request: each play or capture choice is scored by the weighted sum of
its :data:`referee.engine.policies.FEATURES` (greedy's value of it, the cards it takes, the sets it completes or
brings nearer, what it keeps from the opponent, what it leaves on the field for the opponent...), computed from
the view's hand, field, both capture piles, the drawn card and the opponent's koi-koi calls; the best is played
(the first of equals, as the engine's :class:`~referee.engine.policies.Learned` does). It calls koi-koi as the
greedy bot does: early, under 7 points, against an opponent with no yaku and little captured, and never to risk a
lead in the last round. The weights default to the package's (``referee/engine/play_weights.json``, fitted by
``benchmarks/learn_play.py``); ``--weights`` plays another fit of the same features.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

try:
    import referee  # noqa: F401
except ImportError:  # run from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.bot import run
from referee.engine.cards import card
from referee.engine.policies import WEIGHTS_FILE, Decision, Learned, action_features, load_learned

Request = dict[str, Any]
"""One decoded ``request`` line."""
BRIGHTS = frozenset(("pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix"))


def mask(ids: Iterable[str]) -> int:
    """The engine's card mask of some card ids."""
    m = 0
    for cid in ids:
        m |= 1 << card(cid)
    return m


def scores(play: Learned, request: Request) -> list[float]:
    """``play``'s score of each legal play or capture choice of ``request``, in the order of ``legal``."""
    view = request["view"]
    me = view["seat"] - 1
    pending = card(view["drawn"]) if request["decision"] == "capture" else -1
    hand, field = mask(view["hand"]), mask(view["field"])
    mine, theirs = mask(view["captured"][me]), mask(view["captured"][1 - me])
    x = Decision(hand, field, mine, theirs, pending, view["koikoi_calls"][1 - me])
    out = []
    for action in request["legal"]:
        c = pending if pending >= 0 else card(action["play"])
        t = card(action["capture"]) if "capture" in action else -1
        out.append(play.weigh(action_features(x, c, t)))
    return out


def koikoi(view: dict[str, Any]) -> bool:
    """The greedy bot's rule: koi-koi with five cards or more in hand and under 7 points, while the opponent has no
    yaku, fewer than two brights and fewer than ten cards; never when ahead in the last round."""
    me = view["seat"] - 1
    theirs = view["captured"][1 - me]
    if view["round"] >= view["rounds"] and view["scores"][me] > view["scores"][1 - me]:
        return False
    quiet = view["yaku"][1 - me]["total"] == 0 and len(theirs) < 10 and len(BRIGHTS.intersection(theirs)) < 2
    return quiet and len(view["hand"]) >= 5 and view["yaku"][me]["total"] < 7


def chooser(play: Learned) -> Callable[[Request], dict[str, Any]]:
    """The ``choose(request)`` of the bot with the learned play ``play``."""

    def choose(request: Request) -> dict[str, Any]:
        legal: list[dict[str, Any]] = request["legal"]
        if request["decision"] == "koikoi":
            want = koikoi(request["view"])
            return next((a for a in legal if a.get("koikoi") is want), legal[0])
        best, best_v = legal[0], -1e300
        for a, v in zip(legal, scores(play, request), strict=True):
            if v > best_v:
                best, best_v = a, v
        return best

    return choose


def main(argv: list[str] | None = None) -> int:
    """Answer the referee until ``bye`` or the end of stdin."""
    parser = argparse.ArgumentParser(description="A koikoi/1 bot that plays the card play learned from the search "
                                     "bot's choices, with the greedy bot's koi-koi rule.")  # fmt: skip
    parser.add_argument("--weights", default=WEIGHTS_FILE, metavar="FILE",
                        help="the learned play's weights (default: the package's, referee/engine/play_weights.json)")
    parser.add_argument("--name", default="learned", help="the name sent in hello (default learned)")
    args = parser.parse_args(argv)
    try:
        play = load_learned(args.weights)
    except (OSError, ValueError) as exc:
        parser.error(f"--weights: {exc}")
    return run(chooser(play), name=args.name, version="1.0")


if __name__ == "__main__":
    sys.exit(main())
