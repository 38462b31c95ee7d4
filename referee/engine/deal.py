"""Deals: an explicit :class:`Deal`, the seeded shuffle (:func:`shuffled_deal`), the ``--deals`` line form, and
what the rules make of a deal before play (a misdeal, a hand yaku)."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from referee.engine import cards as C
from referee.engine.actions import NIBBLE_LOW
from referee.engine.cards import MONTH_MASKS, Card, Mask
from referee.engine.errors import DealError, UnknownCardError
from referee.engine.rules import Rules
from referee.engine.yaku import HandYaku


@dataclass(frozen=True, slots=True)
class Deal:
    """An explicit deal: both hands (8 cards each), the field (8) and the stock (24, first drawn first)."""

    hands: tuple[Mask, Mask]
    field: Mask
    stock: tuple[Card, ...]

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Deal:
        """From ``{"hands": [[8 ids], [8 ids]], "field": [8 ids], "stock": [24 ids]}``; :class:`DealError` if wrong."""
        try:
            if set(data) != {"hands", "field", "stock"}:
                raise DealError(f"a deal has exactly the keys hands, field, stock; got {sorted(data)}")
            hands = data["hands"]
            if not isinstance(hands, list) or len(hands) != 2:
                raise DealError("hands: expected two lists of 8 card ids")
            groups = [hands[0], hands[1], data["field"], data["stock"]]
            names = ("hands[0]", "hands[1]", "field", "stock")
            for name, group, size in zip(names, groups, (8, 8, 8, 24), strict=True):
                if not isinstance(group, list) or len(group) != size:
                    raise DealError(f"{name}: expected {size} card ids")
            ints = [[C.card(x) for x in g] for g in groups]
        except UnknownCardError as exc:
            raise DealError(str(exc)) from None
        flat = [c for g in ints for c in g]
        if len(set(flat)) != 48:
            dup = sorted({C.CARD_IDS[c] for c in flat if flat.count(c) > 1})
            raise DealError(f"a deal must hold each of the 48 cards once; repeated: {', '.join(dup)}")
        return Deal((C.mask_of(ints[0]), C.mask_of(ints[1])), C.mask_of(ints[2]), tuple(ints[3]))

    def __reduce__(self) -> tuple[type[Deal], tuple[Any, ...]]:
        """Pickle and copy by the fields (a compiled build cannot set a frozen record's fields one by one)."""
        return Deal, (self.hands, self.field, self.stock)

    def to_json(self) -> dict[str, Any]:
        """The ``--deals`` line form of this deal."""
        return {
            "hands": [C.ids_of(self.hands[0]), C.ids_of(self.hands[1])],
            "field": C.ids_of(self.field),
            "stock": [C.CARD_IDS[c] for c in self.stock],
        }


_KEYS: Final = struct.Struct(">48I").unpack
_DECK: Final = range(48)


def shuffled_deal(seed: int, index: int) -> Deal:
    """The ``index``-th deal of a match with ``seed`` (deterministic; redeals take the next index).

    The deck is sorted by 48 random 32-bit keys from SHAKE-256 of the seed and the index: a uniform shuffle up to the
    chance of a tie (below 3e-7, and then the lower card comes first).
    """
    hands, field, stock = shuffled_parts(seed, index)
    return Deal(hands, field, stock)


Dealt = tuple[tuple[Mask, Mask], Mask, tuple[Card, ...]]
"""A deal as plain values (hands, field, stock): a frozen dataclass is slow to build in a compiled build."""


def shuffled_parts(seed: int, index: int) -> Dealt:
    """:func:`shuffled_deal` as plain values."""
    keys = _KEYS(hashlib.shake_256(f"koikoi/{seed}/{index}".encode()).digest(192))
    deck = sorted(_DECK, key=keys.__getitem__)
    first = second = field = 0
    for i in range(8):
        first |= 1 << deck[i]
        second |= 1 << deck[i + 8]
        field |= 1 << deck[i + 16]
    return (first, second), field, tuple(deck[24:])


def _full_month(mask: Mask) -> bool:
    """Whether ``mask`` holds all four cards of some month."""
    return bool(mask & mask >> 1 & mask >> 2 & mask >> 3 & NIBBLE_LOW)


def misdeal_reason(rules: Rules, hands: tuple[Mask, Mask], field: Mask) -> str | None:
    """Why a deal of ``hands`` and ``field`` is a misdeal under ``rules`` (the event's reason), or None."""
    if rules.misdeal_field_four and _full_month(field):
        return "field_four"
    if rules.misdeal_field_three and any((field & m).bit_count() >= 3 for m in MONTH_MASKS):
        return "field_three"
    if rules.misdeal_field_four_pairs and sum((field & m).bit_count() == 2 for m in MONTH_MASKS) == 4:
        return "field_four_pairs"
    if rules.misdeal_hand_four and (_full_month(hands[0]) or _full_month(hands[1])):
        return "hand_four"
    return None


def hand_yaku(hand: Mask, rules: Rules) -> tuple[HandYaku, int] | None:
    """The hand yaku of an opening hand under ``rules``, with its points, if any."""
    counts = [(hand & m).bit_count() for m in MONTH_MASKS]
    if rules.teshi_points and 4 in counts:
        return HandYaku.TESHI, rules.teshi_points
    if rules.kuttsuki_points and counts.count(2) == 4:
        return HandYaku.KUTTSUKI, rules.kuttsuki_points
    return None


def deals_from_lines(lines: Iterable[str]) -> list[Deal]:
    """Parse ``--deals`` JSON lines (blank lines skipped); :class:`DealError` names the bad line."""
    import json

    out: list[Deal] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise DealError(f"line {n}: not JSON: {exc}") from None
        except RecursionError:
            raise DealError(f"line {n}: nested too deeply to be a deal") from None
        if isinstance(data, list):
            raise DealError(f"line {n}: a sequence of deals, a line of a deal suite (deals generate), which "
                            "tournament --deals takes; this file takes one deal object a line")  # fmt: skip
        if not isinstance(data, dict):
            raise DealError(f"line {n}: expected a JSON object")
        try:
            out.append(Deal.from_json(data))
        except DealError as exc:
            raise DealError(f"line {n}: {exc}") from None
    return out
