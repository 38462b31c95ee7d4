"""The learned card play (:class:`referee.engine.policies.Learned`): what its features read of an action, that it
reads nothing hidden, and its weights file. That the C round loop plays it as the engine's loop does is in
``test_rollout_c.py`` (its policies are among the ones drawn there)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from referee.engine import PRESETS, State, legal_actions
from referee.engine import cards as C
from referee.engine import policies as P
from referee.engine.cards import card
from referee.engine.state import Phase
from tests.helpers import random_match


def bits(*ids: str) -> int:
    return sum(1 << card(i) for i in ids)


def features(hand: int, field: int, mine: int = 0, theirs: int = 0, play: str = "", target: str = "",
             pending: int = -1, their_calls: int = 0) -> dict[str, float]:  # fmt: skip
    values = P.play_features(hand, field, mine, theirs, pending, their_calls, card(play),
                             card(target) if target else -1)  # fmt: skip
    return dict(zip(P.FEATURES, values, strict=True))


def test_a_capture_that_completes_a_set_is_read_as_one() -> None:
    f = features(bits("pine-crane", "plum-chaff-1"), bits("pine-chaff-1", "iris-chaff-1"),
                 mine=bits("cherry-curtain", "pampas-moon"), play="pine-crane", target="pine-chaff-1")  # fmt: skip
    assert f["discard"] == 0.0 and f["taken"] == 1.0
    assert f["done"] == 1.0  # three brights
    assert f["progress"] < 0.0  # the brights leave the open sets: what is left is farther
    assert f["keep_capture"] == 0.0


def test_a_discard_is_read_with_what_it_leaves_to_unseen_cards() -> None:
    hand = bits("maple-deer", "maple-chaff-1", "pine-chaff-1")
    f = features(hand, bits("iris-chaff-1"), play="maple-deer")
    assert f["discard"] == 1.0 and f["taken"] == 0.0 and f["done"] == 0.0
    assert f["keep_discard"] == 1.0  # a maple card is left in hand to take it back
    assert f["expose"] > 0.0 and f["expose_unseen"] == pytest.approx(f["expose"] * 2 / 3)  # two maples unseen
    seen = features(hand, bits("iris-chaff-1"), mine=bits("maple-ribbon", "maple-chaff-2"), play="maple-deer")
    assert seen["expose"] == 0.0 and seen["expose_unseen"] == 0.0  # every other maple is in sight: nobody takes it


def test_a_capture_that_takes_a_card_the_other_player_needs_is_read_as_denial() -> None:
    theirs = bits("pine-ribbon", "plum-ribbon")  # the poetry ribbons one card from done
    f = features(bits("cherry-chaff-1"), bits("cherry-ribbon"), theirs=theirs, play="cherry-chaff-1")
    assert f["deny"] > 0.0 and f["deny_near"] == 1.0
    other = features(bits("iris-chaff-1"), bits("iris-chaff-2"), theirs=theirs, play="iris-chaff-1")
    assert other["deny"] == 0.0 and other["deny_near"] == 0.0


def test_a_capture_after_a_draw_is_read_with_the_drawn_card() -> None:
    f = features(bits("pine-chaff-1"), bits("maple-deer", "maple-chaff-1"), mine=bits("clover-boar", "peony-butterfly"),
                 theirs=bits("maple-ribbon"), play="maple-chaff-2", target="maple-deer", pending=card("maple-chaff-2"),
                 their_calls=1)  # fmt: skip
    assert f["taken"] == 1.0 and f["done"] == 1.0 and f["done_after_call"] == 1.0  # boar-deer-butterfly
    assert f["expose"] == 0.0  # the maple left on the field: no maple unseen, so nobody can take it
    unseen = features(bits("pine-chaff-1"), bits("maple-deer", "maple-chaff-1"), play="maple-chaff-2",
                      target="maple-deer", pending=card("maple-chaff-2"))  # fmt: skip
    assert unseen["expose"] > 0.0 and unseen["done_after_call"] == 0.0  # the maple ribbon is unseen


def hidden_swapped(state: State, rng: random.Random) -> State:
    """``state`` with the other player's hand and the rest of the stock dealt anew from the same cards."""
    other = 1 - state.to_move
    rest = list(state.stock[state.stock_pos:])
    pool = C.cards_of(state.hands[other]) + rest
    rng.shuffle(pool)
    n = state.hands[other].bit_count()
    s = state._copy()
    hands = list(s.hands)
    hands[other] = C.mask_of(pool[:n])
    s.hands = (hands[0], hands[1])
    s.stock = state.stock[:state.stock_pos] + tuple(pool[n:])
    return s


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_it_reads_only_the_mover_s_view(preset: str) -> None:
    rng = random.Random(3)
    plays = [P.learned_play(), P.Learned("random", tuple(rng.uniform(-3, 3) for _ in P.FEATURES))]
    checked = 0
    for seed in range(3):
        for state, _ in random_match(PRESETS[preset], seed, seed):
            if state.is_over or state.phase is Phase.KOIKOI or len(legal_actions(state)) < 2:
                continue
            legal = legal_actions(state)
            other = hidden_swapped(state, rng)
            assert other.hands[state.to_move] == state.hands[state.to_move]
            for play in plays:
                assert [P.learned_features(state, a) for a in legal] == [P.learned_features(other, a) for a in legal]
                assert play.choose(state, legal) == play.choose(other, legal)
            checked += 1
    assert checked > 30


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_decision_s_terms_computed_once_give_each_action_s_features(preset: str) -> None:
    rng = random.Random(5)
    play = P.Learned("random", tuple(rng.uniform(-3, 3) for _ in P.FEATURES))
    checked = 0
    for seed in range(3):
        for state, _ in random_match(PRESETS[preset], seed, seed + 10):
            if state.is_over or state.phase is Phase.KOIKOI or len(legal_actions(state)) < 2:
                continue
            legal = legal_actions(state)
            p = state.to_move
            pending = state.pending if state.phase is Phase.DRAW_CHOICE else -1
            each = [P.play_features(state.hands[p], state.field, state.captured[p], state.captured[1 - p], pending,
                                    state.koikoi[1 - p], a.card, a.target) for a in legal]  # fmt: skip
            x = P.learned_decision(state)
            assert [P.action_features(x, a.card, a.target) for a in legal] == each
            assert [P.learned_features(state, a) for a in legal] == each
            best = max(range(len(legal)), key=lambda i: (play.weigh(each[i]), -i))  # the first of equals
            assert play.choose(state, legal) == legal[best]
            checked += 1
    assert checked > 30


