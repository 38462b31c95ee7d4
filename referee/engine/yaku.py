"""Yaku: the scoring combinations of captured cards, and what a stop scores.

:func:`score` gives the full breakdown (name, cards, points). The match loop uses :func:`evaluate`, which gives only
the base points and the set of yaku held, in a handful of ``int.bit_count()`` calls; :func:`stop_total` turns base
points into what a stop scores.

With ``set_growth`` on, a set yaku (poetry ribbons, blue ribbons, both together, boar-deer-butterfly) scores one more
point for each further card of its kind: the ribbons outside the ribbon sets that score, the animals outside the
boar, deer and butterfly. The further ribbons count once: when poetry and blue ribbons both score as yaku of their
own, they grow the first of them that scores (poetry ribbons).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from referee.engine import cards as C
from referee.engine.cards import Mask
from referee.engine.rules import KoikoiScoring, Rules, SetGrowth


class Yaku(StrEnum):
    """The names of the yaku of captured cards (hand yaku are :class:`HandYaku`)."""

    FIVE_BRIGHTS = "five_brights"
    FOUR_BRIGHTS_DRY = "four_brights_dry"
    FOUR_BRIGHTS_WET = "four_brights_wet"
    THREE_BRIGHTS = "three_brights"
    POETRY_RIBBONS = "poetry_ribbons"
    BLUE_RIBBONS = "blue_ribbons"
    POETRY_BLUE_BONUS = "poetry_blue_bonus"
    POETRY_AND_BLUE_RIBBONS = "poetry_and_blue_ribbons"  # both ribbon sets as one yaku (rules.poetry_and_blue_ribbons)
    BOAR_DEER_BUTTERFLY = "boar_deer_butterfly"
    RIBBONS = "ribbons"
    ANIMALS = "animals"
    CHAFF = "chaff"
    CHERRY_VIEWING = "cherry_viewing"
    MOON_VIEWING = "moon_viewing"


class HandYaku(StrEnum):
    """Yaku of an opening hand, scored at once."""

    TESHI = "teshi"  # four cards of one month
    KUTTSUKI = "kuttsuki"  # four pairs of months


_BIT: Final = {y: 1 << i for i, y in enumerate(Yaku)}
_ORDER: Final = tuple(Yaku)
_RANK: Final = {y: i for i, y in enumerate(_ORDER)}


@dataclass(slots=True, init=False, unsafe_hash=True)
class YakuScore:
    """One yaku held: its name, the cards that form it and its points. Treat as read-only (not frozen: see
    :class:`Score`)."""

    name: Yaku
    points: int
    cards: Mask

    def __init__(self, name: Yaku, points: int, cards: Mask) -> None:  # written out: compiled, it is native
        self.name = name
        self.points = points
        self.cards = cards

    def card_ids(self) -> list[str]:
        """The cards that form it, as canonical ids."""
        return C.ids_of(self.cards)

    def __reduce__(self) -> tuple[type[YakuScore], tuple[Any, ...]]:
        """Pickle and copy by the fields."""
        return YakuScore, (self.name, self.points, self.cards)


@dataclass(slots=True, init=False, unsafe_hash=True)
class Score:
    """The yaku of a capture pile, their sum (``base``) and what a stop scores (``total``). Treat as read-only: it
    is not frozen, so that its constructor, written out, is native in the compiled engine (every view has two)."""

    yaku: tuple[YakuScore, ...]
    base: int
    total: int

    def __init__(self, yaku: tuple[YakuScore, ...], base: int, total: int) -> None:
        self.yaku = yaku
        self.base = base
        self.total = total

    def to_json(self) -> dict[str, object]:
        """``{"yaku": [{"name", "points", "cards"}...], "total": N}``."""
        return {
            "yaku": [{"name": y.name.value, "points": y.points, "cards": y.card_ids()} for y in self.yaku],
            "total": self.total,
        }

    def __reduce__(self) -> tuple[type[Score], tuple[Any, ...]]:
        """Pickle and copy by the fields."""
        return Score, (self.yaku, self.base, self.total)


def _brights(captured: Mask, rules: Rules) -> list[tuple[Yaku, int, Mask]]:
    b = captured & C.BRIGHTS
    dry = b & C.DRY_BRIGHTS
    n, nd = b.bit_count(), dry.bit_count()
    rain = n != nd
    out: list[tuple[Yaku, int, Mask]] = []
    if rules.bright_yaku_combine:
        if n == 5:
            out.append((Yaku.FIVE_BRIGHTS, rules.five_brights, b))
        if nd >= 4:
            out.append((Yaku.FOUR_BRIGHTS_DRY, rules.four_brights_dry, dry))
        if rain and nd >= 3:
            out.append((Yaku.FOUR_BRIGHTS_WET, rules.four_brights_wet, b))
        if nd >= 3:
            out.append((Yaku.THREE_BRIGHTS, rules.three_brights, dry))
        return [y for y in out if y[1] > 0]
    if n == 5 and rules.five_brights:
        out.append((Yaku.FIVE_BRIGHTS, rules.five_brights, b))
    elif n == 4 and not rain and rules.four_brights_dry:
        out.append((Yaku.FOUR_BRIGHTS_DRY, rules.four_brights_dry, b))
    elif n == 4 and rain and rules.four_brights_wet:
        out.append((Yaku.FOUR_BRIGHTS_WET, rules.four_brights_wet, b))
    elif n == 3 and not rain and rules.three_brights:
        out.append((Yaku.THREE_BRIGHTS, rules.three_brights, b))
    return out


def _all_yaku(captured: Mask, rules: Rules, koikoi_calls: int) -> list[tuple[Yaku, int, Mask]]:
    out = _brights(captured, rules) if captured & C.BRIGHTS else []
    grow = rules.set_growth is not SetGrowth.NONE
    ribbons = captured & C.RIBBONS
    poetry = ribbons & C.POETRY == C.POETRY
    blue = ribbons & C.BLUE == C.BLUE
    sets: list[tuple[Yaku, int, Mask]] = []
    if poetry and blue and rules.poetry_and_blue_ribbons:
        sets.append((Yaku.POETRY_AND_BLUE_RIBBONS, rules.poetry_and_blue_ribbons, C.POETRY | C.BLUE))
    else:
        if poetry and rules.poetry_ribbons:
            sets.append((Yaku.POETRY_RIBBONS, rules.poetry_ribbons, C.POETRY))
        if blue and rules.blue_ribbons:
            sets.append((Yaku.BLUE_RIBBONS, rules.blue_ribbons, C.BLUE))
    if sets and grow:  # the further ribbons grow the first set, once
        held = 0
        for _, _, cards in sets:
            held |= cards
        further = ribbons & ~held
        name, pts, cards = sets[0]
        sets[0] = (name, pts + further.bit_count(), cards | further)
    out += sets
    if poetry and blue and rules.poetry_blue_bonus:
        out.append((Yaku.POETRY_BLUE_BONUS, rules.poetry_blue_bonus, C.POETRY | C.BLUE))
    animals = captured & C.ANIMALS
    bdb = captured & C.BOAR_DEER_BUTTERFLY == C.BOAR_DEER_BUTTERFLY and rules.boar_deer_butterfly > 0
    if bdb:
        further = animals & ~C.BOAR_DEER_BUTTERFLY if grow else 0
        out.append((Yaku.BOAR_DEER_BUTTERFLY, rules.boar_deer_butterfly + further.bit_count(),
                    C.BOAR_DEER_BUTTERFLY | further))  # fmt: skip
    replace = rules.set_growth is SetGrowth.GROW  # a set that scores stands in for the count yaku of its kind
    n = ribbons.bit_count()
    if n >= rules.ribbons_min and not (sets and replace):
        pts = rules.ribbons_points + (n - rules.ribbons_min) * rules.ribbons_extra
        if pts:
            out.append((Yaku.RIBBONS, pts, ribbons))
    n = animals.bit_count()
    if n >= rules.animals_min and not (bdb and replace):
        pts = rules.animals_points + (n - rules.animals_min) * rules.animals_extra
        if pts:
            out.append((Yaku.ANIMALS, pts, animals))
    chaff = captured & (C.CHAFF | (1 << C.SAKE)) if rules.sake_as_chaff else captured & C.CHAFF
    n = chaff.bit_count()
    if n >= rules.chaff_min:
        pts = rules.chaff_points + (n - rules.chaff_min) * rules.chaff_extra
        if pts:
            out.append((Yaku.CHAFF, pts, chaff))
    sake = 1 << C.SAKE
    if captured & sake:
        curtain, moon = 1 << C.CURTAIN, 1 << C.MOON
        if captured & curtain:
            pts = rules.cherry_viewing and (rules.cherry_viewing_after_koikoi if koikoi_calls else rules.cherry_viewing)
            if pts:
                out.append((Yaku.CHERRY_VIEWING, pts, sake | curtain))
        if captured & moon:
            pts = rules.moon_viewing and (rules.moon_viewing_after_koikoi if koikoi_calls else rules.moon_viewing)
            if pts:
                out.append((Yaku.MOON_VIEWING, pts, sake | moon))
    return out


# Final: a compiled build reads these as C constants, not from the module's dict.
_FIVE: Final = _BIT[Yaku.FIVE_BRIGHTS]
_FOUR_DRY: Final = _BIT[Yaku.FOUR_BRIGHTS_DRY]
_FOUR_WET: Final = _BIT[Yaku.FOUR_BRIGHTS_WET]
_THREE: Final = _BIT[Yaku.THREE_BRIGHTS]
_POETRY: Final = _BIT[Yaku.POETRY_RIBBONS]
_BLUE: Final = _BIT[Yaku.BLUE_RIBBONS]
_BONUS: Final = _BIT[Yaku.POETRY_BLUE_BONUS]
_BOTH: Final = _BIT[Yaku.POETRY_AND_BLUE_RIBBONS]
_BDB: Final = _BIT[Yaku.BOAR_DEER_BUTTERFLY]
_RIBBONS: Final = _BIT[Yaku.RIBBONS]
_ANIMALS: Final = _BIT[Yaku.ANIMALS]
_CHAFF: Final = _BIT[Yaku.CHAFF]
_CHERRY: Final = _BIT[Yaku.CHERRY_VIEWING]
_MOON: Final = _BIT[Yaku.MOON_VIEWING]
_BRIGHTS: Final = C.BRIGHTS
_RIBBON_CARDS: Final = C.RIBBONS
_ANIMAL_CARDS: Final = C.ANIMALS
_CHAFF_CARDS: Final = C.CHAFF
_POETRY_CARDS: Final = C.POETRY
_BLUE_CARDS: Final = C.BLUE
_BDB_CARDS: Final = C.BOAR_DEER_BUTTERFLY
_BOTH_CARDS: Final = C.POETRY | C.BLUE
_NO_GROWTH: Final = SetGrowth.NONE
_GROW: Final = SetGrowth.GROW
_RAIN: Final = 1 << C.RAINMAN
_SAKE_BIT: Final = 1 << C.SAKE
_CURTAIN_BIT: Final = 1 << C.CURTAIN
_MOON_BIT: Final = 1 << C.MOON


def evaluate(captured: Mask, rules: Rules, koikoi_calls: int = 0) -> tuple[int, int]:
    """``(base points, bit set of yaku held)`` of a capture pile: the fast path of the match loop.

    Equal to ``score()``'s base and names (a test checks it over random piles); written out for speed.
    """
    if rules.bright_yaku_combine:
        base = names = 0
        for name, pts, _ in _all_yaku(captured, rules, koikoi_calls):
            base += pts
            names |= _BIT[name]
        return base, names
    base = names = 0
    b = captured & _BRIGHTS
    if b:
        n = b.bit_count()
        if n == 5:
            pts, bit = rules.five_brights, _FIVE
        elif n == 4:
            pts, bit = (rules.four_brights_wet, _FOUR_WET) if b & _RAIN else (rules.four_brights_dry, _FOUR_DRY)
        elif n == 3 and not b & _RAIN:
            pts, bit = rules.three_brights, _THREE
        else:
            pts = bit = 0
        if pts:
            base += pts
            names |= bit
    r = captured & _RIBBON_CARDS
    if r:
        poetry = r & _POETRY_CARDS == _POETRY_CARDS
        blue = r & _BLUE_CARDS == _BLUE_CARDS
        held = 0  # the cards of the ribbon sets that score
        if poetry and blue and rules.poetry_and_blue_ribbons:
            base += rules.poetry_and_blue_ribbons
            names |= _BOTH
            held = _BOTH_CARDS
        else:
            if poetry and rules.poetry_ribbons:
                base += rules.poetry_ribbons
                names |= _POETRY
                held = _POETRY_CARDS
            if blue and rules.blue_ribbons:
                base += rules.blue_ribbons
                names |= _BLUE
                held |= _BLUE_CARDS
        if held and rules.set_growth is not _NO_GROWTH:  # (rules read only when a set is held: the hot path)
            base += (r & ~held).bit_count()
        if poetry and blue and rules.poetry_blue_bonus:
            base += rules.poetry_blue_bonus
            names |= _BONUS
        n = r.bit_count()
        if n >= rules.ribbons_min and not (held and rules.set_growth is _GROW):
            pts = rules.ribbons_points + (n - rules.ribbons_min) * rules.ribbons_extra
            if pts:
                base += pts
                names |= _RIBBONS
    animals = captured & _ANIMAL_CARDS
    bdb = animals & _BDB_CARDS == _BDB_CARDS and rules.boar_deer_butterfly > 0
    if bdb:
        base += rules.boar_deer_butterfly
        names |= _BDB
        if rules.set_growth is not _NO_GROWTH:
            base += (animals & ~_BDB_CARDS).bit_count()
    n = animals.bit_count()
    if n >= rules.animals_min and not (bdb and rules.set_growth is _GROW):
        pts = rules.animals_points + (n - rules.animals_min) * rules.animals_extra
        if pts:
            base += pts
            names |= _ANIMALS
    sake = captured & _SAKE_BIT
    n = (captured & _CHAFF_CARDS).bit_count() + (1 if sake and rules.sake_as_chaff else 0)
    if n >= rules.chaff_min:
        pts = rules.chaff_points + (n - rules.chaff_min) * rules.chaff_extra
        if pts:
            base += pts
            names |= _CHAFF
    if sake:
        if captured & _CURTAIN_BIT:
            pts = rules.cherry_viewing and (rules.cherry_viewing_after_koikoi if koikoi_calls else rules.cherry_viewing)
            if pts:
                base += pts
                names |= _CHERRY
        if captured & _MOON_BIT:
            pts = rules.moon_viewing and (rules.moon_viewing_after_koikoi if koikoi_calls else rules.moon_viewing)
            if pts:
                base += pts
                names |= _MOON
    return base, names


def koikoi_total(base: int, koikoi_calls: int, scoring: KoikoiScoring) -> int:
    """Base yaku points after ``koikoi_calls`` calls by the stopping player, by the koi-koi scoring rule alone."""
    if scoring is KoikoiScoring.DOUBLE:
        return base << koikoi_calls
    if scoring is KoikoiScoring.ADD_THEN_MULTIPLY:
        return base + koikoi_calls if koikoi_calls <= 3 else base * (koikoi_calls - 2)
    return base


def stop_total(base: int, koikoi_calls: int, opponent_calls: int, rules: Rules) -> int:
    """What a stop scores: base yaku points after ``koikoi_calls`` calls by the stopping player and
    ``opponent_calls`` by the other player this round. The koi-koi scoring first; then x2 when that reaches
    ``double_from``, and x2 again after an opponent's call under ``double_after_opponent_koikoi``."""
    if not base:
        return 0
    total = koikoi_total(base, koikoi_calls, rules.koikoi_scoring)
    if rules.double_from and total >= rules.double_from:
        total *= 2
    if opponent_calls and rules.double_after_opponent_koikoi:
        total *= 2
    return total


