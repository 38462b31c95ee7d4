"""The 48 Hanafuda cards: canonical ids, months, kinds, and 48-bit card masks.

Inside the engine a card is an ``int`` from 0 to 47, ``(month - 1) * 4 + slot``, and a set of cards is an ``int``
bit mask (bit ``c`` set when card ``c`` is in the set). At the edges cards are the readable ids of RULES.md,
for example ``pine-crane``.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Final

from referee.engine.errors import UnknownCardError

Card = int
"""A card, 0..47."""

Mask = int
"""A set of cards as a 48-bit mask."""


class Kind(IntEnum):
    """The four kinds of card."""

    BRIGHT = 0
    ANIMAL = 1
    RIBBON = 2
    CHAFF = 3


MONTH_FLOWERS: Final[tuple[str, ...]] = (
    "pine", "plum", "cherry", "wisteria", "iris", "peony",
    "clover", "pampas", "chrysanthemum", "maple", "willow", "paulownia",
)  # fmt: skip

_B: Final = Kind.BRIGHT
_A: Final = Kind.ANIMAL
_R: Final = Kind.RIBBON
_C: Final = Kind.CHAFF

# (id, kind) for each month, in slot order.
_TABLE: Final[tuple[tuple[tuple[str, Kind], ...], ...]] = (
    (("pine-crane", _B), ("pine-ribbon", _R), ("pine-chaff-1", _C), ("pine-chaff-2", _C)),
    (("plum-warbler", _A), ("plum-ribbon", _R), ("plum-chaff-1", _C), ("plum-chaff-2", _C)),
    (("cherry-curtain", _B), ("cherry-ribbon", _R), ("cherry-chaff-1", _C), ("cherry-chaff-2", _C)),
    (("wisteria-cuckoo", _A), ("wisteria-ribbon", _R), ("wisteria-chaff-1", _C), ("wisteria-chaff-2", _C)),
    (("iris-bridge", _A), ("iris-ribbon", _R), ("iris-chaff-1", _C), ("iris-chaff-2", _C)),
    (("peony-butterfly", _A), ("peony-ribbon", _R), ("peony-chaff-1", _C), ("peony-chaff-2", _C)),
    (("clover-boar", _A), ("clover-ribbon", _R), ("clover-chaff-1", _C), ("clover-chaff-2", _C)),
    (("pampas-moon", _B), ("pampas-geese", _A), ("pampas-chaff-1", _C), ("pampas-chaff-2", _C)),
    (
        ("chrysanthemum-sake", _A),
        ("chrysanthemum-ribbon", _R),
        ("chrysanthemum-chaff-1", _C),
        ("chrysanthemum-chaff-2", _C),
    ),
    (("maple-deer", _A), ("maple-ribbon", _R), ("maple-chaff-1", _C), ("maple-chaff-2", _C)),
    (("willow-rainman", _B), ("willow-swallow", _A), ("willow-ribbon", _R), ("willow-lightning", _C)),
    (("paulownia-phoenix", _B), ("paulownia-chaff-1", _C), ("paulownia-chaff-2", _C), ("paulownia-chaff-3", _C)),
)

CARD_IDS: Final[tuple[str, ...]] = tuple(cid for month in _TABLE for cid, _ in month)
"""Canonical id of each card, indexed by card int."""

KINDS: Final[tuple[Kind, ...]] = tuple(kind for month in _TABLE for _, kind in month)
"""Kind of each card, indexed by card int."""

MONTHS: Final[tuple[int, ...]] = tuple(c // 4 + 1 for c in range(48))
"""Month (1..12) of each card, indexed by card int."""

_INDEX: Final[dict[str, Card]] = {cid: i for i, cid in enumerate(CARD_IDS)}

ALL: Final[Mask] = (1 << 48) - 1
MONTH_MASKS: Final[tuple[Mask, ...]] = tuple(0b1111 << (4 * m) for m in range(12))
"""Mask of the four cards of each month, indexed by month - 1."""
_BYTE_IDS: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(CARD_IDS[8 * k + i] for i in range(8) if b >> i & 1) for k in range(6) for b in range(256)
)
"""Ids of the cards in byte ``k`` of a mask with value ``b``, at index ``256 * k + b``."""
CARD_MONTH_MASK: Final[tuple[Mask, ...]] = tuple(MONTH_MASKS[c // 4] for c in range(48))
"""Mask of the four cards of a card's month, indexed by card int."""


def card(card_id: object) -> Card:
    """The card int of a canonical id; raises :class:`UnknownCardError` for anything else."""
    c = _INDEX.get(card_id) if isinstance(card_id, str) else None
    if c is None:
        raise UnknownCardError(f"unknown card id {card_id!r}")
    return c


def card_id(c: Card) -> str:
    """The canonical id of a card int (0..47; ``IndexError`` for any other)."""
    if not 0 <= c < 48:
        raise IndexError(f"card {c} is not in 0..47")
    return CARD_IDS[c]


def mask_of(cards: Iterable[Card]) -> Mask:
    """The mask of some card ints."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def mask_of_ids(ids: Iterable[str]) -> Mask:
    """The mask of some card ids; raises :class:`UnknownCardError` on an unknown id."""
    return mask_of(card(i) for i in ids)


def cards_of(mask: Mask) -> list[Card]:
    """The card ints of a mask, in ascending order."""
    out: list[Card] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def ids_of(mask: Mask) -> list[str]:
    """The canonical ids of a mask, in card order."""
    out: list[str] = []
    shift = 0
    while mask:
        out += _BYTE_IDS[shift + (mask & 255)]
        mask >>= 8
        shift += 256
    return out


def _kind_mask(kind: Kind) -> Mask:
    return mask_of(c for c in range(48) if KINDS[c] is kind)


BRIGHTS: Final[Mask] = _kind_mask(Kind.BRIGHT)
ANIMALS: Final[Mask] = _kind_mask(Kind.ANIMAL)
RIBBONS: Final[Mask] = _kind_mask(Kind.RIBBON)
CHAFF: Final[Mask] = _kind_mask(Kind.CHAFF)
KIND_MASKS: Final[dict[Kind, Mask]] = {
    Kind.BRIGHT: BRIGHTS, Kind.ANIMAL: ANIMALS, Kind.RIBBON: RIBBONS, Kind.CHAFF: CHAFF
}

RAINMAN: Final[Card] = card("willow-rainman")
SAKE: Final[Card] = card("chrysanthemum-sake")
CURTAIN: Final[Card] = card("cherry-curtain")
MOON: Final[Card] = card("pampas-moon")
POETRY: Final[Mask] = mask_of_ids(("pine-ribbon", "plum-ribbon", "cherry-ribbon"))
BLUE: Final[Mask] = mask_of_ids(("peony-ribbon", "chrysanthemum-ribbon", "maple-ribbon"))
RED: Final[Mask] = mask_of_ids(("wisteria-ribbon", "iris-ribbon", "clover-ribbon", "willow-ribbon"))
BOAR_DEER_BUTTERFLY: Final[Mask] = mask_of_ids(("clover-boar", "maple-deer", "peony-butterfly"))
DRY_BRIGHTS: Final[Mask] = BRIGHTS & ~(1 << RAINMAN)

assert len(CARD_IDS) == 48 and len(_INDEX) == 48
assert (BRIGHTS.bit_count(), ANIMALS.bit_count(), RIBBONS.bit_count(), CHAFF.bit_count()) == (5, 9, 10, 24)
