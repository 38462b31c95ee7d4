"""Determinization: the state rebuilt from what one seat saw agrees with that seat's real view, for every preset.

Random legal matches (seeded) are played on the engine; at every decision point, for each seat, the seat's events
(as :func:`visible_event` gives them) go into a :class:`Record`, and :func:`determinize` must return a state whose
view for that seat is the real view, and whose hidden cards are a consistent completion (every card once).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import (
    PRESETS,
    Action,
    Deal,
    HandYakuMade,
    Phase,
    Rules,
    State,
    apply,
    legal_actions,
    new_match,
    observe,
    rules_from_dict,
    visible_event,
)
from referee.engine.determinize import DeterminizeError, Record, determinize
from referee.engine.policies import GREEDY, GREEDY_POLICY, VALUATIONS, Policy, never
from referee.engine.state import redeal, shuffled_deal
from tests.helpers import TESHI_ORDER, deal_of

PRESET_NAMES = ("guide", "cardavia", "koikoi-japan", "nintendo")
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


FIXED = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def check_match(rules: Rules, seed: int, chooser: int, samples: int = 2, deals: tuple[Deal, ...] = ()) -> int:
    """Play a random match; at every decision check the rebuilt state of both seats. Returns the checks made."""
    rng = random.Random(chooser)
    state = new_match(rules, seed, deals)
    records = (Record(rules, 0), Record(rules, 1))
    checks = 0

    def feed(s: State) -> None:
        for event in s.events:
            for seat in (0, 1):
                records[seat].add(visible_event(event, seat))

    feed(state)
    while not state.is_over:
        for seat in (0, 1):
            for k in range(samples):
                rng = random.Random(f"{chooser}/{checks}/{k}")
                rebuilt = determinize(records[seat], rng, captures=bool((checks + k) % 2))
                assert observe(rebuilt, seat) == observe(state, seat)
                assert rebuilt.phase is state.phase and rebuilt.to_move == state.to_move
                assert rebuilt.pending == state.pending and rebuilt.stock_left == state.stock_left
                assert rebuilt.history == state.history
                every = rebuilt.hands[0] | rebuilt.hands[1] | rebuilt.field | rebuilt.captured[0]
                every |= rebuilt.captured[1] | sum(1 << c for c in rebuilt.stock[rebuilt.stock_pos :])
                if rebuilt.phase is Phase.DRAW_CHOICE:
                    every |= 1 << rebuilt.pending
                assert every == (1 << 48) - 1
                checks += 1
        state = apply(state, rng.choice(legal_actions(state)))
        feed(state)
    return checks


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESET_NAMES)
@FIXED
@given(seed=SEEDS, chooser=SEEDS)
def test_the_rebuilt_state_agrees_with_the_seat_view(name: str, seed: int, chooser: int) -> None:
    assert check_match(PRESETS[name], seed, chooser, samples=1) > 0


@pytest.mark.slow
def test_hand_yaku_and_discard_constraints_are_kept() -> None:
    # cardavia scores teshi and kuttsuki at the deal; guide forbids discarding while a hand card matches the field.
    for name in ("cardavia", "guide"):
        for seed in range(25):
            check_match(PRESETS[name], seed, seed + 1000, samples=2)


def test_rounds_won_by_a_hand_yaku_of_either_seat_are_rebuilt() -> None:
    rules = rules_from_dict({"base": "cardavia", "rounds": 3})
    teshi = deal_of(TESHI_ORDER)  # seat 1 holds the four pines: teshi
    pairs = [0, 1, 4, 5, 8, 9, 12, 13]  # four months, two cards each: kuttsuki
    rest = [c for c in range(48) if c not in pairs]
    kuttsuki = Deal((sum(1 << c for c in rest[1:17:2]), sum(1 << c for c in pairs)),
                    sum(1 << c for c in rest[0:16:2]), tuple(rest[16:]))  # fmt: skip
    state = new_match(rules, 5, (teshi, kuttsuki))
    made = [e for e in state.events if isinstance(e, HandYakuMade)]
    assert [(e.seat, e.name) for e in made] == [(0, "teshi"), (1, "kuttsuki")]
    assert check_match(rules, 5, 6, samples=3, deals=(teshi, kuttsuki)) > 0


def test_the_samples_vary_the_hidden_cards_only() -> None:
    rules = PRESETS["koikoi-japan"]
    state = new_match(rules, 3)
    record = Record(rules, state.to_move)
    for event in state.events:
        record.add(visible_event(event, state.to_move))
    opponents = {determinize(record, random.Random(k)).hands[1 - state.to_move] for k in range(20)}
    assert len(opponents) > 10  # the opponent's hand is really sampled
    assert state.hands[1 - state.to_move] not in opponents or len(opponents) > 1


def test_the_capture_model_keeps_the_opponent_from_cards_it_could_have_captured_with() -> None:
    rules = PRESETS["koikoi-japan"]
    found = 0
    for seed in range(40):
        state = new_match(rules, seed, first_dealer=0)
        record = Record(rules, 1)
        for event in state.events:
            record.add(visible_event(event, 1))
        field = state.field
        state = apply(state, legal_actions(state)[0])  # seat 1 plays, then seat 2 (the recorder) must answer
        for event in state.events:
            record.add(visible_event(event, 1))
        if state.events[0].captured or state.to_move != 1:  # type: ignore[union-attr]
            continue
        months = sum(15 << (4 * m) for m in {c // 4 for c in range(48) if field >> c & 1})
        seen = state.hands[1] | field | state.captured[0] | state.field
        keen = [c for c in range(48) if not (months | seen) >> c & 1]
        for k in range(5):
            rebuilt = determinize(record, random.Random(k), captures=True)
            assert observe(rebuilt, 1) == observe(state, 1)
            if len(keen) >= 12:  # room enough that the model's hand is found (no misdeal forces the fallback)
                assert rebuilt.hands[0] & months == 0
                found += 1
    assert found > 0


def test_nothing_to_rebuild_before_a_deal() -> None:
    with pytest.raises(DeterminizeError):
        determinize(Record(PRESETS["guide"], 0), random.Random(0))
    with pytest.raises(ValueError):
        Record(PRESETS["guide"], 2)


def test_a_model_of_the_opponent_keeps_the_hands_where_it_would_have_played_as_seen() -> None:
    # The opponent always plays its lowest card (legal[0]); with that model, every sample that agrees holds only
    # cards above each card the opponent played this round.
    def lowest(state: State) -> Action:
        return legal_actions(state)[0]

    rules = PRESETS["koikoi-japan"]
    checked = 0
    for seed in range(30):
        state = new_match(rules, seed, first_dealer=0)
        record = Record(rules, 1)
        rng = random.Random(seed)

        def feed(s: State, record: Record = record) -> None:
            for event in s.events:
                record.add(visible_event(event, 1))

        feed(state)
        played: list[int] = []
        while state.round == 1 and not state.is_over:
            if state.to_move == 1 and state.phase is Phase.PLAY and len(played) >= 2:
                break
            legal = legal_actions(state)
            action = legal[0] if state.to_move == 0 else rng.choice(legal)
            if state.to_move == 0 and state.phase is Phase.PLAY:
                played.append(action.card)
            state = apply(state, action)
            feed(state)
        if state.round != 1 or state.is_over:
            continue
        rebuilt = determinize(record, random.Random(seed), model=lowest, tries=100_000)
        assert observe(rebuilt, 1) == observe(state, 1)
        held = rebuilt.hands[0]
        assert all(c > max(played) for c in range(48) if held >> c & 1)
        assert record.agreed

        def highest(state: State) -> Action:
            return legal_actions(state)[-1]

        # a model that made none of its plays: from a full hand it plays its highest card, never its lowest
        determinize(record, random.Random(seed), model=highest, tries=8)
        assert not record.agreed
        determinize(record, random.Random(seed))
        assert record.agreed  # no model: nothing to disagree with
        checked += 1
    assert checked > 10


def test_a_redealt_round_start_is_the_replay_with_that_deal() -> None:
    # determinize replays the earlier rounds once and redeals the current one for each try: the same state as a
    # replay of the whole match with the new deal.
    rules = PRESETS["koikoi-japan"]
    deals = [shuffled_deal(3, i) for i in range(3)]
    other = shuffled_deal(40, 0)
    rng = random.Random(5)
    state, actions = new_match(rules, 1, deals, first_dealer=0), []
    while state.round < 3 and not state.is_over:
        action = rng.choice(legal_actions(state))
        actions.append(action)
        state = apply(state, action)
    assert state.round == 3
    again = new_match(rules, 1, [*deals[:2], other], first_dealer=0)
    for action in actions:
        again = apply(again, action)
    redealt = redeal(state, other)
    for name in ("hands", "field", "stock", "scores", "dealer", "leader", "to_move", "round", "history", "deal_index"):
        assert getattr(redealt, name) == getattr(again, name), name
    assert redealt.hands != state.hands
    with pytest.raises(ValueError):
        redeal(apply(state, legal_actions(state)[0]), other)  # not a round's first decision any more


def test_the_compiled_shuffle_and_sample_are_uniform() -> None:
    """Every card lands in every place of a shuffle, and in a sample, about as often as any other (seeded)."""
    from referee.engine.determinize import _sample, _shuffle

    rng = random.Random(11)
    n, trials = 6, 24_000
    places = [[0] * n for _ in range(n)]
    for _ in range(trials):
        items = list(range(n))
        _shuffle(items, rng)
        assert sorted(items) == list(range(n))
        for place, c in enumerate(items):
            places[c][place] += 1
    expected = trials / n
    assert all(abs(count - expected) < 0.06 * expected for row in places for count in row), places
    drawn = [0] * 10
    for _ in range(trials):
        chosen = _sample(list(range(10)), 3, rng)
        assert len(set(chosen)) == 3
        for c in chosen:
            drawn[c] += 1
    assert all(abs(count - trials * 3 / 10) < 0.06 * trials * 3 / 10 for count in drawn), drawn


def test_a_round_is_replayed_once_and_its_deal_sampled_again() -> None:
    """After the first sample of a round, the record keeps the round's start; a new round replaces it."""
    rules = PRESETS["koikoi-japan"]
    state = new_match(rules, 8)
    me = state.to_move
    record = Record(rules, me)
    for event in state.events:
        record.add(visible_event(event, me))
    first = determinize(record, random.Random(1))
    kept = record.start
    assert kept is not None and kept.round == 1
    again = determinize(record, random.Random(2))
    assert record.start is kept and again.hands[1 - me] != first.hands[1 - me]
    rng = random.Random(3)
    while state.round == 1 and not state.is_over:
        state = apply(state, rng.choice(legal_actions(state)))
        for event in state.events:
            record.add(visible_event(event, me))
    assert not state.is_over and state.round == 2
    determinize(record, random.Random(4))
    assert record.start is not None and record.start is not kept and record.start.round == len(record.rounds) == 2