def test_its_weights_are_one_a_feature() -> None:
    with pytest.raises(ValueError, match="takes 14 weights, not 3"):
        P.Learned("short", (1.0, 2.0, 3.0))


def test_the_shipped_weights_file_is_read_once_and_names_the_engine_s_features() -> None:
    data = json.loads(Path(P.WEIGHTS_FILE).read_text(encoding="utf-8"))
    assert tuple(data["features"]) == P.FEATURES
    assert P.learned_play() is P.learned_play()
    assert P.learned_play().weights == tuple(float(w) for w in data["weights"])


def test_a_weights_file_of_other_features_or_not_json_is_refused(tmp_path: Path) -> None:
    good = {"features": list(P.FEATURES), "weights": [0.5] * len(P.FEATURES)}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(good), encoding="utf-8")
    assert P.load_learned(str(path), "mine") == P.Learned("mine", (0.5,) * len(P.FEATURES))
    path.write_text(json.dumps({**good, "features": list(P.FEATURES[:-1])}), encoding="utf-8")
    with pytest.raises(ValueError, match="its features are not those of this engine"):
        P.load_learned(str(path))
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="not JSON"):
        P.load_learned(str(path))
    path.write_text(json.dumps({"features": list(P.FEATURES)}), encoding="utf-8")
    with pytest.raises(ValueError, match="no list of weights"):
        P.load_learned(str(path))


def test_with_only_the_greedy_weight_it_plays_as_greedy() -> None:
    greedy_only = P.Learned("greedy", (1.0,) + (0.0,) * (len(P.FEATURES) - 1))
    mine = P.Policy(P.GREEDY, P.cautious, greedy_only)
    differ = 0
    for seed in range(4):
        for state, _ in random_match(PRESETS["nintendo"], seed, seed):
            if state.is_over or state.phase is Phase.KOIKOI:
                continue
            legal = legal_actions(state)
            differ += mine.act(state, legal) != P.GREEDY_POLICY.act(state, legal)
    assert differ == 0
