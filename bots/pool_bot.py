#!/usr/bin/env python3
"""The opponent pool: small koikoi/1 bots of distinct styles, to measure the house bots against players that do
not think like them (``benchmarks/strength.py``).

Run: ``python3 bots/pool_bot.py --style STYLE [--name NAME]`` (the name defaults to the style). One file, so that it
runs in the referee's sandbox as it is; each style is a few weights and rules over one shared policy
(:class:`Style`, :func:`choose_with`). Every style reads only its request (view and legal actions) and is
deterministic given its input (ties go to the first legal action). The styles (:data:`STYLES`):

- ``aggressive``: greedy captures; calls koi-koi after every yaku while it holds two cards, unless it leads in the
  last round.
- ``stopper``: a defensive early stopper; races to the cheap counting yaku, minds what its discards give, stops at
  its first yaku.
- ``brights``: a bright and viewing collector; plays on while it holds two brights and the opponent has no yaku.
- ``ribbons``: a ribbon collector (poetry and blue most); plays on while four cards are left and the opponent has no
  yaku.
- ``denier``: plays to spoil the opponent's yaku; a capture is worth more for what it keeps from the opponent than
  for what it gives, a discard costs what the opponent could take with it.
- ``holder``: keeps its matching cards back; captures at once only a bright, an animal or a ribbon, and with only
  chaff to take it discards a card that matches nothing, saving its pairs for later.
- ``sweeper``: takes as many cards as it can, chaff as good as ribbons; plays on while its yaku is small.
- ``reacher``: plays for the yaku it can still complete; a capture is worth how much nearer it brings each yaku of
  its own and how much further it puts the opponent's, each yaku weighed by the chance to complete it from the cards
  still out of both players' piles; a discard costs what it would give the opponent, weighed by the chance that the
  opponent holds a card of its month; plays on while three cards are left and the opponent is far from a yaku. The
  strongest style of the pool against the greedy bot: about 57% under koikoi-japan, guide and nintendo, where the
  others score 40% to 55% (``benchmarks/pool.py``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from referee.bot import run
from referee.engine.cards import CARD_IDS

Request = dict[str, Any]
"""One decoded ``request`` line."""
View = dict[str, Any]
"""The request's ``view``."""

BRIGHTS = frozenset(("pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix"))
POETRY = frozenset(("pine-ribbon", "plum-ribbon", "cherry-ribbon"))
BLUE = frozenset(("peony-ribbon", "chrysanthemum-ribbon", "maple-ribbon"))
BOAR_DEER_BUTTERFLY = frozenset(("clover-boar", "maple-deer", "peony-butterfly"))
SAKE = "chrysanthemum-sake"
VIEWING = frozenset((SAKE, "pampas-moon", "cherry-curtain"))
RAINMAN = "willow-rainman"
DRY_BRIGHTS = BRIGHTS - {RAINMAN}
EVERY_CARD = frozenset(CARD_IDS)
RIBBONS = frozenset(c for c in CARD_IDS if "ribbon" in c)
CHAFF = frozenset(c for c in CARD_IDS if "chaff" in c) | {"willow-lightning", SAKE}
ANIMALS = EVERY_CARD - BRIGHTS - RIBBONS - CHAFF | {SAKE}


def month(card: str) -> str:
    """The flower (month) of a card id: the part before the first dash."""
    return card.split("-", 1)[0]


def kind(card: str) -> str:
    """``bright``, ``animal``, ``ribbon`` or ``chaff``."""
    if card in BRIGHTS:
        return "bright"
    if "ribbon" in card:
        return "ribbon"
    if "chaff" in card or card == "willow-lightning":
        return "chaff"
    return "animal"


def play_parts(action: dict[str, Any], view: View) -> tuple[frozenset[str], frozenset[str], str, list[str]]:
    """Of one ``play`` action: the cards the mover and the opponent captured, the card played, and the field cards
    it takes (none: a discard)."""
    me = view["seat"] - 1
    card: str = action["play"]
    taken = [action["capture"]] if "capture" in action else [c for c in view["field"] if month(c) == month(card)]
    return frozenset(view["captured"][me]), frozenset(view["captured"][1 - me]), card, taken


