"""Yaku of capture piles, preset by preset, as RULES.md states them (``referee.engine.score``)."""

from __future__ import annotations

import pytest

from referee.engine import CARD_IDS, PRESETS, UnknownCardError, card_id, mask_of_ids, score

G, C, K, N = "guide", "cardavia", "koikoi-japan", "nintendo"

BRIGHTS5 = ["pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix"]
DRY4 = ["pine-crane", "cherry-curtain", "pampas-moon", "paulownia-phoenix"]
WET4 = ["pine-crane", "cherry-curtain", "willow-rainman", "paulownia-phoenix"]
DRY3 = ["pine-crane", "pampas-moon", "paulownia-phoenix"]
WET3 = ["pine-crane", "pampas-moon", "willow-rainman"]
POETRY = ["pine-ribbon", "plum-ribbon", "cherry-ribbon"]
BLUE = ["peony-ribbon", "chrysanthemum-ribbon", "maple-ribbon"]
RED = ["wisteria-ribbon", "iris-ribbon", "clover-ribbon", "willow-ribbon"]
BDB = ["clover-boar", "maple-deer", "peony-butterfly"]
# Four animals, none of them the boar, deer, butterfly or sake cup.
ANIMALS4 = ["plum-warbler", "wisteria-cuckoo", "iris-bridge", "pampas-geese"]
CHAFF9 = [
    "pine-chaff-1", "pine-chaff-2", "plum-chaff-1", "plum-chaff-2", "cherry-chaff-1",
    "cherry-chaff-2", "willow-lightning", "paulownia-chaff-1", "paulownia-chaff-3",
]  # fmt: skip
CHAFF3_MORE = ["iris-chaff-1", "iris-chaff-2", "maple-chaff-1"]
SAKE, CURTAIN, MOON = "chrysanthemum-sake", "cherry-curtain", "pampas-moon"