def _with_hand(state: State, hand: int) -> State:
    s = state._copy()
    s.hands = (hand, s.hands[1]) if s.to_move == 0 else (s.hands[0], hand)
    return s


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_a_valuation_excludes_exactly_cards_that_would_have_changed_its_choice(name: str) -> None:
    """At random decisions of random matches: a valuation's choice never excludes a card of the hand it chose from,
    and each excluded card, added to that hand, makes the valuation choose another action."""
    rules = PRESETS[name]
    excluded = 0
    for seed in range(8):
        rng = random.Random(seed)
        state = new_match(rules, seed)
        while not state.is_over:
            legal = legal_actions(state)
            if state.phase is Phase.PLAY:
                hand = state.hands[state.to_move]
                for valuation in VALUATIONS:
                    if valuation is None:
                        continue
                    chosen = valuation.choose(state, legal)
                    out = valuation.excluded(state, chosen)
                    assert out & hand == 0, (valuation.name, chosen)
                    for u in range(48):
                        if out >> u & 1:
                            wider = _with_hand(state, hand | 1 << u)
                            assert valuation.choose(wider, legal_actions(wider)) != chosen, (valuation.name, u)
                            excluded += 1
            state = apply(state, rng.choice(legal))
    assert excluded > 100  # the test sees exclusions, of captures and of discards