@dataclass(frozen=True)
class Style:
    """A capture-and-discard policy: the worth of cards, and of what a discard leaves the opponent.

    ``base``: worth of one card of each kind. ``groups``: (cards of a yaku, bonus per card of it already held).
    ``count``: bonus per card of the same kind already held (ribbons, animals and chaff score by count).
    ``spite``: weight of the card's worth to the opponent, added to a capture (denying it) and taken from a
    discard (the opponent may take it next). ``sweep``: bonus per card a play captures.
    """

    base: dict[str, float] = field(default_factory=lambda: {"bright": 10.0, "animal": 5.0, "ribbon": 4.0,
                                                           "chaff": 1.0})  # fmt: skip
    groups: tuple[tuple[frozenset[str], float], ...] = (
        (BRIGHTS, 6.0), (POETRY, 5.0), (BLUE, 5.0), (BOAR_DEER_BUTTERFLY, 5.0),
        (frozenset((SAKE, "pampas-moon")), 6.0), (frozenset((SAKE, "cherry-curtain")), 6.0),
    )  # fmt: skip
    count: float = 0.3
    spite: float = 0.0
    sweep: float = 0.0

    def worth(self, card: str, held: AbstractSet[str]) -> float:
        """What taking ``card`` is worth to a player who captured ``held``."""
        k = kind(card)
        v = self.base[k] + (4.0 if card == SAKE else 0.0)
        for group, bonus in self.groups:
            if card in group:
                v += bonus * len(group & held)
        if k != "bright":
            v += self.count * sum(1 for c in held if kind(c) == k)
        return v

    def play_value(self, action: dict[str, Any], view: View) -> float:
        """The worth of one ``play`` action: a capture's cards, or what a discard costs."""
        mine, theirs, card, taken = play_parts(action, view)
        if taken:
            cards = [card, *taken]
            return (2.0 + sum(self.worth(c, mine) + self.spite * self.worth(c, theirs) for c in cards)
                    + self.sweep * len(cards))  # fmt: skip
        same = sum(1 for c in view["hand"] if month(c) == month(card) and c != card)
        return -self.worth(card, mine) - self.spite * self.worth(card, theirs) - 0.5 * same

    def capture_value(self, action: dict[str, Any], view: View) -> float:
        """The worth of taking one field card with the drawn card."""
        me = view["seat"] - 1
        target: str = action["capture"]
        return self.worth(target, set(view["captured"][me])) + self.spite * self.worth(
            target, set(view["captured"][1 - me]))  # fmt: skip


@dataclass(frozen=True)
class Reach(Style):
    """The ``reacher``'s policy: cards are worth the yaku they bring within reach.

    :meth:`potential` values a pile of captured cards as the points of each yaku it holds or may still complete, a
    yaku short of ``k`` cards weighed ``chance ** k`` (and 0 when fewer than ``k`` of its cards are still out of both
    piles). A capture is worth the rise of its own potential plus ``spite`` times the fall of the opponent's (the
    cards it takes are out of the opponent's reach); a discard costs ``risk`` times the rise of the opponent's
    potential if the opponent took the card, weighed by the chance that the opponent's hand or the next draw holds a
    card of its month, and a little of what the card would bring itself. ``viewing``: the points it counts for each
    viewing yaku (their worth differs between presets, and a request does not carry the rules).
    """

    chance: float = 0.35
    viewing: float = 3.0
    risk: float = 1.0

    def potential(self, mine: frozenset[str], dead: frozenset[str]) -> float:
        """The points within reach of a player who captured ``mine``, the cards ``dead`` out of its reach."""
        free = EVERY_CARD - dead - mine

        def reach(group: frozenset[str], need: int) -> float:
            short = need - len(mine & group)
            if short <= 0:
                return 1.0
            return self.chance**short if len(free & group) >= short else 0.0

        v = 5 * reach(DRY_BRIGHTS, 3) + 2 * reach(BRIGHTS, 4) + reach(DRY_BRIGHTS, 4) + 2 * reach(BRIGHTS, 5)
        v += 5 * (reach(POETRY, 3) + reach(BLUE, 3) + reach(BOAR_DEER_BUTTERFLY, 3))
        v += self.viewing * (reach(frozenset((SAKE, "pampas-moon")), 2) + reach(frozenset((SAKE, "cherry-curtain")), 2))
        for group, need in ((RIBBONS, 5), (ANIMALS, 5), (CHAFF, 10)):
            v += max(0, len(mine & group) - need) + reach(group, need)
        return v + 0.05 * len(mine)

    def gain(self, mine: frozenset[str], theirs: frozenset[str], taken: frozenset[str]) -> float:
        """What capturing ``taken`` is worth: the rise of its own potential, and ``spite`` times the opponent's fall."""
        rise = self.potential(mine | taken, theirs) - self.potential(mine, theirs)
        return rise + self.spite * (self.potential(theirs, mine) - self.potential(theirs, mine | taken))

    def play_value(self, action: dict[str, Any], view: View) -> float:
        mine, theirs, card, taken = play_parts(action, view)
        if taken:
            return 1.0 + self.gain(mine, theirs, frozenset((card, *taken)))
        unseen = EVERY_CARD - set(view["hand"]) - set(view["field"]) - mine - theirs
        mates = sum(1 for c in unseen if month(c) == month(card))
        out = max(len(unseen), 1)
        opponent_hand: int = view.get("opponent_hand_size", 0)
        held = 1 - (1 - min(opponent_hand / out, 1.0)) ** mates  # the opponent holds a mate
        taken_away = min(1.0, held + 0.5 * mates / out)  # or it is drawn
        gives = self.potential(theirs | {card}, mine) - self.potential(theirs, mine)
        keeps = self.potential(mine | {card}, theirs) - self.potential(mine, theirs)
        pairs = sum(1 for c in view["hand"] if month(c) == month(card) and c != card)
        return -self.risk * taken_away * gives - 0.3 * keeps - 0.3 * pairs

    def capture_value(self, action: dict[str, Any], view: View) -> float:
        me = view["seat"] - 1
        taken = frozenset(c for c in (action["capture"], view.get("drawn")) if c)
        return self.gain(frozenset(view["captured"][me]), frozenset(view["captured"][1 - me]), taken)