# (case, cards, {preset: {yaku: points}})
CASES: list[tuple[str, list[str], dict[str, dict[str, int]]]] = [
    ("nothing", [], {G: {}, C: {}, K: {}, N: {}}),
    ("five brights", BRIGHTS5,
     {G: {"five_brights": 10}, C: {"five_brights": 15}, K: {"five_brights": 10}, N: {"five_brights": 10}}),
    ("four dry brights", DRY4, {G: {"four_brights_dry": 8}, C: {"four_brights_dry": 10}, K: {"four_brights_dry": 8},
                                N: {"four_brights_dry": 8}}),
    ("four with the rain man", WET4, {G: {"four_brights_wet": 7}, C: {"four_brights_wet": 8},
                                      K: {"four_brights_wet": 7}, N: {"four_brights_wet": 7}}),
    ("three dry brights", DRY3,
     {G: {"three_brights": 5}, C: {"three_brights": 6}, K: {"three_brights": 5}, N: {"three_brights": 5}}),
    ("three brights with the rain man is no yaku", WET3, {G: {}, C: {}, K: {}, N: {}}),
    ("two brights", ["pine-crane", "paulownia-phoenix"], {G: {}, C: {}, K: {}, N: {}}),
    ("poetry ribbons", POETRY,
     {G: {"poetry_ribbons": 5}, C: {"poetry_ribbons": 6}, K: {"poetry_ribbons": 5}, N: {"poetry_ribbons": 5}}),
    ("blue ribbons", BLUE,
     {G: {"blue_ribbons": 5}, C: {"blue_ribbons": 6}, K: {"blue_ribbons": 5}, N: {"blue_ribbons": 5}}),
    ("two poetry ribbons", POETRY[:2], {G: {}, C: {}, K: {}, N: {}}),
    ("poetry ribbons and one more", [*POETRY, "iris-ribbon"],
     {G: {"poetry_ribbons": 5}, C: {"poetry_ribbons": 6}, K: {"poetry_ribbons": 5}, N: {"poetry_ribbons": 6}}),
    ("poetry ribbons and two more: the set grows instead of the ribbons yaku", [*POETRY, *RED[:2]], {
        G: {"poetry_ribbons": 5, "ribbons": 1}, C: {"poetry_ribbons": 6, "ribbons": 1},
        K: {"poetry_ribbons": 5, "ribbons": 1}, N: {"poetry_ribbons": 7},
    }),
    ("blue ribbons and three red", [*BLUE, *RED[:3]], {
        G: {"blue_ribbons": 5, "ribbons": 2}, C: {"blue_ribbons": 6, "ribbons": 2},
        K: {"blue_ribbons": 5, "ribbons": 2}, N: {"blue_ribbons": 8},
    }),
    ("poetry and blue ribbons", POETRY + BLUE, {
        G: {"poetry_ribbons": 5, "blue_ribbons": 5, "ribbons": 2},
        C: {"poetry_ribbons": 6, "blue_ribbons": 6, "ribbons": 2},
        K: {"poetry_ribbons": 5, "blue_ribbons": 5, "poetry_blue_bonus": 10, "ribbons": 2},
        N: {"poetry_and_blue_ribbons": 10},
    }),
    ("poetry and blue ribbons and one red", [*POETRY, *BLUE, "willow-ribbon"], {
        G: {"poetry_ribbons": 5, "blue_ribbons": 5, "ribbons": 3},
        C: {"poetry_ribbons": 6, "blue_ribbons": 6, "ribbons": 3},
        K: {"poetry_ribbons": 5, "blue_ribbons": 5, "poetry_blue_bonus": 10, "ribbons": 3},
        N: {"poetry_and_blue_ribbons": 11},
    }),
    ("four ribbons", RED, {G: {}, C: {}, K: {}, N: {}}),
    ("five ribbons", [*RED, "pine-ribbon"],
     {G: {"ribbons": 1}, C: {"ribbons": 1}, K: {"ribbons": 1}, N: {"ribbons": 1}}),
    ("seven ribbons", [*RED, "pine-ribbon", "plum-ribbon", "peony-ribbon"],
     {G: {"ribbons": 3}, C: {"ribbons": 3}, K: {"ribbons": 3}, N: {"ribbons": 3}}),
    ("boar-deer-butterfly", BDB, {G: {"boar_deer_butterfly": 5}, C: {"boar_deer_butterfly": 5},
                                  K: {"boar_deer_butterfly": 5}, N: {"boar_deer_butterfly": 5}}),
    ("boar-deer-butterfly and the sake cup", [*BDB, SAKE], {G: {"boar_deer_butterfly": 5},
     C: {"boar_deer_butterfly": 5}, K: {"boar_deer_butterfly": 5}, N: {"boar_deer_butterfly": 6}}),
    ("four animals", ANIMALS4, {G: {}, C: {}, K: {}, N: {}}),
    ("five animals", [*ANIMALS4, "willow-swallow"],
     {G: {"animals": 1}, C: {"animals": 1}, K: {"animals": 1}, N: {"animals": 1}}),
    ("boar-deer-butterfly and five animals", [*BDB, "plum-warbler", "iris-bridge"], {
        G: {"boar_deer_butterfly": 5, "animals": 1},
        C: {"boar_deer_butterfly": 5, "animals": 1},
        K: {"boar_deer_butterfly": 5, "animals": 1},
        N: {"boar_deer_butterfly": 7},
    }),
    ("seven animals", [*ANIMALS4, "willow-swallow", "clover-boar", "maple-deer"],
     {G: {"animals": 3}, C: {"animals": 3}, K: {"animals": 3}, N: {"animals": 3}}),
    ("nine chaff", CHAFF9, {G: {}, C: {}, K: {}, N: {}}),
    ("ten chaff", [*CHAFF9, "iris-chaff-1"], {G: {"chaff": 1}, C: {"chaff": 1}, K: {"chaff": 1}, N: {"chaff": 1}}),
    ("twelve chaff", CHAFF9 + CHAFF3_MORE, {G: {"chaff": 3}, C: {"chaff": 3}, K: {"chaff": 3}, N: {"chaff": 3}}),
    ("sake cup as the tenth chaff", [*CHAFF9, SAKE], {G: {}, C: {"chaff": 1}, K: {"chaff": 1}, N: {"chaff": 1}}),
    ("sake cup as the fifth animal", [*ANIMALS4, SAKE],
     {G: {"animals": 1}, C: {"animals": 1}, K: {"animals": 1}, N: {"animals": 1}}),
    ("sake cup counted twice", [*ANIMALS4, SAKE, *CHAFF9], {
        G: {"animals": 1}, C: {"animals": 1, "chaff": 1}, K: {"animals": 1, "chaff": 1}, N: {"animals": 1, "chaff": 1},
    }),
    ("cherry viewing", [SAKE, CURTAIN], {G: {"cherry_viewing": 5}, C: {}, K: {"cherry_viewing": 1},
                                         N: {"cherry_viewing": 5}}),
    ("moon viewing", [SAKE, MOON], {G: {"moon_viewing": 5}, C: {}, K: {"moon_viewing": 1}, N: {"moon_viewing": 5}}),
    ("curtain and moon without the sake cup", [CURTAIN, MOON], {G: {}, C: {}, K: {}, N: {}}),
    ("both viewings and three brights", [SAKE, CURTAIN, MOON, "pine-crane"], {
        G: {"three_brights": 5, "cherry_viewing": 5, "moon_viewing": 5},
        C: {"three_brights": 6},
        K: {"three_brights": 5, "cherry_viewing": 1, "moon_viewing": 1},
        N: {"three_brights": 5, "cherry_viewing": 5, "moon_viewing": 5},
    }),
    ("five brights with more: only the highest bright yaku", [*BRIGHTS5, *POETRY], {
        G: {"five_brights": 10, "poetry_ribbons": 5},
        C: {"five_brights": 15, "poetry_ribbons": 6},
        K: {"five_brights": 10, "poetry_ribbons": 5},
        N: {"five_brights": 10, "poetry_ribbons": 5},
    }),
    # 5 brights, 10 ribbons, 9 animals, 24 chaff (+ the sake cup where it counts), both viewings.
    ("every card", list(CARD_IDS), {
        G: {"five_brights": 10, "poetry_ribbons": 5, "blue_ribbons": 5, "boar_deer_butterfly": 5,
            "ribbons": 6, "animals": 5, "chaff": 15, "cherry_viewing": 5, "moon_viewing": 5},
        C: {"five_brights": 15, "poetry_ribbons": 6, "blue_ribbons": 6, "boar_deer_butterfly": 5,
            "ribbons": 6, "animals": 5, "chaff": 16},
        K: {"five_brights": 10, "poetry_ribbons": 5, "blue_ribbons": 5, "poetry_blue_bonus": 10,
            "boar_deer_butterfly": 5, "ribbons": 6, "animals": 5, "chaff": 16, "cherry_viewing": 1,
            "moon_viewing": 1},
        N: {"five_brights": 10, "poetry_and_blue_ribbons": 14, "boar_deer_butterfly": 11, "chaff": 16,
            "cherry_viewing": 5, "moon_viewing": 5},
    }),
]  # fmt: skip