_NO_YAKU: Final = Score((), 0, 0)


def yaku_points(captured: Mask, rules: Rules, koikoi_calls: int = 0) -> list[tuple[Yaku, int]]:
    """Each yaku held with its points, in table order: :func:`score`'s breakdown without its records (the match
    loop's round end; frozen records are slow to build in a compiled build)."""
    found = _all_yaku(captured, rules, koikoi_calls)
    found.sort(key=lambda y: _RANK[y[0]])
    return [(name, points) for name, points, _ in found]


def score(captured: Mask | Iterable[str], rules: Rules, koikoi_calls: int = 0, opponent_calls: int = 0) -> Score:
    """The yaku of a capture pile (a mask, or card ids) and the total a stop would score after ``koikoi_calls`` by
    the player and ``opponent_calls`` by the other player this round (:func:`stop_total`): the counts as given,
    whether or not the rules let a round hold so many (``koikoi_calls_per_round``). ``ValueError`` for a negative
    count or a mask outside 0 .. 2**48 - 1."""
    if koikoi_calls < 0 or opponent_calls < 0:
        raise ValueError("koikoi_calls and opponent_calls must be 0 or more")
    if isinstance(captured, int) and (isinstance(captured, bool) or not 0 <= captured < 1 << 48):
        raise ValueError("a capture mask is a whole number from 0 to 2**48 - 1 (a bit a card)")
    mask = captured if isinstance(captured, int) else C.mask_of_ids(captured)
    if not evaluate(mask, rules, koikoi_calls)[0]:
        return _NO_YAKU
    found = _all_yaku(mask, rules, koikoi_calls)
    found.sort(key=lambda y: _RANK[y[0]])
    base = sum(p for _, p, _ in found)
    total = stop_total(base, koikoi_calls, opponent_calls, rules)
    return Score(tuple(YakuScore(n, p, m) for n, p, m in found), base, total)


@functools.cache
def yaku_names(bits: int) -> tuple[Yaku, ...]:
    """The yaku named by a bit set from :func:`evaluate`, in table order."""
    return tuple(y for y in _ORDER if bits & _BIT[y])