def test_the_samples_of_a_greedy_opponent_never_hold_a_card_its_plays_exclude() -> None:
    """A greedy opponent's round: the hands that agree with its plays hold none of the cards its plays exclude,
    with the exclusion or without; with it, samples are rejected less often and still agree."""
    rules = PRESETS["koikoi-japan"]
    checked = 0
    for seed in range(12):
        state = new_match(rules, seed, first_dealer=0)
        record = Record(rules, 1)
        exclude = 0
        for event in state.events:
            record.add(visible_event(event, 1))
        while state.round == 1 and not state.is_over and state.turn < 10:
            legal = legal_actions(state)
            action = GREEDY_POLICY.act(state, legal) if state.to_move == 0 else legal[seed % len(legal)]
            if state.to_move == 0 and state.phase is Phase.PLAY:
                exclude |= GREEDY.excluded(state, action)
            state = apply(state, action)
            for event in state.events:
                record.add(visible_event(event, 1))
        if state.round != 1 or state.is_over or state.to_move != 1 or state.phase is not Phase.PLAY:
            continue
        assert state.hands[0] & exclude == 0
        for k in range(10):
            plain = determinize(record, random.Random(k), model=GREEDY_POLICY.model, tries=10_000)
            assert record.agreed and plain.hands[0] & exclude == 0
            narrowed = determinize(record, random.Random(k), model=GREEDY_POLICY.model, exclude=exclude, tries=10_000)
            assert record.agreed and narrowed.hands[0] & exclude == 0
            assert observe(narrowed, 1) == observe(state, 1)
            checked += 1
    assert checked >= 50


def every_field(state: State) -> dict[str, object]:
    names = [n for n in dir(state) if not n.startswith("_") and not callable(getattr(state, n))]
    assert {"hands", "stock", "deals", "field", "captured", "scores", "history", "events"} <= set(names)
    return {name: getattr(state, name) for name in names}


