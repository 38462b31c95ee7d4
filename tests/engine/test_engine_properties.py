"""Invariants over random legal playouts of all presets (hypothesis).

A playout chooses uniformly among ``legal_actions`` with a seeded ``random.Random``; the checks come from
RULES.md: 48 cards, 16 cards played per round at most, points that add up, determinism, and views that hide
what they must.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee.engine import (
    KOIKOI,
    PRESETS,
    STOP,
    Action,
    ActionKind,
    Deal,
    Draw,
    DrawCapture,
    Event,
    IllegalActionError,
    KoikoiDecision,
    MatchEnd,
    Phase,
    Play,
    RoundEnd,
    RoundStart,
    Rules,
    State,
    YakuMade,
    apply,
    is_legal,
    legal_actions,
    new_match,
    observe,
    score,
    visible_event,
)
from referee.engine.rules import Leader, NextDealer
from referee.protocol import action_from_json, full_event_json, view_json
from tests.helpers import random_match

PRESET_NAMES = ("guide", "cardavia", "koikoi-japan", "nintendo")
ALL_CARDS = (1 << 48) - 1
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def hidden_and_public_cards(state: State) -> list[int]:
    """The card sets that together must hold each of the 48 cards once."""
    parts = [state.hands[0], state.hands[1], state.field, state.captured[0], state.captured[1]]
    stock_rest = 0
    for c in state.stock[state.stock_pos :]:
        stock_rest |= 1 << c
    parts.append(stock_rest)
    if state.phase is Phase.DRAW_CHOICE:
        parts.append(1 << state.pending)
    return parts


def snapshot(state: State) -> dict[str, Any]:
    """Every attribute of a state, to check that nothing changed (a plain or a mypyc-compiled class alike)."""
    names = [n for n in dir(state) if not n.startswith("_") and not callable(getattr(state, n))]
    assert {"hands", "field", "stock", "captured", "scores", "events"} <= set(names)
    return {name: getattr(state, name) for name in names}


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESET_NAMES)
@FEW
@given(seed=SEEDS, chooser=SEEDS)
def test_every_card_is_somewhere_exactly_once(name: str, seed: int, chooser: int) -> None:
    for state, _ in random_match(PRESETS[name], seed, chooser):
        parts = hidden_and_public_cards(state)
        assert sum(p.bit_count() for p in parts) == 48
        union = 0
        for p in parts:
            assert union & p == 0
            union |= p
        assert union == ALL_CARDS


@pytest.mark.parametrize("name", PRESET_NAMES)
@FEW
@given(seed=SEEDS, chooser=SEEDS)
def test_legal_actions_are_sorted_and_never_empty_before_the_end(name: str, seed: int, chooser: int) -> None:
    for state, _ in random_match(PRESETS[name], seed, chooser):
        legal = legal_actions(state)
        assert legal == sorted(legal)
        assert len(set(legal)) == len(legal)
        assert bool(legal) is not state.is_over
        if state.phase is Phase.KOIKOI:
            assert legal == [STOP, KOIKOI]


@pytest.mark.parametrize("name", PRESET_NAMES)
@FEW
@given(seed=SEEDS, chooser=SEEDS)
def test_rounds_end_in_time_and_points_add_up(name: str, seed: int, chooser: int) -> None:
    rules = PRESETS[name]
    events: list[Event] = []
    final: State | None = None
    for state, _ in random_match(rules, seed, chooser):
        events.extend(state.events)
        final = state
    assert final is not None
    piles = [0, 0]
    calls = [0, 0]
    plays = 0
    won = [0, 0]
    round_ends: list[RoundEnd] = []
    for e in events:
        if isinstance(e, RoundStart):
            piles, calls, plays = [0, 0], [0, 0], 0
        elif isinstance(e, KoikoiDecision):
            calls[e.seat] = e.calls
            if rules.koikoi_calls_per_round:
                assert sum(calls) <= rules.koikoi_calls_per_round
        elif isinstance(e, YakuMade):
            held = score(piles[e.seat], rules, calls[e.seat])
            assert e.points == held.base > 0
            assert e.yaku == tuple(y.name.value for y in held.yaku)
        elif isinstance(e, Play):
            plays += 1
            assert plays <= 16, "more than eight cards played by a player in a round"
            piles[e.seat] |= e.captured
        elif isinstance(e, Draw | DrawCapture):
            piles[e.seat] |= e.captured
        elif isinstance(e, RoundEnd):
            round_ends.append(e)
            if e.reason in ("stop", "auto_stop"):
                assert e.winner is not None
                w = e.winner
                expected = score(piles[w], rules, e.koikoi_calls[w], e.koikoi_calls[1 - w])
                assert e.points == expected.total > 0
                assert dict(e.yaku) == {y.name.value: y.points for y in expected.yaku}
            if e.reason == "exhausted":
                assert plays == 16
                assert e.points == rules.exhausted_dealer_points
            if e.winner is not None:
                won[e.winner] += e.points
            if rules.transfer_points:
                assert sum(e.scores) == 2 * rules.starting_points
                start = rules.starting_points
                assert e.scores == (start + won[0] - won[1], start + won[1] - won[0])
            else:
                assert e.scores == (won[0], won[1])
    (match_end,) = [e for e in events if isinstance(e, MatchEnd)]
    assert events[-1] == match_end
    assert match_end.scores == final.scores == round_ends[-1].scores
    assert match_end.rounds == len(round_ends) <= rules.rounds
    broke = rules.end_when_broke and min(match_end.scores) <= 0
    assert match_end.reason == ("broke" if broke else "rounds")
    if not broke:
        assert len(round_ends) == rules.rounds
    for e in round_ends[:-1]:
        assert not (rules.end_when_broke and min(e.scores) <= 0), "the match went on after a player ran out"
    a, b = match_end.scores
    expected_winner = 0 if a > b else 1 if b > a else (final.first_dealer if name == "guide" else None)
    assert match_end.winner == final.winner == expected_winner


@pytest.mark.parametrize("name", PRESET_NAMES)
@FEW
@given(seed=SEEDS, chooser=SEEDS)
def test_each_round_is_dealt_as_the_rules_say(name: str, seed: int, chooser: int) -> None:
    rules = PRESETS[name]
    starts: list[RoundStart] = []
    final: State | None = None
    for state, _ in random_match(rules, seed, chooser):
        starts.extend(e for e in state.events if isinstance(e, RoundStart))
        final = state
    assert final is not None
    for start in starts:  # no dealt field is one the misdeal rules throw in
        months = [start.field >> (4 * m) & 15 for m in range(12)]
        assert not (rules.misdeal_field_four and 15 in months)
        assert not (rules.misdeal_field_three and any(n.bit_count() >= 3 for n in months))
    for result, nxt in zip(final.history, starts[1:], strict=False):
        if result.winner is None:  # a round nobody won
            want = 1 - result.dealer if rules.pass_deal_when_nobody_wins else result.dealer
        elif result.reason == "exhausted":  # the dealer won the points of an exhausted round and deals again
            want = result.dealer
        elif rules.next_dealer is NextDealer.WINNER_DEALS:
            want = result.winner
        elif rules.next_dealer is NextDealer.WINNER_LEADS:
            want = result.winner if rules.leader is Leader.DEALER else 1 - result.winner
        else:
            want = 1 - result.dealer
        assert nxt.dealer == want, (result, nxt.dealer)


def test_koikoi_japan_matches_do_end_early_sometimes() -> None:
    # Not a property of one match, but the early end must be reachable by ordinary play.
    rules = PRESETS["koikoi-japan"]
    reasons = set()
    for seed in range(200):
        *_, (last, _) = random_match(rules, seed, seed)
        (end,) = [e for e in last.events if isinstance(e, MatchEnd)]
        reasons.add(end.reason)
        if end.reason == "broke":
            assert min(end.scores) <= 0 and end.rounds < rules.rounds + 1
    assert reasons == {"broke", "rounds"}


@pytest.mark.parametrize("name", PRESET_NAMES)
@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, chooser=SEEDS)
def test_the_same_seed_gives_the_same_match(name: str, seed: int, chooser: int) -> None:
    def record() -> list[dict[str, Any]]:
        return [full_event_json(e) for state, _ in random_match(PRESETS[name], seed, chooser) for e in state.events]

    first = record()
    assert first == record()
    other = [full_event_json(e) for e in new_match(PRESETS[name], seed + 1).events]
    assert other != first[: len(other)]


def _illegal_candidates(state: State, rng: random.Random) -> list[Action]:
    out = [STOP, KOIKOI]
    for _ in range(6):
        kind = rng.choice([ActionKind.PLAY, ActionKind.CHOOSE])
        out.append(Action(kind, rng.randrange(48), rng.choice([-1, rng.randrange(48)])))
    field_cards = [c for c in range(48) if state.field >> c & 1]
    for c in range(48):
        if state.hands[state.to_move] >> c & 1:
            out.append(Action(ActionKind.PLAY, c, -1))
            out.extend(Action(ActionKind.PLAY, c, t) for t in field_cards[:3])
        if state.hands[1 - state.to_move] >> c & 1:
            out.append(Action(ActionKind.PLAY, c, -1))  # the opponent's card
    out.append(Action(ActionKind.PLAY, 99, -1))
    legal = set(legal_actions(state))
    return [a for a in out if a not in legal]


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESET_NAMES)
@FEW
@given(seed=SEEDS, chooser=SEEDS)
def test_apply_rejects_illegal_actions_and_changes_nothing(name: str, seed: int, chooser: int) -> None:
    rng = random.Random(chooser ^ 0x5EED)
    for state, _ in random_match(PRESETS[name], seed, chooser):
        for action in legal_actions(state):
            assert is_legal(state, action)
        if rng.random() > 0.2:
            continue
        before = snapshot(state)
        for bad in _illegal_candidates(state, rng):
            assert not is_legal(state, bad)
            with pytest.raises(IllegalActionError):
                apply(state, bad)
            assert snapshot(state) == before
        for form in ({"play": "pine-dragon"}, {"koikoi": "yes"}, {"play": 3}, {}, {"capture": None}):
            with pytest.raises(IllegalActionError):
                apply(state, action_from_json(form, state))
        assert snapshot(state) == before


def _prefix(rules: Rules, seed: int, chooser: int, steps: int) -> tuple[Deal, int, list[Action], State]:
    """The first deal of a seeded match, its first dealer, up to ``steps`` random actions inside round 1."""
    start = new_match(rules, seed)
    dealt = next(e for e in start.events if isinstance(e, RoundStart))  # a hand yaku may end round 1 at once
    deal = Deal(dealt.hands, dealt.field, dealt.stock)
    state = new_match(rules, seed, deals=[deal], first_dealer=start.first_dealer)
    rng = random.Random(chooser)
    actions: list[Action] = []
    while len(actions) < steps and not state.is_over:
        action = rng.choice(legal_actions(state))
        after = apply(state, action)
        if after.round != 1 or after.is_over:
            break
        actions.append(action)
        state = after
    return deal, start.first_dealer, actions, state


@pytest.mark.parametrize("name", PRESET_NAMES)
@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, chooser=SEEDS, shuffle=SEEDS, steps=st.integers(0, 40), seat=st.sampled_from([0, 1]))
def test_a_view_does_not_depend_on_the_opponents_hand_or_the_stock_order(
    name: str, seed: int, chooser: int, shuffle: int, steps: int, seat: int
) -> None:
    rules = PRESETS[name]
    deal_a, first_dealer, actions, end = _prefix(rules, seed, chooser, steps)
    # Still the round dealt from deal A (a hand yaku can end a round as it is dealt: nintendo).
    assume(end.round == 1 and end.deal_index == 1)
    # Deal B: the same, except that the cards still hidden from `seat` at the end of the prefix (the
    # opponent's unplayed cards and the undrawn stock) are shuffled among those places.
    opp = 1 - seat
    played = deal_a.hands[opp] & ~end.hands[opp]
    pool = [c for c in range(48) if end.hands[opp] >> c & 1] + list(end.stock[end.stock_pos :])
    random.Random(shuffle).shuffle(pool)
    kept = end.hands[opp].bit_count()
    opp_hand = played
    for c in pool[:kept]:
        opp_hand |= 1 << c
    hands = (deal_a.hands[0], opp_hand) if seat == 0 else (opp_hand, deal_a.hands[1])
    deal_b = Deal(hands, deal_a.field, end.stock[: end.stock_pos] + tuple(pool[kept:]))

    a = new_match(rules, seed, deals=[deal_a], first_dealer=first_dealer)
    b = new_match(rules, seed, deals=[deal_b], first_dealer=first_dealer)
    # A changed opponent hand may make a misdeal or a hand yaku (public events): then B is another story.
    assume([type(e) for e in a.events] == [type(e) for e in b.events])
    assert [visible_event(e, seat) for e in a.events] == [visible_event(e, seat) for e in b.events]
    assert observe(a, seat) == observe(b, seat)
    for action in actions:
        if not is_legal(b, action):  # a discard B's opponent may not make under must_match_from_hand
            break
        a, b = apply(a, action), apply(b, action)
        assert [visible_event(e, seat) for e in a.events] == [visible_event(e, seat) for e in b.events]
        assert observe(a, seat) == observe(b, seat)
        assert view_json(observe(a, seat)) == view_json(observe(b, seat))
