"""Scripted rounds from explicit deals, preset by preset, checked against RULES.md.

Each deal is written out card by card; the stock lists only the cards the script draws, the rest of the deck
follows in card order. Seat 0 leads every scripted round (the first dealer is chosen for that).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from referee.engine import (
    CARD_IDS,
    KOIKOI,
    PRESETS,
    STOP,
    Action,
    ActionKind,
    Deal,
    Draw,
    Event,
    HandYakuMade,
    IllegalActionError,
    MatchEnd,
    Misdeal,
    Phase,
    Play,
    RoundEnd,
    RoundStart,
    Rules,
    State,
    YakuMade,
    apply,
    card,
    legal_actions,
    mask_of_ids,
)
from referee.protocol import action_json
from tests.helpers import KOIKOI_DEAL, MATCHING, TO_FIRST_YAKU, action, deal, first_dealer_for, only, play, start

G, C, K = "guide", "cardavia", "koikoi-japan"


# --------------------------------------------------------------------------------------------- helpers


def mirrored(d: Deal) -> Deal:
    """The same deal with the two hands swapped."""
    return Deal((d.hands[1], d.hands[0]), d.field, d.stock)


def ids(mask: int) -> set[str]:
    return {CARD_IDS[c] for c in range(48) if mask >> c & 1}


def snapshot(state: State) -> dict[str, Any]:
    """Every attribute of a state, to check that nothing changed (a plain or a mypyc-compiled class alike)."""
    names = [n for n in dir(state) if not n.startswith("_") and not callable(getattr(state, n))]
    assert {"hands", "field", "stock", "captured", "scores", "events"} <= set(names)
    return {name: getattr(state, name) for name in names}


# ----------------------------------------------------------------------------- the hand and draw steps


@pytest.mark.parametrize("name", [G, C, K])
def test_two_matches_in_the_hand_step_let_the_player_choose(name: str) -> None:
    s = start(name, deal(**MATCHING, stock=["iris-ribbon"]))
    crane = card("pine-crane")
    crane_actions = [a for a in legal_actions(s) if a.card == crane]
    assert crane_actions == [
        Action(ActionKind.PLAY, crane, card("pine-chaff-1")),
        Action(ActionKind.PLAY, crane, card("pine-chaff-2")),
    ]
    before = snapshot(s)
    for bad in ("play pine-crane", "play pine-crane capture cherry-chaff-1"):
        with pytest.raises(IllegalActionError):
            apply(s, action(s, bad))
    assert snapshot(s) == before
    s, events = play(s, "play pine-crane capture pine-chaff-2")
    assert only(events, Play) == [Play(0, crane, mask_of_ids(["pine-crane", "pine-chaff-2"]))]
    # the drawn iris ribbon takes the iris chaff
    assert ids(s.captured[0]) == {"pine-crane", "pine-chaff-2", "iris-ribbon", "iris-chaff-1"}
    assert "pine-chaff-1" in ids(s.field) and "pine-chaff-2" not in ids(s.field)
    assert (s.phase, s.to_move) == (Phase.PLAY, 1)


@pytest.mark.parametrize("name", [G, C, K])
def test_three_matches_in_the_hand_step_take_all_four(name: str) -> None:
    s = start(name, deal(**MATCHING, stock=["iris-ribbon"]))
    curtain = card("cherry-curtain")
    assert [a for a in legal_actions(s) if a.card == curtain] == [Action(ActionKind.PLAY, curtain)]
    s, _ = play(s, "play cherry-curtain")
    cherries = {"cherry-curtain", "cherry-ribbon", "cherry-chaff-1", "cherry-chaff-2"}
    assert cherries <= ids(s.captured[0])
    assert not cherries & ids(s.field)


@pytest.mark.parametrize("name", [G, C, K])
def test_two_matches_in_the_draw_step_let_the_player_choose(name: str) -> None:
    s = start(name, deal(**MATCHING, stock=["pine-ribbon"]))
    s, events = play(s, "play cherry-curtain")
    ribbon = card("pine-ribbon")
    assert only(events, Draw) == [Draw(0, ribbon, 0, True)]
    assert s.phase is Phase.DRAW_CHOICE and s.to_move == 0 and s.pending == ribbon
    assert legal_actions(s) == [
        Action(ActionKind.CHOOSE, ribbon, card("pine-chaff-1")),
        Action(ActionKind.CHOOSE, ribbon, card("pine-chaff-2")),
    ]
    assert [action_json(a) for a in legal_actions(s)] == [
        {"capture": "pine-chaff-1"},
        {"capture": "pine-chaff-2"},
    ]
    s, _ = play(s, "capture pine-chaff-1")
    assert {"pine-ribbon", "pine-chaff-1"} <= ids(s.captured[0])
    assert "pine-chaff-2" in ids(s.field) and "pine-ribbon" not in ids(s.field)
    assert (s.phase, s.to_move) == (Phase.PLAY, 1)


@pytest.mark.parametrize("name", [G, C, K])
def test_three_matches_in_the_draw_step_take_all_four(name: str) -> None:
    hand0 = [c if c != "cherry-curtain" else "paulownia-chaff-3" for c in MATCHING["hand0"]]
    s = start(name, deal(hand0, MATCHING["hand1"], MATCHING["field"], stock=["cherry-curtain"]))
    s, events = play(s, "play pine-crane capture pine-chaff-1")
    took = mask_of_ids(["cherry-curtain", "cherry-ribbon", "cherry-chaff-1", "cherry-chaff-2"])
    assert only(events, Draw) == [Draw(0, card("cherry-curtain"), took)]
    assert s.captured[0] & took == took
    assert (s.phase, s.to_move) == (Phase.PLAY, 1)


@pytest.mark.parametrize("name", [C, K])
def test_a_card_that_matches_nothing_stays_on_the_field(name: str) -> None:
    s = start(name, deal(**MATCHING, stock=["iris-ribbon"]))
    deer = card("maple-deer")
    assert Action(ActionKind.PLAY, deer) in legal_actions(s)
    s, events = play(s, "play maple-deer")
    assert only(events, Play) == [Play(0, deer, 0)]
    assert "maple-deer" in ids(s.field)
    assert ids(s.captured[0]) == {"iris-ribbon", "iris-chaff-1"}


def test_guide_must_match_from_the_hand_when_it_can() -> None:
    s = start(G, deal(**MATCHING, stock=["iris-ribbon"]))
    assert [str(a) for a in legal_actions(s)] == [
        "play pine-crane capture pine-chaff-1",
        "play pine-crane capture pine-chaff-2",
        "play cherry-curtain",
    ]
    before = snapshot(s)
    with pytest.raises(IllegalActionError):
        apply(s, action(s, "play maple-deer"))
    assert snapshot(s) == before
    # Seat 1 holds no card of a field month: any card may be discarded.
    s, _ = play(s, "play cherry-curtain")
    assert s.to_move == 1
    assert legal_actions(s) == sorted(Action(ActionKind.PLAY, card(c)) for c in MATCHING["hand1"])


# --------------------------------------------------------------------------------------------- koi-koi


@pytest.mark.parametrize("name", [G, C, K])
def test_a_yaku_offers_stop_or_koikoi_and_stop_scores(name: str) -> None:
    s, events = play(start(name, KOIKOI_DEAL), *TO_FIRST_YAKU)
    assert only(events, YakuMade) == [YakuMade(0, 5, ("boar_deer_butterfly",), False)]
    assert (s.phase, s.to_move) == (Phase.KOIKOI, 0)
    assert legal_actions(s) == [STOP, KOIKOI]
    s, events = play(s, "stop")
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (0, 5, "stop")
    assert s.scores == {G: (5, 0), C: (5, 0), K: (35, 25)}[name]


@pytest.mark.parametrize("name", [G, C, K])
def test_koikoi_then_the_opponent_stops_and_the_caller_gets_nothing(name: str) -> None:
    s, _ = play(start(name, KOIKOI_DEAL), *TO_FIRST_YAKU, "koikoi", "play cherry-ribbon")
    assert (s.phase, s.to_move) == (Phase.KOIKOI, 1)
    s, events = play(s, "stop")
    (end,) = only(events, RoundEnd)
    poetry = {G: 5, C: 6, K: 5}[name]
    assert (end.winner, end.points, end.reason, end.koikoi_calls) == (1, poetry, "stop", (1, 0))
    assert s.scores == {G: (0, 5), C: (0, 6), K: (25, 35)}[name]


@pytest.mark.parametrize("name", [G, C, K])
def test_koikoi_then_the_caller_scores_again_with_the_multiplier(name: str) -> None:
    s, _ = play(
        start(name, KOIKOI_DEAL),
        *TO_FIRST_YAKU, "koikoi",
        "play cherry-ribbon", "koikoi",  # seat 1 makes poetry ribbons and plays on too
        "play pampas-geese",  # the drawn swallow takes the lightning: five animals
    )  # fmt: skip
    (made,) = only(s.events, YakuMade)
    assert made == YakuMade(0, 6, ("boar_deer_butterfly", "animals"), False)
    s, events = play(s, "stop")
    (end,) = only(events, RoundEnd)
    # boar-deer-butterfly 5 + animals 1, after one call: guide x2, cardavia no multiplier, koikoi-japan +1
    points = {G: 12, C: 6, K: 7}[name]
    assert (end.winner, end.points, end.koikoi_calls) == (0, points, (1, 1))
    assert s.scores == {G: (12, 0), C: (6, 0), K: (37, 23)}[name]


# Seat 0 makes cherry viewing on its first turn, a plain capture on its second and moon viewing on its third.
VIEWING_DEAL = deal(
    hand0=["chrysanthemum-sake", "pampas-moon", "pine-chaff-2", "peony-chaff-1", "maple-chaff-1",
           "willow-lightning", "paulownia-chaff-1", "paulownia-chaff-2"],
    hand1=["plum-chaff-2", "wisteria-chaff-2", "peony-ribbon", "maple-ribbon", "willow-swallow",
           "paulownia-chaff-3", "maple-deer", "peony-butterfly"],
    field=["chrysanthemum-chaff-1", "cherry-chaff-1", "pampas-chaff-1", "pine-chaff-1", "plum-chaff-1",
           "wisteria-chaff-1", "iris-chaff-1", "clover-chaff-1"],
    stock=["cherry-curtain", "chrysanthemum-ribbon", "willow-ribbon", "maple-chaff-2", "iris-ribbon"],
)  # fmt: skip


@pytest.mark.parametrize(("name", "before", "after", "total"), [(G, 5, 10, 20), (K, 1, 6, 7)])
def test_viewing_points_before_and_after_a_koikoi_call(
    name: str, before: int, after: int, total: int
) -> None:
    s, events = play(start(name, VIEWING_DEAL), "play chrysanthemum-sake")
    assert only(events, YakuMade) == [YakuMade(0, before, ("cherry_viewing",), False)]
    s, events = play(s, "koikoi", "play plum-chaff-2", "play pine-chaff-2")
    assert not only(events, YakuMade)  # a plain capture after the call is no new yaku: no choice
    assert (s.phase, s.to_move) == (Phase.PLAY, 1)
    s, events = play(s, "play wisteria-chaff-2", "play pampas-moon")
    assert only(events, YakuMade) == [YakuMade(0, after, ("cherry_viewing", "moon_viewing"), False)]
    s, events = play(s, "stop")
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points) == (0, total)
    assert dict(end.yaku) == {"cherry_viewing": after // 2, "moon_viewing": after // 2}


def test_cardavia_has_no_viewing() -> None:
    s, events = play(start(C, VIEWING_DEAL), "play chrysanthemum-sake")
    assert not only(events, YakuMade)
    assert (s.phase, s.to_move) == (Phase.PLAY, 1)


# --------------------------------------------------------------------------------------- the last turn

# Nobody makes a yaku until seat 0's eighth and last card: ribbons, and ten chaff where the sake cup is chaff.
LAST_DEAL = deal(
    hand0=["pine-ribbon", "peony-chaff-2", "clover-ribbon", "clover-chaff-2", "chrysanthemum-sake",
           "willow-swallow", "willow-lightning", "paulownia-phoenix"],
    hand1=["plum-ribbon", "cherry-curtain", "iris-ribbon", "clover-boar", "pampas-chaff-1", "maple-deer",
           "maple-chaff-1", "maple-chaff-2"],
    field=["pine-chaff-1", "plum-warbler", "plum-chaff-2", "wisteria-ribbon", "wisteria-chaff-2",
           "peony-butterfly", "clover-chaff-1", "pampas-moon"],
    stock=["cherry-chaff-1", "willow-rainman", "chrysanthemum-ribbon", "maple-ribbon", "wisteria-chaff-1",
           "iris-bridge", "cherry-ribbon", "paulownia-chaff-1", "willow-ribbon", "paulownia-chaff-3",
           "pine-crane", "iris-chaff-2", "pine-chaff-2", "wisteria-cuckoo", "pampas-geese", "peony-chaff-1"],
)  # fmt: skip
LAST_ACTIONS = (
    "play peony-chaff-2", "play pampas-chaff-1", "play pine-ribbon", "play clover-boar",
    "play willow-lightning", "capture wisteria-chaff-2", "play maple-chaff-2", "play chrysanthemum-sake",
    "play plum-ribbon capture plum-warbler", "play paulownia-phoenix", "play iris-ribbon",
    "play willow-swallow", "play cherry-curtain", "play clover-chaff-2", "play maple-deer",
)  # fmt: skip
LAST_PLAY = "play clover-ribbon"


def test_koikoi_japan_stops_by_itself_on_the_last_turn() -> None:
    s, events = play(start(K, LAST_DEAL), *LAST_ACTIONS)
    assert not only(events, YakuMade)
    assert s.hands[0] == mask_of_ids(["clover-ribbon"])
    s, events = play(s, LAST_PLAY)
    assert only(events, YakuMade) == [YakuMade(0, 2, ("ribbons", "chaff"), True)]
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (0, 2, "auto_stop")
    assert s.scores == (32, 28)
    assert s.round == 2 and s.phase is Phase.PLAY


@pytest.mark.parametrize(("name", "points", "yaku"), [(G, 1, ("ribbons",)), (C, 2, ("ribbons", "chaff"))])
def test_the_last_turn_offers_the_choice(name: str, points: int, yaku: tuple[str, ...]) -> None:
    s, events = play(start(name, LAST_DEAL), *LAST_ACTIONS)
    assert not only(events, YakuMade)
    s, events = play(s, LAST_PLAY)
    assert only(events, YakuMade) == [YakuMade(0, points, yaku, True)]
    assert (s.phase, s.to_move) == (Phase.KOIKOI, 0)
    assert legal_actions(s) == [STOP, KOIKOI]
    _, events = play(s, "stop")
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (0, points, "stop")


# ------------------------------------------------------------------------------------- exhausted hands

# Sixteen turns and nobody makes a yaku.
QUIET_DEAL = deal(
    hand0=["plum-chaff-2", "iris-bridge", "clover-chaff-2", "pampas-chaff-2", "chrysanthemum-chaff-1",
           "maple-chaff-1", "willow-rainman", "paulownia-phoenix"],
    hand1=["plum-chaff-1", "cherry-ribbon", "cherry-chaff-2", "wisteria-chaff-1", "iris-chaff-2",
           "clover-boar", "maple-ribbon", "paulownia-chaff-3"],
    field=["cherry-chaff-1", "wisteria-cuckoo", "wisteria-chaff-2", "iris-chaff-1", "pampas-moon",
           "chrysanthemum-sake", "chrysanthemum-ribbon", "willow-swallow"],
    stock=["pine-crane", "pine-chaff-2", "pampas-geese", "clover-ribbon", "willow-lightning", "plum-warbler",
           "peony-ribbon", "maple-chaff-2", "iris-ribbon", "cherry-curtain", "maple-deer", "peony-chaff-1",
           "pampas-chaff-1", "plum-ribbon", "paulownia-chaff-2", "pine-ribbon"],
)  # fmt: skip
QUIET_ACTIONS = (
    "play chrysanthemum-chaff-1 capture chrysanthemum-ribbon",
    "play wisteria-chaff-1 capture wisteria-chaff-2", "play willow-rainman", "play iris-chaff-2",
    "play clover-chaff-2", "play cherry-chaff-2", "play plum-chaff-2", "play paulownia-chaff-3",
    "play maple-chaff-1", "play plum-chaff-1", "play paulownia-phoenix", "play cherry-ribbon",
    "play iris-bridge", "play maple-ribbon", "play pampas-chaff-2", "play clover-boar",
)  # fmt: skip


def test_guide_exhausted_hands_score_nothing_and_keep_the_dealer() -> None:
    s = start(G, QUIET_DEAL, KOIKOI_DEAL)
    assert (s.dealer, s.leader) == (1, 0)
    s, events = play(s, *QUIET_ACTIONS)
    assert not only(events, YakuMade)
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (None, 0, "exhausted")
    assert s.scores == (0, 0)
    (second,) = only(events, RoundStart)
    assert (second.round, second.dealer, second.leader) == (2, 1, 0)
    assert (s.to_move, s.hands) == (0, KOIKOI_DEAL.hands)


def test_cardavia_exhausted_hands_are_a_drawn_match() -> None:
    s, events = play(start(C, QUIET_DEAL), *QUIET_ACTIONS)
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (None, 0, "exhausted")
    assert only(events, MatchEnd) == [MatchEnd(None, (0, 0), 1, "rounds")]
    assert s.is_over and legal_actions(s) == []


def test_koikoi_japan_exhausted_hands_pay_the_dealer_who_deals_again() -> None:
    s = start(K, QUIET_DEAL, KOIKOI_DEAL)
    assert (s.dealer, s.leader) == (0, 0)
    s, events = play(s, *QUIET_ACTIONS)
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (0, 1, "exhausted")
    assert s.scores == (31, 29)
    (second,) = only(events, RoundStart)
    assert (second.round, second.dealer, second.leader) == (2, 0, 0)


@pytest.mark.parametrize(
    ("answer", "winner", "points", "reason"), [("stop", 1, 1, "stop"), ("koikoi", None, 0, "exhausted")]
)
def test_guide_koikoi_on_the_last_turn_leaves_the_opponent_the_last_word(
    answer: str, winner: int | None, points: int, reason: str
) -> None:
    s, _ = play(start(G, LAST_DEAL), *LAST_ACTIONS, LAST_PLAY, "koikoi", "play maple-chaff-1")
    # Seat 1's last card makes five animals; the round ends whatever seat 1 answers, and seat 0 gets nothing.
    assert only(s.events, YakuMade) == [YakuMade(1, 1, ("animals",), True)]
    assert legal_actions(s) == [STOP, KOIKOI]
    s, events = play(s, answer)
    (end,) = only(events, RoundEnd)
    assert (end.winner, end.points, end.reason, end.koikoi_calls) == (
        winner,
        points,
        reason,
        (1, int(answer == "koikoi")),
    )
    assert s.scores == ((0, 1) if winner == 1 else (0, 0))
    assert s.round == 2


# --------------------------------------------------------------------------------------------- dealing

FOUR_PINES_ON_FIELD = deal(
    hand0=["plum-warbler", "cherry-chaff-1", "wisteria-chaff-1", "iris-chaff-1", "peony-chaff-1",
           "clover-chaff-1", "pampas-chaff-1", "maple-chaff-1"],
    hand1=["plum-chaff-1", "cherry-chaff-2", "wisteria-chaff-2", "iris-chaff-2", "peony-chaff-2",
           "clover-chaff-2", "pampas-chaff-2", "maple-chaff-2"],
    field=["pine-crane", "pine-ribbon", "pine-chaff-1", "pine-chaff-2", "chrysanthemum-chaff-1",
           "willow-lightning", "paulownia-chaff-1", "paulownia-chaff-2"],
)  # fmt: skip
FOUR_PAIRS_ON_FIELD = deal(
    hand0=["pine-crane", "cherry-curtain", "iris-bridge", "peony-butterfly", "clover-boar", "pampas-moon",
           "chrysanthemum-sake", "maple-deer"],
    hand1=["pine-ribbon", "cherry-ribbon", "iris-ribbon", "peony-ribbon", "clover-ribbon", "pampas-geese",
           "chrysanthemum-ribbon", "maple-ribbon"],
    field=["plum-chaff-1", "plum-chaff-2", "wisteria-chaff-1", "wisteria-chaff-2", "willow-lightning",
           "willow-swallow", "paulownia-chaff-1", "paulownia-chaff-2"],
)  # fmt: skip
TESHI_AND_NOTHING = deal(  # seat 0 holds the four pines
    hand0=["pine-crane", "pine-ribbon", "pine-chaff-1", "pine-chaff-2", "iris-chaff-1", "peony-chaff-1",
           "clover-chaff-1", "maple-chaff-1"],
    hand1=["plum-warbler", "cherry-chaff-1", "wisteria-chaff-1", "pampas-chaff-1", "chrysanthemum-chaff-1",
           "willow-lightning", "paulownia-chaff-1", "iris-chaff-2"],
    field=["plum-chaff-1", "cherry-chaff-2", "wisteria-chaff-2", "pampas-chaff-2", "chrysanthemum-chaff-2",
           "willow-swallow", "paulownia-chaff-2", "peony-chaff-2"],
)  # fmt: skip
NOTHING_AND_KUTTSUKI = deal(  # seat 1 holds four pairs
    hand0=["pine-crane", "iris-chaff-1", "peony-chaff-1", "clover-chaff-1", "maple-chaff-1",
           "chrysanthemum-chaff-1", "willow-lightning", "paulownia-chaff-1"],
    hand1=["plum-warbler", "plum-chaff-1", "cherry-chaff-1", "cherry-chaff-2", "wisteria-chaff-1",
           "wisteria-chaff-2", "pampas-chaff-1", "pampas-chaff-2"],
    field=["pine-chaff-1", "iris-chaff-2", "peony-chaff-2", "clover-chaff-2", "maple-chaff-2",
           "chrysanthemum-chaff-2", "willow-swallow", "paulownia-chaff-2"],
)  # fmt: skip
TESHI_AND_KUTTSUKI = deal(
    hand0=["pine-crane", "pine-ribbon", "pine-chaff-1", "pine-chaff-2", "iris-chaff-1", "peony-chaff-1",
           "clover-chaff-1", "maple-chaff-1"],
    hand1=["plum-warbler", "plum-chaff-1", "cherry-chaff-1", "cherry-chaff-2", "wisteria-chaff-1",
           "wisteria-chaff-2", "pampas-chaff-1", "pampas-chaff-2"],
    field=["iris-chaff-2", "peony-chaff-2", "clover-chaff-2", "maple-chaff-2", "chrysanthemum-chaff-1",
           "willow-lightning", "paulownia-chaff-1", "plum-chaff-2"],
)  # fmt: skip


def _dealt(s: State) -> tuple[list[Misdeal], RoundStart]:
    (round_start,) = only(s.events, RoundStart)
    return only(s.events, Misdeal), round_start


@pytest.mark.parametrize("name", [G, C, K])
def test_four_cards_of_a_month_on_the_field_is_a_misdeal(name: str) -> None:
    s = start(name, FOUR_PINES_ON_FIELD, QUIET_DEAL)
    misdeals, dealt = _dealt(s)
    assert [(m.round, m.reason, m.field) for m in misdeals] == [(1, "field_four", FOUR_PINES_ON_FIELD.field)]
    assert (dealt.round, dealt.hands, dealt.field, dealt.stock) == (1, *dataclasses.astuple(QUIET_DEAL))
    assert (s.hands, s.field, s.round) == (QUIET_DEAL.hands, QUIET_DEAL.field, 1)
    assert s.events.index(misdeals[0]) < s.events.index(dealt)


@pytest.mark.parametrize(("name", "redeal"), [(G, False), (C, True), (K, False)])
def test_four_pairs_on_the_field(name: str, redeal: bool) -> None:
    s = start(name, FOUR_PAIRS_ON_FIELD, QUIET_DEAL)
    misdeals, dealt = _dealt(s)
    assert [m.reason for m in misdeals] == (["field_four_pairs"] if redeal else [])
    assert dealt.field == (QUIET_DEAL if redeal else FOUR_PAIRS_ON_FIELD).field


def test_cardavia_teshi_scores_six_and_ends_the_deal() -> None:
    s = start(C, TESHI_AND_NOTHING)
    assert only(s.events, HandYakuMade) == [HandYakuMade(0, "teshi", 6)]
    (end,) = only(s.events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (0, 6, "teshi")
    assert s.is_over and s.scores == (6, 0) and s.winner == 0


def test_cardavia_kuttsuki_scores_six_and_ends_the_deal() -> None:
    s = start(C, NOTHING_AND_KUTTSUKI)
    assert only(s.events, HandYakuMade) == [HandYakuMade(1, "kuttsuki", 6)]
    (end,) = only(s.events, RoundEnd)
    assert (end.winner, end.points, end.reason) == (1, 6, "kuttsuki")
    assert s.is_over and s.scores == (0, 6) and s.winner == 1


def test_cardavia_hand_yaku_on_both_sides_is_a_redeal() -> None:
    s = start(C, TESHI_AND_KUTTSUKI, QUIET_DEAL)
    misdeals, dealt = _dealt(s)
    assert [m.reason for m in misdeals] == ["hand_yaku_both"]
    assert not only(s.events, HandYakuMade)
    assert dealt.hands == QUIET_DEAL.hands and s.phase is Phase.PLAY


def test_guide_has_no_hand_yaku_and_no_hand_misdeal() -> None:
    for d in (TESHI_AND_NOTHING, NOTHING_AND_KUTTSUKI):
        s = start(G, d, QUIET_DEAL)
        misdeals, dealt = _dealt(s)
        assert not misdeals and not only(s.events, HandYakuMade)
        assert dealt.hands == d.hands and s.phase is Phase.PLAY


def test_koikoi_japan_four_of_a_month_in_a_hand_is_a_misdeal_and_four_pairs_is_not() -> None:
    s = start(K, TESHI_AND_NOTHING, QUIET_DEAL)
    misdeals, dealt = _dealt(s)
    assert [m.reason for m in misdeals] == ["hand_four"]
    assert dealt.hands == QUIET_DEAL.hands and not only(s.events, HandYakuMade)
    s = start(K, NOTHING_AND_KUTTSUKI, QUIET_DEAL)
    misdeals, dealt = _dealt(s)
    assert not misdeals and dealt.hands == NOTHING_AND_KUTTSUKI.hands


# ------------------------------------------------------------------------------------- dealer rotation


@pytest.mark.parametrize(
    ("name", "round1", "winner_seat0", "winner_seat1"),
    [
        # (dealer, leader) of round 1, of round 2 after seat 0 wins, of round 2 after seat 1 wins
        (G, (1, 0), (1, 0), (0, 1)),  # the winner leads; the non-dealer leads
        (K, (0, 0), (0, 0), (1, 1)),  # the winner deals; the dealer leads
    ],
)
def test_who_deals_and_leads_the_next_round(
    name: str, round1: tuple[int, int], winner_seat0: tuple[int, int], winner_seat1: tuple[int, int]
) -> None:
    s = start(name, KOIKOI_DEAL, QUIET_DEAL)
    assert (s.dealer, s.leader, s.to_move) == (*round1, round1[1])
    for tail, expected in (
        (("stop",), winner_seat0),
        (("koikoi", "play cherry-ribbon", "stop"), winner_seat1),
    ):
        after, events = play(s, *TO_FIRST_YAKU, *tail)
        (second,) = only(events, RoundStart)
        assert (second.round, second.dealer, second.leader) == (2, *expected)
        assert (after.dealer, after.leader, after.to_move) == (*expected, expected[1])
        assert after.hands == QUIET_DEAL.hands  # the next explicit deal


def test_cardavia_is_a_single_deal() -> None:
    s, events = play(start(C, KOIKOI_DEAL), *TO_FIRST_YAKU, "stop")
    assert only(events, MatchEnd) == [MatchEnd(0, (5, 0), 1, "rounds")]
    assert s.is_over and s.winner == 0 and legal_actions(s) == []
    with pytest.raises(IllegalActionError):
        apply(s, STOP)


# ------------------------------------------------------------------------------------------- match end


def _quiet_match(rules: Rules, leader: int, mirror: bool = False) -> tuple[State, list[Event]]:
    d = mirrored(QUIET_DEAL) if mirror else QUIET_DEAL
    s = start(rules, *[d] * rules.rounds, leader=leader)
    events: list[Event] = list(s.events)
    while not s.is_over:
        s, more = play(s, *QUIET_ACTIONS)
        events.extend(more)
    return s, events


@pytest.mark.parametrize("mirror", [False, True])
def test_guide_six_rounds_and_a_tie_goes_to_the_first_dealer(mirror: bool) -> None:
    rules = PRESETS[G]
    leader = 1 if mirror else 0
    s, events = _quiet_match(rules, leader, mirror)
    first_dealer = first_dealer_for(rules, leader)
    assert len(only(events, RoundEnd)) == 6
    assert only(events, MatchEnd) == [MatchEnd(first_dealer, (0, 0), 6, "rounds")]
    assert s.winner == first_dealer


def test_guide_tie_break_option_draw() -> None:
    _, events = _quiet_match(dataclasses.replace(PRESETS[G], tie_break=PRESETS[K].tie_break), 0)
    assert only(events, MatchEnd) == [MatchEnd(None, (0, 0), 6, "rounds")]


def test_koikoi_japan_eight_rounds_and_a_tie_is_a_draw() -> None:
    # Exhausted hands pay nobody here, so eight quiet rounds leave 30 : 30.
    _, events = _quiet_match(dataclasses.replace(PRESETS[K], exhausted_dealer_points=0), 0)
    assert len(only(events, RoundEnd)) == 8
    assert only(events, MatchEnd) == [MatchEnd(None, (30, 30), 8, "rounds")]


def test_koikoi_japan_quiet_rounds_keep_paying_the_dealer() -> None:
    _, events = _quiet_match(PRESETS[K], 0)
    assert [e.scores for e in only(events, RoundEnd)] == [(30 + n, 30 - n) for n in range(1, 9)]
    assert only(events, MatchEnd) == [MatchEnd(0, (38, 22), 8, "rounds")]


def test_koikoi_japan_ends_early_when_a_player_has_no_points_left() -> None:
    # The koi-koi deal again and again, seat 0 stopping at once: 5 points a round from 30 : 30 leaves seat 1
    # with nothing after six rounds.
    rules = PRESETS[K]
    s = start(rules, *[KOIKOI_DEAL] * 8)
    rounds = 0
    while not s.is_over:
        s, events = play(s, *TO_FIRST_YAKU, "stop")
        rounds += 1
    assert rounds == 6
    assert s.scores == (60, 0)
    assert only(events, MatchEnd) == [MatchEnd(0, (60, 0), 6, "broke")]