def replayed(record: Record, sample: State) -> tuple[list[tuple[State, Action]], State]:
    """The current round of ``record`` replayed action by action from its start, dealt the sample's own deal of the
    round: the opponent's decisions on the way (state and action) and the state after the last action."""
    assert record.start is not None
    state = redeal(record.start, sample.deals[sample.deal_index - 1])
    seen = []
    for action in record.rounds[-1].actions:
        if state.to_move != record.seat:
            seen.append((state, action))
        state = apply(state, action, record=False)
    return seen, state


@pytest.mark.parametrize("rules_name", PRESET_NAMES)
def test_a_sample_put_into_the_replayed_round_is_the_replay_of_that_sample(rules_name: str) -> None:
    """determinize replays the current round once a decision and puts each sample's hidden cards into it: each
    sample, field for field, is the round replayed action by action on the sample's own deal; the observer is shown
    the states of that replay at the opponent's decisions, with their actions; and a sample said to agree with a
    model of the opponent has the model make every play of the opponent in that replay. With and without a model,
    agreeing or not; a valuation as the model (its card play) with and without an observer."""
    rules = PRESETS[rules_name]
    models = (None, GREEDY_POLICY.model, lambda s: legal_actions(s)[-1], GREEDY)  # GREEDY: its card play
    compared = disagreed = observed = 0
    for seed in range(4):
        state = new_match(rules, seed)
        records = (Record(rules, 0), Record(rules, 1))
        rng = random.Random(seed)
        steps = 0
        while not state.is_over:
            for event in state.events:
                for seat in (0, 1):
                    records[seat].add(visible_event(event, seat))
            for seat in (0, 1):
                for k in range(3):
                    model = models[(steps + k) % 4]
                    shown: list[tuple[State, Action]] = []

                    def watch(s: State, action: Action, into: list[tuple[State, Action]] = shown) -> None:
                        into.append((s, action))

                    rng_k = random.Random(f"{seed}/{steps}/{seat}/{k}")
                    sample = determinize(records[seat], rng_k, captures=k == 1, model=model, tries=4,
                                         observer=watch if k else None)  # fmt: skip
                    seen, end = replayed(records[seat], sample)
                    assert every_field(sample) == every_field(end)
                    if k:
                        assert len(shown) >= len(seen)
                        tail = shown[len(shown) - len(seen) :]
                        for (got, action), (want, real) in zip(tail, seen, strict=True):
                            assert action == real and every_field(got) == every_field(want)
                        observed += len(seen)
                    if model is not None and records[seat].agreed:
                        choose = GREEDY_POLICY.model if model is GREEDY else model
                        assert callable(choose)
                        assert all(choose(s) == a for s, a in seen if s.phase is Phase.PLAY)
                    compared += 1
                    disagreed += not records[seat].agreed
            legal = legal_actions(state)
            action = GREEDY_POLICY.act(state, legal) if seed % 2 else rng.choice(legal)
            state = apply(state, action)
            steps += 1
    assert compared > 200 and disagreed > 10 and observed > 100


@pytest.mark.parametrize("rules_name", PRESET_NAMES)
def test_a_valuation_as_the_model_draws_the_samples_its_policy_draws(rules_name: str) -> None:
    """``model=valuation`` checks the opponent's plays on the hand alone (PlayCheck); ``model=policy.model`` builds
    each state and asks the policy: from the same random state both return the same sample, field for field, and
    the same ``agreed``, for every valuation of the family, with and without the cards excluded, the model
    agreeing or dropped (few tries)."""
    rules = PRESETS[rules_name]
    valuations = [v for v in VALUATIONS if v is not None]
    compared = dropped = 0
    for seed in range(40):
        if compared >= 150:
            break
        state = new_match(rules, seed)
        record = Record(rules, 1)
        rng = random.Random(seed)
        steps = 0
        while not state.is_over:
            for event in state.events:
                record.add(visible_event(event, 1))
            if state.to_move == 1 and record.current is not None and record.current.opponent_played:
                valuation = valuations[steps % len(valuations)]
                exclude = 0 if steps % 3 else rng.getrandbits(48) & ~(state.hands[1] | state.field)
                determinize(record, random.Random(steps))  # the replays kept in the record: both calls find them
                for tries in (3, 64):
                    key = f"{seed}/{steps}/{tries}"
                    fast = determinize(record, random.Random(key), captures=True, model=valuation, tries=tries,
                                       exclude=exclude)  # fmt: skip
                    fast_agreed = record.agreed
                    slow = determinize(record, random.Random(key), captures=True, tries=tries, exclude=exclude,
                                       model=Policy(valuation, never).model)  # fmt: skip
                    assert every_field(fast) == every_field(slow) and fast_agreed == record.agreed
                    compared += 1
                    dropped += not fast_agreed
            legal = legal_actions(state)
            action = GREEDY_POLICY.act(state, legal) if seed % 2 else rng.choice(legal)
            state = apply(state, action)
            steps += 1
    assert compared > 100 and dropped > 5