REACH = Reach(spite=0.8)
"""The ``reacher``'s valuation."""


KoikoiRule = Callable[[View], bool]
"""Whether to call koi-koi, from the view at the koi-koi decision."""


def cautious_koikoi(view: View) -> bool:
    """The greedy bot's rule: play on only early, with fewer than 7 points, and against an opponent with little."""
    me = view["seat"] - 1
    opp = 1 - me
    if view["round"] >= view["rounds"] and view["scores"][me] > view["scores"][opp]:
        return False
    if len(view["hand"]) < 5 or view["yaku"][opp]["total"] > 0 or view["yaku"][me]["total"] >= 7:
        return False
    theirs = view["captured"][opp]
    return not (sum(1 for c in theirs if c in BRIGHTS) >= 2 or len(theirs) >= 10)


def choose_with(request: Request, style: Style, koikoi: KoikoiRule,
                play: Callable[[Request, Style], dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """One element of ``request["legal"]``: ``koikoi`` decides koi-koi, ``style`` values plays and captures
    (``play``, when given, chooses the card to play instead)."""
    legal: list[dict[str, Any]] = request["legal"]
    view: View = request["view"]
    decision = request["decision"]
    if decision == "koikoi":
        want = koikoi(view)
        return next((a for a in legal if a.get("koikoi") is want), legal[0])
    if decision == "capture":
        return max(legal, key=lambda a: style.capture_value(a, view))
    if play is not None:
        return play(request, style)
    return max(legal, key=lambda a: style.play_value(a, view))


def _last_round_ahead(view: View) -> bool:
    me = view["seat"] - 1
    return bool(view["round"] >= view["rounds"] and view["scores"][me] > view["scores"][1 - me])


def aggressive_koikoi(view: View) -> bool:
    """Koi-koi with two cards or more in hand, except to keep a lead in the last round."""
    return not _last_round_ahead(view) and len(view["hand"]) >= 2


def never_koikoi(view: View) -> bool:
    """Never: take the points at once."""
    return False


def brights_koikoi(view: View) -> bool:
    """Play on for more brights: two or more captured, three cards or more in hand, and no yaku against it."""
    me = view["seat"] - 1
    brights = sum(1 for c in view["captured"][me] if c in BRIGHTS)
    hopeful = brights >= 2 and len(view["hand"]) >= 3 and view["yaku"][1 - me]["total"] == 0
    return hopeful and not _last_round_ahead(view)


def ribbons_koikoi(view: View) -> bool:
    """Koi-koi while the ribbons can still grow: four cards or more in hand and no yaku against it."""
    me = view["seat"] - 1
    return not _last_round_ahead(view) and len(view["hand"]) >= 4 and view["yaku"][1 - me]["total"] == 0


def sweeper_koikoi(view: View) -> bool:
    """Koi-koi with three cards or more in hand while its yaku is worth less than 4 points."""
    me = view["seat"] - 1
    return not _last_round_ahead(view) and len(view["hand"]) >= 3 and view["yaku"][me]["total"] < 4


def reacher_koikoi(view: View) -> bool:
    """Play on while three cards or more are left, under 7 points, and the opponent has no yaku and little within
    reach (:meth:`Reach.potential` of its pile below 1.5 points)."""
    me = view["seat"] - 1
    if _last_round_ahead(view) or len(view["hand"]) < 3 or view["yaku"][1 - me]["total"] > 0:
        return False
    mine, theirs = frozenset(view["captured"][me]), frozenset(view["captured"][1 - me])
    return view["yaku"][me]["total"] < 7 and REACH.potential(theirs, mine) - 0.05 * len(theirs) < 1.5


def hold(request: Request, style: Style) -> dict[str, Any]:
    """The holder's card to play: a capture with a bright, an animal or a ribbon in it, else the least useful card
    that captures nothing, else the best capture."""
    legal: list[dict[str, Any]] = request["legal"]
    view: View = request["view"]
    field_months = {month(c) for c in view["field"]}

    def captures(a: dict[str, Any]) -> bool:
        return month(a["play"]) in field_months

    def rich(a: dict[str, Any]) -> bool:
        taken = [a["capture"]] if "capture" in a else [c for c in view["field"] if month(c) == month(a["play"])]
        return any(kind(c) != "chaff" for c in [a["play"], *taken])

    good = [a for a in legal if captures(a) and rich(a)]
    if good:
        return max(good, key=lambda a: style.play_value(a, view))
    discards = [a for a in legal if not captures(a)]
    return max(discards or legal, key=lambda a: style.play_value(a, view))


Player = tuple[Style, KoikoiRule, Callable[[Request, Style], dict[str, Any]] | None]
"""A style of the pool: its valuation, its koi-koi rule, and its own choice of the card to play (or None)."""

STYLES: dict[str, Player] = {
    "aggressive": (Style(), aggressive_koikoi, None),
    "stopper": (Style(base={"bright": 7.0, "animal": 5.0, "ribbon": 5.0, "chaff": 2.0}, count=1.0, spite=0.5),
                never_koikoi, None),
    "brights": (Style(base={"bright": 20.0, "animal": 3.0, "ribbon": 2.0, "chaff": 0.5}, count=0.1,
                      groups=((BRIGHTS, 10.0), (frozenset((SAKE, "pampas-moon")), 12.0),
                              (frozenset((SAKE, "cherry-curtain")), 12.0))),
                brights_koikoi, None),
    "ribbons": (Style(base={"bright": 6.0, "animal": 3.0, "ribbon": 9.0, "chaff": 0.5}, count=1.0,
                      groups=((POETRY, 8.0), (BLUE, 8.0), (BRIGHTS, 3.0))),
                ribbons_koikoi, None),
    "denier": (Style(spite=1.5), cautious_koikoi, None),
    "holder": (Style(), cautious_koikoi, hold),
    "sweeper": (Style(base={"bright": 6.0, "animal": 3.0, "ribbon": 3.0, "chaff": 3.0}, count=0.5, sweep=6.0),
                sweeper_koikoi, None),
    "reacher": (REACH, reacher_koikoi, None),
}  # fmt: skip
"""The styles of the pool, by name."""


def chooser(name: str) -> Callable[[Request], dict[str, Any]]:
    """The ``choose(request)`` of the style ``name``."""
    style, koikoi, play = STYLES[name]
    return lambda request: choose_with(request, style, koikoi, play)


def main(argv: list[str] | None = None) -> int:
    """Answer the referee until ``bye`` or the end of stdin."""
    parser = argparse.ArgumentParser(description="A koikoi/1 bot of the opponent pool, in one of its styles.")
    parser.add_argument("--style", required=True, choices=sorted(STYLES), help="how it plays")
    parser.add_argument("--name", default=None, help="the name sent in hello (default: the style)")
    args = parser.parse_args(argv)
    return run(chooser(args.style), name=args.name or args.style, version="1.0")


if __name__ == "__main__":
    sys.exit(main())
