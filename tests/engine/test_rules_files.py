"""Rules files: a base preset plus overrides, in TOML or JSON; clear errors for bad ones."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

import pytest

from referee.engine import PRESETS, Rules, RulesError, load_rules, new_match, rules_from_dict
from referee.engine.rules import KoikoiScoring, LastTurn

PRESET_NAMES = ("guide", "cardavia", "koikoi-japan", "nintendo")


def test_presets_are_named_and_loadable_by_name() -> None:
    assert set(PRESETS) == set(PRESET_NAMES)
    for name in PRESET_NAMES:
        assert load_rules(name) is PRESETS[name]
        assert PRESETS[name].name == name


def test_presets_hold_the_numbers_of_rules_md() -> None:
    guide, cardavia, japan = (PRESETS[n] for n in ("guide", "cardavia", "koikoi-japan"))
    assert (guide.rounds, cardavia.rounds, japan.rounds) == (6, 1, 8)
    assert (guide.must_match_from_hand, cardavia.must_match_from_hand, japan.must_match_from_hand) == (
        True, False, False,
    )  # fmt: skip
    assert (guide.sake_as_chaff, cardavia.sake_as_chaff, japan.sake_as_chaff) == (False, True, True)
    assert (japan.starting_points, japan.end_when_broke, japan.exhausted_dealer_points) == (30, True, 1)
    assert (cardavia.teshi_points, cardavia.kuttsuki_points) == (6, 6)
    assert (guide.teshi_points, guide.kuttsuki_points, japan.teshi_points) == (0, 0, 0)
    assert [r.koikoi_scoring for r in (guide, cardavia, japan)] == [
        KoikoiScoring.DOUBLE, KoikoiScoring.NONE, KoikoiScoring.ADD_THEN_MULTIPLY,
    ]  # fmt: skip
    assert [r.last_turn for r in (guide, cardavia, japan)] == [
        LastTurn.CHOICE,
        LastTurn.CHOICE,
        LastTurn.AUTO_STOP,
    ]


def test_a_toml_file_overrides_a_base_preset(tmp_path: Path) -> None:
    path = tmp_path / "short.toml"
    path.write_text('base = "koikoi-japan"\nrounds = 4\nsake_as_chaff = false\nkoikoi_scoring = "double"\n')
    rules = load_rules(path)
    expected = dataclasses.replace(
        PRESETS["koikoi-japan"], rounds=4, sake_as_chaff=False, koikoi_scoring=KoikoiScoring.DOUBLE,
        name=rules.name,
    )  # fmt: skip
    assert rules == expected
    assert rules.name != "koikoi-japan"  # a changed preset does not pass for the preset
    assert load_rules(str(path)) == rules
    new_match(rules, seed=3)  # usable


def test_a_json_file_overrides_a_base_preset(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"base": "guide", "rounds": 3, "tie_break": "draw", "name": "guide-3"}))
    rules = load_rules(path)
    assert rules.name == "guide-3"
    assert (rules.rounds, rules.tie_break.value) == (3, "draw")
    assert (
        dataclasses.replace(rules, rounds=6, tie_break=PRESETS["guide"].tie_break, name="guide")
        == PRESETS["guide"]
    )


def test_a_file_that_changes_nothing_is_the_preset(tmp_path: Path) -> None:
    path = tmp_path / "same.toml"
    path.write_text('base = "cardavia"\nrounds = 1\n')
    assert load_rules(path) == PRESETS["cardavia"]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('base = "guide"\nroundz = 3\n', "roundz"),
        ('base = "guide"\nrounds = 0\n', "rounds"),
        ('base = "guide"\nrounds = -2\n', "rounds"),
        ('base = "guide"\nrounds = "six"\n', "rounds"),
        ('base = "guide"\nrounds = 2.5\n', "rounds"),
        ('base = "guide"\nsake_as_chaff = "yes"\n', "sake_as_chaff"),
        ('base = "guide"\nkoikoi_scoring = "triple"\n', "koikoi_scoring"),
        ('base = "guide"\nlast_turn = 1\n', "last_turn"),
        ('base = "guide"\nfive_brights = -1\n', "five_brights"),
        ('base = "guide"\nchaff_min = 0\n', "chaff_min"),
        ('base = "guide"\nend_when_broke = true\n', "end_when_broke"),  # starting points are 0
        ('base = "poker"\n', "base"),
    ],
)
def test_bad_rules_files_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(RulesError) as info:
        load_rules(path)
    message = str(info.value)
    assert field in message
    assert "\n" not in message
    # the same mapping as JSON fails the same way
    json_path = tmp_path / "bad.json"
    json_path.write_text(json.dumps(tomllib.loads(text)))
    with pytest.raises(RulesError, match=field):
        load_rules(json_path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("broken.toml", "base = \n"),
        ("broken.json", '{"base": "guide",'),
        ("list.json", '["guide"]'),
        ("missing.toml", None),
    ],
)
def test_unreadable_rules_files_are_rules_errors(tmp_path: Path, name: str, text: str | None) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(RulesError) as info:
        load_rules(path)
    assert "\n" not in str(info.value).strip()


def test_without_a_base_every_field_is_needed() -> None:
    with pytest.raises(RulesError, match="base"):
        rules_from_dict({"rounds": 3})
    full = PRESETS["koikoi-japan"].to_dict()
    assert rules_from_dict(full) == PRESETS["koikoi-japan"]


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_preset_round_trips_through_toml_and_json(tmp_path: Path, name: str) -> None:
    rules: Rules = PRESETS[name]
    toml_path = tmp_path / f"{name}.toml"
    toml_path.write_text(rules.to_toml())
    assert load_rules(toml_path) == rules
    json_path = tmp_path / f"{name}.json"
    json_path.write_text(json.dumps(rules.to_dict()))
    assert load_rules(json_path) == rules


@pytest.mark.parametrize("yaku", ["cherry_viewing", "moon_viewing"])
def test_a_viewing_yaku_set_to_0_never_scores_even_after_koikoi(yaku: str) -> None:
    from referee.engine import mask_of_ids, score

    rules = rules_from_dict({"base": "koikoi-japan", yaku: 0})
    assert getattr(rules, f"{yaku}_after_koikoi") == 0
    pile = mask_of_ids(["chrysanthemum-sake", "cherry-curtain" if yaku == "cherry_viewing" else "pampas-moon"])
    for calls in (0, 1, 3):
        assert yaku not in {y.name.value for y in score(pile, rules, calls).yaku}
    japan = PRESETS["koikoi-japan"]
    assert yaku in {y.name.value for y in score(pile, japan, 1).yaku}  # the preset still scores it


@pytest.mark.parametrize(
    ("changes", "fields"),
    [
        ({"moon_viewing": 0, "moon_viewing_after_koikoi": 2}, ("moon_viewing_after_koikoi", "moon_viewing")),
        ({"cherry_viewing": 0, "cherry_viewing_after_koikoi": 1}, ("cherry_viewing_after_koikoi", "cherry_viewing")),
        ({"teshi_points": 6}, ("teshi_points", "misdeal_hand_four")),
    ],
)
def test_a_dead_option_is_refused_naming_both_fields(changes: dict[str, int], fields: tuple[str, str]) -> None:
    with pytest.raises(RulesError) as info:
        rules_from_dict({"base": "koikoi-japan", **changes})
    assert all(f"'{f}'" in str(info.value) for f in fields)
    assert rules_from_dict({"base": "koikoi-japan", **changes, "misdeal_hand_four": False, "moon_viewing": 1,
                            "cherry_viewing": 1})  # the same options are fine once alive


def test_an_edited_preset_file_does_not_keep_the_preset_name(tmp_path: Path) -> None:
    text = PRESETS["koikoi-japan"].to_toml().replace("\nrounds = 8", "\nrounds = 3")
    assert "rounds = 3" in text
    path = tmp_path / "x.toml"
    path.write_text(text)
    rules = load_rules(path)
    assert rules.rounds == 3 and rules.name == "koikoi-japan-custom"
    unchanged = tmp_path / "same.toml"
    unchanged.write_text(PRESETS["koikoi-japan"].to_toml())
    assert load_rules(unchanged).name == "koikoi-japan"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[" * 100_000, "nested too deeply"),
        ('{"hands": ' * 5000 + "1" + "}" * 5000, "nested too deeply"),
        ("not json", "not JSON"),
        ('"deal"', "expected a JSON object"),
        ("[1, 2]", "a sequence of deals, a line of a deal suite (deals generate), which tournament --deals takes"),
    ],
)
def test_a_bad_deals_line_is_a_deal_error_naming_the_line(text: str, words: str) -> None:
    from referee.engine import DealError, deals_from_lines

    with pytest.raises(DealError) as info:
        deals_from_lines(["", text])
    assert str(info.value).startswith("line 2: ") and words in str(info.value)