def _table() -> list[tuple[str, str, list[str], dict[str, int]]]:
    return [(case, name, cards, expect[name]) for case, cards, expect in CASES for name in (G, C, K, N)]


@pytest.mark.parametrize(("case", "preset_name", "cards", "expected"), _table(), ids=lambda v: str(v)[:40])
def test_yaku_of_a_capture_pile(
    case: str, preset_name: str, cards: list[str], expected: dict[str, int]
) -> None:
    result = score(cards, PRESETS[preset_name])
    got = {y.name.value: y.points for y in result.yaku}
    assert got == expected, case
    assert result.base == sum(expected.values())
    doubled = preset_name == N and result.base >= 7  # nintendo: a stop of 7 points or more is doubled
    assert result.total == (2 * result.base if doubled else result.base)  # no koi-koi call


def test_yaku_cards_are_the_cards_that_form_it() -> None:
    result = score([*BRIGHTS5, *POETRY, "iris-ribbon", "maple-deer"], PRESETS[G])
    by_name = {y.name.value: y for y in result.yaku}
    assert sorted(by_name["five_brights"].card_ids()) == sorted(BRIGHTS5)
    assert sorted(by_name["poetry_ribbons"].card_ids()) == sorted(POETRY)
    assert set(by_name) == {"five_brights", "poetry_ribbons"}


@pytest.mark.parametrize("preset_name", [G, C, K, N])
def test_only_the_highest_bright_yaku_counts(preset_name: str) -> None:
    rules = PRESETS[preset_name]
    for cards in (BRIGHTS5, DRY4, WET4):
        names = [y.name.value for y in score(cards, rules).yaku]
        assert len(names) == 1 and "brights" in names[0], (cards, names)


