"""The Nintendo rules: the `nintendo` preset's rounds from explicit deals, the seven fields it brought, the rules
files of examples/rules/ that use each of them, and the fast scoring path against the full one."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine import (
    KOIKOI,
    PRESETS,
    STOP,
    Misdeal,
    Phase,
    RoundEnd,
    RoundStart,
    Rules,
    RulesError,
    State,
    YakuMade,
    apply,
    legal_actions,
    load_rules,
    mask_of_ids,
    new_match,
    rules_from_dict,
    score,
)
from referee.engine.rules import LATER_FIELDS, SetGrowth
from referee.engine.yaku import _BIT, evaluate
from tests.golden_play import golden_path, load
from tests.helpers import KOIKOI_DEAL, MATCHING, ROOT, TO_FIRST_YAKU, deal, only, play, start

N = "nintendo"
EXAMPLES = ROOT / "examples" / "rules"
POETRY = ["pine-ribbon", "plum-ribbon", "cherry-ribbon"]
BLUE = ["peony-ribbon", "chrysanthemum-ribbon", "maple-ribbon"]
RED = ["wisteria-ribbon", "iris-ribbon", "clover-ribbon", "willow-ribbon"]
DRY3 = ["pine-crane", "pampas-moon", "paulownia-phoenix"]
WET4 = ["pine-crane", "cherry-curtain", "willow-rainman", "paulownia-phoenix"]

# A second deal for a thrown-in first one: no month more than twice on the field.
PLAIN = deal(
    hand0=["pine-crane", "plum-warbler", "cherry-curtain", "wisteria-cuckoo", "iris-bridge", "peony-butterfly",
           "clover-boar", "pampas-moon"],
    hand1=["pine-ribbon", "plum-ribbon", "cherry-ribbon", "wisteria-ribbon", "iris-ribbon", "peony-ribbon",
           "clover-ribbon", "pampas-geese"],
    field=["pine-chaff-1", "plum-chaff-1", "cherry-chaff-1", "wisteria-chaff-1", "iris-chaff-1", "peony-chaff-1",
           "clover-chaff-1", "pampas-chaff-1"],
)  # fmt: skip


def held(cards: list[str], rules: Rules, calls: int = 0, opponent_calls: int = 0) -> tuple[dict[str, int], int]:
    """The yaku (name: points) of a pile and what a stop scores."""
    result = score(cards, rules, calls, opponent_calls)
    return {y.name.value: y.points for y in result.yaku}, result.total


# ------------------------------------------------------------------------------------------- the preset


def test_the_nintendo_preset_holds_the_numbers_of_rules_md() -> None:
    n = PRESETS[N]
    assert (n.rounds, n.starting_points, n.transfer_points, n.end_when_broke) == (12, 0, False, False)
    assert (n.leader.value, n.next_dealer.value, n.pass_deal_when_nobody_wins) == ("dealer", "winner_deals", True)
    assert (n.misdeal_field_three, n.misdeal_field_four, n.teshi_points, n.kuttsuki_points) == (True, False, 6, 6)
    assert (n.five_brights, n.four_brights_dry, n.four_brights_wet, n.three_brights) == (10, 8, 7, 5)
    assert (n.cherry_viewing, n.moon_viewing, n.cherry_viewing_after_koikoi, n.moon_viewing_after_koikoi) == (
        5, 5, 5, 5,
    )  # fmt: skip
    assert (n.poetry_ribbons, n.blue_ribbons, n.poetry_and_blue_ribbons, n.set_growth) == (5, 5, 10, SetGrowth.GROW)
    assert (n.koikoi_scoring.value, n.koikoi_calls_per_round, n.double_from, n.double_after_opponent_koikoi) == (
        "none", 1, 7, True,
    )  # fmt: skip
    assert (n.sake_as_chaff, n.exhausted_dealer_points) == (True, 0)


def test_the_new_fields_are_on_the_wire_only_when_set() -> None:
    for name in ("guide", "cardavia", "koikoi-japan"):
        assert not LATER_FIELDS & set(PRESETS[name].to_dict())  # the rule sets of koikoi/1 as they always were
        assert set(PRESETS[name].to_dict(complete=True)) >= LATER_FIELDS
    assert set(PRESETS[N].to_dict()) >= LATER_FIELDS
    for name in ("guide", "cardavia", "koikoi-japan"):  # the full rule sets in the hellos of older matches still load
        hello = json.loads(load(golden_path(name, 1))["seat1"][0])
        assert rules_from_dict(hello["rules"]) == PRESETS[name]
    assert rules_from_dict(PRESETS[N].to_dict()) == PRESETS[N]


# ------------------------------------------------------------------------------------- nintendo rounds


def test_a_stop_below_7_points_scores_its_points() -> None:
    s, _ = play(start(N, KOIKOI_DEAL), *TO_FIRST_YAKU)
    assert (s.phase, legal_actions(s)) == (Phase.KOIKOI, [STOP, KOIKOI])  # no call yet: the choice is offered
    s, events = play(s, "stop")
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason, s.scores) == (0, 5, "stop", (5, 0))


def test_after_one_koikoi_the_opponents_yaku_ends_the_round_doubled() -> None:
    s, _ = play(start(N, KOIKOI_DEAL), *TO_FIRST_YAKU, "koikoi")
    s, events = play(s, "play cherry-ribbon")  # seat 1: the pine, plum and cherry ribbons
    (made,) = only(events, YakuMade)
    assert made == YakuMade(1, 5, ("poetry_ribbons",), False)
    (end,) = only(events, RoundEnd)  # no choice: koi-koi was called once this round already
    assert (end.winner, end.points, end.reason, end.koikoi_calls) == (1, 10, "auto_stop", (1, 0))  # x2: seat 0 called
    assert dict(end.yaku) == {"poetry_ribbons": 5}
    assert s.round == 2 and s.phase is Phase.PLAY and s.scores == (0, 10)
    assert s.dealer == 1  # the winner deals


def test_the_callers_own_next_yaku_ends_the_round_without_a_multiplier() -> None:
    s, _ = play(start(N, KOIKOI_DEAL), *TO_FIRST_YAKU, "koikoi", "play iris-bridge")
    s, events = play(s, "play pampas-geese")  # the drawn swallow takes the lightning: five animals
    (made,) = only(events, YakuMade)
    assert made == YakuMade(0, 7, ("boar_deer_butterfly",), False)  # 5 + geese + swallow; no animals yaku
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (0, 14, "auto_stop")  # 7 points: doubled; the own call: x1


def test_three_cards_of_a_month_on_the_field_are_redealt() -> None:
    s = start(N, deal(**MATCHING), PLAIN)
    (misdeal,) = only(list(s.events), Misdeal)
    assert misdeal.reason == "field_three"
    (dealt,) = only(list(s.events), RoundStart)
    assert dealt.field == PLAIN.field
    japan = start("koikoi-japan", deal(**MATCHING), PLAIN)  # three cherries are no misdeal there
    assert not only(list(japan.events), Misdeal)


def _round_nobody_wins(rules: Rules) -> tuple[int, State]:
    """The first seeded match (seeds 0, 1, ...) whose first round both hands play out with nobody stopping: its
    first dealer and the state at the start of round 2. Every koi-koi choice is koi-koi."""
    for seed in range(200):
        state = new_match(rules, seed)
        rng = random.Random(seed)
        first = state.dealer
        while state.round == 1 and not state.is_over:
            legal = legal_actions(state)
            koikoi = [a for a in legal if a.kind.name == "KOIKOI"]
            state = apply(state, koikoi[0] if koikoi else rng.choice(legal))
        if state.history and state.history[0].winner is None:
            return first, state
    raise AssertionError("no round without a winner in 200 seeded matches")


@pytest.mark.parametrize(("name", "passes"), [(N, True), ("guide", False)])
def test_after_a_round_nobody_won_the_deal_passes(name: str, passes: bool) -> None:
    first, state = _round_nobody_wins(PRESETS[name])
    assert state.history[0].reason == "exhausted"
    assert state.dealer == (1 - first if passes else first)


# ---------------------------------------------------------------------------- the fields in rules files


def _example(name: str) -> Rules:
    return load_rules(EXAMPLES / name)


def _changed(rules: Rules, base: str) -> dict[str, Any]:
    b = PRESETS[base]
    return {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules)
            if f.name != "name" and getattr(rules, f.name) != getattr(b, f.name)}  # fmt: skip


def test_every_example_rules_file_loads_and_each_new_field_has_one() -> None:
    files = sorted(EXAMPLES.glob("*.toml"))
    assert len(files) >= len(LATER_FIELDS)
    used: set[str] = set()
    for path in files:
        rules = load_rules(path)
        new_match(rules, seed=1)
        used |= LATER_FIELDS & {k for k, v in rules.to_dict().items()}
    assert used == LATER_FIELDS


def test_stops_doubled_from_7() -> None:
    rules = _example("stops-doubled-from-7.toml")
    assert _changed(rules, "guide") == {"double_from": 7}
    assert held(DRY3, rules)[1] == 5
    assert held(DRY3, rules, 1)[1] == 20  # 5 x 2 for the call = 10: from 7 on, doubled
    assert held(WET4, rules)[1] == 14


def test_koikoi_doubles_the_opponents_stop() -> None:
    rules = _example("koikoi-doubles-the-opponents-stop.toml")
    assert _changed(rules, "cardavia") == {"rounds": 6, "double_after_opponent_koikoi": True}
    assert held(DRY3, rules, 0, 1)[1] == 12 and held(DRY3, rules, 1, 0)[1] == 6
    s, _ = play(start(rules, KOIKOI_DEAL), *TO_FIRST_YAKU, "koikoi", "play cherry-ribbon")
    assert s.phase is Phase.KOIKOI  # no limit on calls here: seat 1 chooses
    s, events = play(s, "stop")
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points) == (1, 12)  # poetry ribbons 6, doubled by seat 0's call


def test_one_koikoi_per_round() -> None:
    rules = _example("one-koikoi-per-round.toml")
    assert _changed(rules, "guide") == {"koikoi_calls_per_round": 1}
    s, _ = play(start(rules, KOIKOI_DEAL), *TO_FIRST_YAKU, "koikoi")
    s, events = play(s, "play cherry-ribbon")
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (1, 5, "auto_stop")
    guide, _ = play(start("guide", KOIKOI_DEAL), *TO_FIRST_YAKU, "koikoi", "play cherry-ribbon")
    assert guide.phase is Phase.KOIKOI


def test_deal_passes_when_nobody_wins() -> None:
    rules = _example("deal-passes-when-nobody-wins.toml")
    assert _changed(rules, "koikoi-japan") == {"exhausted_dealer_points": 0, "pass_deal_when_nobody_wins": True}
    first, state = _round_nobody_wins(rules)
    assert state.dealer == 1 - first
    kept = dataclasses.replace(rules, pass_deal_when_nobody_wins=False)
    first, state = _round_nobody_wins(kept)
    assert state.dealer == first


def test_redeal_three_of_a_month() -> None:
    rules = _example("redeal-three-of-a-month.toml")
    assert _changed(rules, "guide") == {"misdeal_field_four": False, "misdeal_field_three": True}
    s = start(rules, deal(**MATCHING), PLAIN)
    assert [m.reason for m in only(list(s.events), Misdeal)] == ["field_three"]
    two_cherries = deal(MATCHING["hand0"], [c if c != "maple-chaff-1" else "cherry-chaff-2" for c in MATCHING["hand1"]],
                [c if c != "cherry-chaff-2" else "maple-chaff-1" for c in MATCHING["field"]])  # fmt: skip
    assert not only(list(start(rules, two_cherries, PLAIN).events), Misdeal)


def test_growing_sets() -> None:
    rules = _example("growing-sets.toml")
    assert _changed(rules, "guide") == {"set_growth": SetGrowth.GROW}
    assert held([*POETRY, *RED[:2]], rules) == ({"poetry_ribbons": 7}, 7)
    # both sets as yaku of their own: the further ribbons count once, for the poetry ribbons
    assert held([*POETRY, *BLUE, RED[0]], rules)[0] == {"poetry_ribbons": 6, "blue_ribbons": 5}
    assert held(["clover-boar", "maple-deer", "peony-butterfly", "chrysanthemum-sake", "pampas-geese"], rules) == (
        {"boar_deer_butterfly": 7}, 7,
    )  # fmt: skip


def test_poetry_and_blue_as_one() -> None:
    rules = _example("poetry-and-blue-as-one.toml")
    assert _changed(rules, "koikoi-japan") == {"poetry_blue_bonus": 0, "poetry_and_blue_ribbons": 10}
    assert held(POETRY + BLUE, rules)[0] == {"poetry_and_blue_ribbons": 10, "ribbons": 2}  # no growth here
    assert held(POETRY, rules)[0] == {"poetry_ribbons": 5}


def test_nintendo_with_sets_and_counts() -> None:
    rules = _example("nintendo-sets-and-counts.toml")
    assert _changed(rules, N) == {"set_growth": SetGrowth.GROW_AND_COUNT}
    assert held([*POETRY, *RED[:2]], rules) == ({"poetry_ribbons": 7, "ribbons": 1}, 16)
    assert held([*POETRY, *RED[:2]], PRESETS[N]) == ({"poetry_ribbons": 7}, 14)


@pytest.mark.parametrize(
    ("changes", "fields"),
    [
        ({"misdeal_field_three": True}, ("misdeal_field_four", "misdeal_field_three")),
        ({"pass_deal_when_nobody_wins": True}, ("pass_deal_when_nobody_wins", "exhausted_dealer_points")),
        ({"poetry_and_blue_ribbons": 10}, ("poetry_blue_bonus", "poetry_and_blue_ribbons")),
        ({"set_growth": "grow", "poetry_ribbons": 0, "blue_ribbons": 0, "boar_deer_butterfly": 0},
         ("set_growth", "boar_deer_butterfly")),
    ],
)  # fmt: skip
def test_a_new_field_that_would_be_dead_is_refused(changes: dict[str, Any], fields: tuple[str, ...]) -> None:
    with pytest.raises(RulesError) as info:
        rules_from_dict({"base": "koikoi-japan", **changes}, source="mine.toml")
    message = str(info.value)
    assert message.startswith("mine.toml: ") and "\n" not in message
    assert all(f in message for f in fields)


@pytest.mark.parametrize(
    ("key", "value"),
    [("set_growth", "double"), ("double_from", -1), ("koikoi_calls_per_round", "once"),
     ("misdeal_field_three", 1), ("double_after_opponent_koikoi", "yes"), ("poetry_and_blue_ribbons", 2.5)],
)  # fmt: skip
def test_a_bad_value_of_a_new_field_names_it(key: str, value: object) -> None:
    with pytest.raises(RulesError, match=key):
        rules_from_dict({"base": N, key: value})


# ----------------------------------------------------------------------- the fast path and the full one

VARIANTS = [
    PRESETS[N],
    dataclasses.replace(PRESETS[N], set_growth=SetGrowth.GROW_AND_COUNT),
    dataclasses.replace(PRESETS[N], poetry_and_blue_ribbons=0),
    dataclasses.replace(PRESETS[N], poetry_and_blue_ribbons=0, poetry_ribbons=0),
    dataclasses.replace(PRESETS["guide"], set_growth=SetGrowth.GROW),
    dataclasses.replace(PRESETS["koikoi-japan"], set_growth=SetGrowth.GROW_AND_COUNT),
    dataclasses.replace(PRESETS[N], bright_yaku_combine=True),
    *(PRESETS[name] for name in ("guide", "cardavia", "koikoi-japan")),
]


@settings(max_examples=300, deadline=None)
@given(pile=st.integers(0, (1 << 48) - 1), calls=st.integers(0, 3), which=st.integers(0, len(VARIANTS) - 1))
def test_evaluate_agrees_with_score(pile: int, calls: int, which: int) -> None:
    rules = VARIANTS[which]
    result = score(pile, rules, calls)
    names = 0
    for y in result.yaku:
        names |= _BIT[y.name]  # the bit set evaluate() returns
    assert evaluate(pile, rules, calls) == (result.base, names)


@settings(max_examples=100, deadline=None)
@given(pile=st.integers(0, (1 << 48) - 1))
def test_a_grown_yaku_holds_its_cards(pile: int) -> None:
    ribbons = mask_of_ids([*POETRY, *BLUE, *RED])
    for y in score(pile, PRESETS[N]).yaku:
        assert y.cards & pile == y.cards
        if y.name.value in ("poetry_ribbons", "blue_ribbons", "poetry_and_blue_ribbons"):
            assert y.cards == pile & ribbons  # the set and every further ribbon