# Koi-koi scoring for 0..5 calls by the stopping player. Three dry brights: a yaku no call changes.
KOIKOI_TOTALS = {
    G: [5, 10, 20, 40, 80, 160],  # x 2^k
    C: [6, 6, 6, 6, 6, 6],  # no multiplier
    K: [5, 6, 7, 8, 10, 15],  # + k when k <= 3, x (k - 2) when k > 3
    N: [5, 5, 5, 5, 5, 5],  # the caller's own calls multiply nothing (the opponent's do: below)
}


@pytest.mark.parametrize("preset_name", [G, C, K, N])
@pytest.mark.parametrize("calls", range(6))
def test_koikoi_scoring(preset_name: str, calls: int) -> None:
    result = score(DRY3, PRESETS[preset_name], calls)
    assert result.base == KOIKOI_TOTALS[preset_name][0]
    assert result.total == KOIKOI_TOTALS[preset_name][calls]


@pytest.mark.parametrize("preset_name", [G, C, K, N])
def test_no_yaku_scores_nothing_whatever_the_calls(preset_name: str) -> None:
    assert score(["pine-crane", "pine-chaff-1"], PRESETS[preset_name], 3).total == 0


@pytest.mark.parametrize(
    ("calls", "viewing_points", "total"),
    [(0, 1, 1), (1, 3, 4), (2, 3, 5), (3, 3, 6), (4, 3, 6), (5, 3, 9)],
)
def test_koikoi_japan_viewing_worth_three_after_a_call(calls: int, viewing_points: int, total: int) -> None:
    result = score([SAKE, CURTAIN], PRESETS[K], calls)
    assert [(y.name.value, y.points) for y in result.yaku] == [("cherry_viewing", viewing_points)]
    assert result.total == total


@pytest.mark.parametrize("calls", range(4))
def test_guide_viewing_does_not_change_with_calls(calls: int) -> None:
    result = score([SAKE, MOON], PRESETS[G], calls)
    assert result.base == 5
    assert result.total == 5 * 2**calls


def test_score_accepts_a_mask_and_rejects_unknown_ids() -> None:
    rules = PRESETS[K]
    assert score(mask_of_ids(POETRY + BLUE), rules) == score(POETRY + BLUE, rules)
    with pytest.raises(UnknownCardError):
        score(["pine-crane", "pine-dragon"], rules)
    with pytest.raises(ValueError):
        score(POETRY, rules, -1)
    for mask in (-1, 1 << 48, True):  # not a mask of the 48 cards (a bool is no mask either)
        with pytest.raises(ValueError, match="a capture mask is a whole number"):
            score(mask, rules)
    assert card_id(47) == "paulownia-chaff-3"
    for bad in (-1, 48):
        with pytest.raises(IndexError, match=r"not in 0\.\.47"):
            card_id(bad)


# Nintendo stops: (cards, own calls, opponent's calls, total). Doubled from 7 points; doubled when the opponent
# called koi-koi earlier in the round; both doublings stack; the stopping player's own call multiplies nothing.
NINTENDO_STOPS = [
    (DRY3, 0, 0, 5),
    (DRY3, 1, 0, 5),
    (DRY3, 0, 1, 10),
    ([*BDB, SAKE], 0, 0, 6),  # 6 points: not doubled
    (WET4, 0, 0, 14),  # 7 points: doubled
    (WET4, 1, 0, 14),
    (DRY4, 0, 1, 32),  # 8 points, x2 from 7, x2 after the opponent's call
    (DRY4, 1, 1, 32),
    (POETRY + BLUE, 0, 0, 20),
]


@pytest.mark.parametrize(("cards", "calls", "opponent_calls", "total"), NINTENDO_STOPS)
def test_nintendo_stop_doublings(cards: list[str], calls: int, opponent_calls: int, total: int) -> None:
    assert score(cards, PRESETS[N], calls, opponent_calls).total == total


@pytest.mark.parametrize("preset_name", [G, C, K])
def test_the_opponents_calls_change_no_stop_of_the_other_presets(preset_name: str) -> None:
    rules = PRESETS[preset_name]
    for calls in range(3):
        assert score(DRY4, rules, calls, 2) == score(DRY4, rules, calls)


def test_a_grown_set_names_the_cards_that_grew_it() -> None:
    result = score([*POETRY, *BLUE, "iris-ribbon", "clover-boar"], PRESETS[N])
    (only,) = result.yaku
    assert only.name.value == "poetry_and_blue_ribbons" and only.points == 11
    assert sorted(only.card_ids()) == sorted([*POETRY, *BLUE, "iris-ribbon"])
