"""The learning environments: PettingZoo's and Gymnasium's own checks, the observation field by field and its
independence from hidden cards, and seeded episodes that are the engine's matches."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("numpy", reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'")
pytest.importorskip("gymnasium", reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'")

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test

from referee.engine import (
    KOIKOI,
    PRESETS,
    Action,
    Deal,
    HandYakuMade,
    RoundStart,
    apply,
    legal_actions,
    new_match,
    observe,
    shuffled_deal,
)
from referee.protocol import action_json, full_event_json, view_json
from referee.rl import koikoi_v0
from referee.rl.actions import INDEX, N_ACTIONS, describe
from referee.rl.observation import FIELDS, OBS_SIZE, SCORE_BOUND, action_mask, encode, encode_wire, wire_action
from referee.rl.single import ENV_ID, KoikoiEnv
from referee.rl.table import IllegalMoveError

PRESET_NAMES = ("guide", "cardavia", "koikoi-japan", "nintendo")
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def _masked(mask: np.ndarray[Any, Any], rng: random.Random) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


# --- the action space -----------------------------------------------------------------------------------------


def test_every_engine_action_has_one_index_and_says_the_same_in_words() -> None:
    assert sorted(set(INDEX.values())) == list(range(N_ACTIONS))
    for action, index in INDEX.items():
        if action.kind.name != "CHOOSE":  # a capture choice's index names only its target
            assert describe(index) == str(action)
        else:
            assert describe(index) == f"capture {str(action).split()[-1]}"
    with pytest.raises(ValueError):
        describe(N_ACTIONS)


# --- PettingZoo -----------------------------------------------------------------------------------------------


# PettingZoo's api_test warns about every dictionary observation, as for its own classic games.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_pettingzoo_api_test_passes(rules: str) -> None:
    api_test(koikoi_v0.env(rules=rules), num_cycles=1000)


def test_pettingzoo_seed_test_passes() -> None:
    seed_test(lambda: koikoi_v0.env(rules="koikoi-japan"), num_cycles=500)


def test_pettingzoo_render_test_passes_and_human_mode_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode=None: koikoi_v0.env(render_mode=render_mode))
    capsys.readouterr()
    makers: list[Any] = [koikoi_v0.env, lambda render_mode: KoikoiEnv("random", render_mode=render_mode)]
    for make in makers:
        human, ansi = make(render_mode="human"), make(render_mode="ansi")
        human.reset(seed=5)
        ansi.reset(seed=5)
        assert human.render() is None
        assert capsys.readouterr().out == ansi.render() + "\n"


def _play_aec(env: Any, seed: int, chooser: int) -> tuple[list[int], dict[str, float]]:
    """A whole match with random masked actions: the indexes played and each agent's summed rewards."""
    rng = random.Random(chooser)
    env.reset(seed=seed)
    played: list[int] = []
    totals = {"player_1": 0.0, "player_2": 0.0}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        index = _masked(observation["action_mask"], rng)
        played.append(index)
        env.step(index)
    return played, totals


@pytest.mark.parametrize("rules", PRESET_NAMES)
@settings(max_examples=8, deadline=None)
@given(seed=SEEDS, chooser=SEEDS)
def test_a_seeded_episode_is_the_engines_match(rules: str, seed: int, chooser: int) -> None:
    env = koikoi_v0.raw_env(rules=rules)
    rng = random.Random(chooser)
    env.reset(seed=seed)
    events = [full_event_json(e) for e in env.table.state.events]
    played: list[int] = []
    for agent in env.agent_iter():
        observation, _, termination, _, _ = env.last()
        if termination:
            env.step(None)
            continue
        assert agent == f"player_{env.table.to_move + 1}"
        index = _masked(observation["action_mask"], rng)
        played.append(index)
        env.step(index)
        events += [full_event_json(e) for e in env.table.state.events]
    # The same match on the engine alone: each index turned into the legal action that says the same in words.
    # (a seed whose match ends before any decision is passed over: match_seed says which was played)
    assert env.match_seed == seed or rules == "cardavia"
    state = new_match(PRESETS[rules], env.match_seed)
    expected = [full_event_json(e) for e in state.events]
    for index in played:
        words = describe(index)
        (action,) = [a for a in legal_actions(state) if str(a) == words or str(a).endswith(words)]
        state = apply(state, action)
        expected += [full_event_json(e) for e in state.events]
    assert state.is_over
    assert events == expected


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_point_rewards_add_up_to_the_scores(rules: str) -> None:
    preset = PRESETS[rules]
    for seed in range(6):
        env = koikoi_v0.env(rules=rules)
        _, totals = _play_aec(env, seed, seed)
        scores = env.unwrapped.table.state.scores
        start = preset.starting_points
        assert totals["player_1"] == -totals["player_2"]
        if preset.transfer_points:  # a round's points pass from the loser to the winner
            assert totals["player_1"] == scores[0] - start
        else:  # only the winner scores
            assert totals["player_1"] == (scores[0] - start) - (scores[1] - start)


def test_outcome_rewards_are_the_match_result() -> None:
    seen = set()
    for seed in range(8):
        env = koikoi_v0.env(rules="cardavia", reward="outcome")
        _, totals = _play_aec(env, seed, seed)
        winner = env.unwrapped.table.state.winner
        expected = 0.0 if winner is None else (1.0 if winner == 0 else -1.0)
        assert totals == {"player_1": expected, "player_2": -expected}
        seen.add(expected)
    assert len(seen) >= 2


def test_an_illegal_action_ends_the_wrapped_match_and_the_raw_env_refuses_it() -> None:
    env = koikoi_v0.env()
    env.reset(seed=3)
    agent = env.agent_selection
    observation, *_ = env.last()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1
    raw = koikoi_v0.raw_env()
    raw.reset(seed=3)
    with pytest.raises(IllegalMoveError, match=r"illegal action \d+ \("):
        raw.step(illegal)


def test_ansi_render_draws_the_table_of_the_agent_to_move() -> None:
    env = koikoi_v0.env(render_mode="ansi")
    env.reset(seed=5)
    seat = env.unwrapped.table.to_move
    text = env.render()
    assert isinstance(text, str)
    assert "Round 1/8" in text and "Your hand:" in text
    view = observe(env.unwrapped.table.state, seat)
    from referee.seats.render import card_name

    for cid in view_json(view)["hand"]:
        assert card_name(cid) in text


# --- the observation ------------------------------------------------------------------------------------------


def _bits(vector: np.ndarray[Any, Any]) -> int:
    return sum(1 << i for i, x in enumerate(vector) if x)


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_the_observation_says_what_the_view_says_field_by_field(rules: str) -> None:
    slices = {name: slice(a, b) for name, a, b in FIELDS}
    assert FIELDS[-1][2] == OBS_SIZE
    for seed in range(4):
        state = new_match(PRESETS[rules], seed)
        rng = random.Random(seed)
        while not state.is_over:
            for seat in (0, 1):
                v = observe(state, seat)
                obs = encode(v)
                op = 1 - seat
                assert _bits(obs[slices["hand"]]) == v.hand
                assert _bits(obs[slices["field"]]) == v.field
                assert _bits(obs[slices["my_captured"]]) == v.captured[seat]
                assert _bits(obs[slices["opponent_captured"]]) == v.captured[op]
                mine = v.to_move == seat
                assert _bits(obs[slices["drawn"]]) == (1 << v.drawn if mine and v.decision == "capture" else 0)
                scalars = [float(obs[slices[n]][0]) for n, a, b in FIELDS if b - a == 1]
                assert scalars == [
                    v.opponent_hand_size, v.stock_size, v.scores[seat], v.scores[op], v.koikoi_calls[seat],
                    v.koikoi_calls[op], v.yaku[seat].total, v.yaku[op].total, v.round, v.rounds,
                    v.dealer == seat, v.leader == seat, v.turn, mine and v.decision == "play",
                    mine and v.decision == "capture", mine and v.decision == "koikoi", seat,
                ]  # fmt: skip
                mask = action_mask(v.legal)
                assert sorted(np.flatnonzero(mask)) == sorted(INDEX[a] for a in v.legal)
                assert mask.any() == mine
                # The wire form of the same view (what a served policy gets) gives the same numbers.
                wire = view_json(v)
                assert np.array_equal(encode_wire(wire), obs)
                drawn = wire["drawn"]
                assert [wire_action(action_json(a), drawn) for a in v.legal] == list(v.legal)
            state = apply(state, rng.choice(legal_actions(state)))


def _prefix(rules: str, seed: int, chooser: int, steps: int) -> tuple[Deal, int, list[int], Any]:
    """The first deal of a seeded match, its first dealer, and up to ``steps`` random indexes within round 1
    played through the environment."""
    start = new_match(PRESETS[rules], seed)
    dealt = next(e for e in start.events if isinstance(e, RoundStart))  # round 2 may follow (a hand yaku)
    deal = Deal(dealt.hands, dealt.field, dealt.stock)
    first = f"player_{start.first_dealer + 1}"
    env = koikoi_v0.raw_env(rules=rules)
    env.reset(seed=seed, options={"deals": [deal], "first_dealer": first})
    assume(env.match_seed == seed)  # not passed over (a hand yaku ended a one-round match at once)
    rng = random.Random(chooser)
    played: list[int] = []
    state = env.table.state
    while len(played) < steps:
        index = _masked(env.observe(env.agent_selection)["action_mask"], rng)
        env.step(index)
        if env.table.over or env.table.state.round != 1:
            break
        played.append(index)
        state = env.table.state
    return deal, start.first_dealer, played, state


@pytest.mark.parametrize("rules", PRESET_NAMES)
@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, chooser=SEEDS, shuffle=SEEDS, steps=st.integers(0, 40), seat=st.sampled_from([0, 1]))
@example(seed=827, chooser=0, shuffle=0, steps=0, seat=0)  # nintendo: a hand yaku ends round 1 at once
def test_the_observation_never_depends_on_the_opponents_hand_or_the_stock_order(
    rules: str, seed: int, chooser: int, shuffle: int, steps: int, seat: int
) -> None:
    deal_a, first_dealer, played, end = _prefix(rules, seed, chooser, steps)
    # Deal B: the cards still hidden from `seat` (the opponent's unplayed cards, the undrawn stock) reshuffled.
    opp = 1 - seat
    pool = [c for c in range(48) if end.hands[opp] >> c & 1] + list(end.stock[end.stock_pos :])
    random.Random(shuffle).shuffle(pool)
    kept = end.hands[opp].bit_count()
    opp_hand = deal_a.hands[opp] & ~end.hands[opp]
    for c in pool[:kept]:
        opp_hand |= 1 << c
    hands = (deal_a.hands[0], opp_hand) if seat == 0 else (opp_hand, deal_a.hands[1])
    deal_b = Deal(hands, deal_a.field, end.stock[: end.stock_pos] + tuple(pool[kept:]))
    assume(deal_b != deal_a)
    options = {"first_dealer": f"player_{first_dealer + 1}"}
    env_a, env_b = koikoi_v0.raw_env(rules=rules), koikoi_v0.raw_env(rules=rules)
    env_a.reset(seed=seed, options={**options, "deals": [deal_a]})
    env_b.reset(seed=seed, options={**options, "deals": [deal_b]})
    # A changed opponent hand may make a misdeal or a hand yaku (public events): then B is another story.
    assume(env_b.match_seed == seed)
    assume([type(e) for e in env_a.table.state.events] == [type(e) for e in env_b.table.state.events])
    agent = f"player_{seat + 1}"
    for index in played:
        a, b = env_a.observe(agent), env_b.observe(agent)
        assert np.array_equal(a["observation"], b["observation"])
        assert np.array_equal(a["action_mask"], b["action_mask"])
        if not env_b.observe(env_b.agent_selection)["action_mask"][index]:
            break  # a discard B's opponent may not make under must_match_from_hand
        env_a.step(index)
        env_b.step(index)
    a, b = env_a.observe(agent), env_b.observe(agent)
    assert np.array_equal(a["observation"], b["observation"])
    assert np.array_equal(a["action_mask"], b["action_mask"])


# --- Gymnasium ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("opponent", ["random", "greedy"])
@pytest.mark.filterwarnings("error")
def test_gymnasium_check_env_passes_without_a_warning(opponent: str) -> None:
    env = gymnasium.make(ENV_ID, opponent=opponent, render_mode="ansi")
    check_env(env.unwrapped)
    env.close()


def _episode(env: KoikoiEnv, seed: int) -> tuple[float, int, dict[str, Any]]:
    observation, info = env.reset(seed=seed)
    rng = random.Random(seed)
    total, steps = 0.0, 0
    while True:
        assert observation["action_mask"].any()
        observation, reward, terminated, truncated, info = env.step(_masked(observation["action_mask"], rng))
        total += reward
        steps += 1
        if terminated or truncated:
            return total, steps, info


def test_a_gym_episode_against_a_policy_ends_with_the_scores_as_rewards() -> None:
    calls: list[int] = []

    def last_index(observation: Any, mask: Any) -> int:
        calls.append(1)
        return int(np.flatnonzero(mask)[-1])

    for seat in ("player_1", "player_2"):
        env = KoikoiEnv(last_index, seat=seat)
        total, _, info = _episode(env, 11)
        me = int(seat[-1]) - 1
        assert info["seat"] == seat and "illegal_action" not in info
        assert env.table.over
        assert total == env.table.state.scores[me] - PRESETS["koikoi-japan"].starting_points
    assert calls


def test_a_round_a_hand_yaku_ends_as_it_is_dealt_is_rewarded_too() -> None:
    # nintendo seed 4: round 1 ends at once with a hand yaku (teshi or kuttsuki), before any decision.
    rules = PRESETS["nintendo"]
    assert any(isinstance(e, HandYakuMade) for e in new_match(rules, 4).events)
    env = koikoi_v0.env(rules="nintendo")
    _, totals = _play_aec(env, 4, 4)
    a, b = env.unwrapped.table.state.scores
    assert totals["player_1"] == a - b == -totals["player_2"]
    for seat in ("player_1", "player_2"):
        gym = KoikoiEnv("greedy", rules="nintendo", seat=seat)
        total, _, _ = _episode(gym, 4)
        scores = gym.table.state.scores
        me = int(seat[-1]) - 1
        assert total == scores[me] - scores[1 - me]


def test_a_gym_illegal_action_ends_the_episode() -> None:
    env = KoikoiEnv("greedy", illegal_reward=-5.0)
    observation, _ = env.reset(seed=2)
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert (reward, terminated, info["illegal_action"]) == (-5.0, True, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_the_same_seed_gives_the_same_gym_episode() -> None:
    runs = []
    for _ in range(2):
        env = KoikoiEnv("random")
        runs.append((_episode(env, 21), env.table.state.scores, env.seat))
    assert runs[0] == runs[1]


def test_action_of_an_index_is_an_engine_action() -> None:
    env = koikoi_v0.raw_env()
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    for index in np.flatnonzero(mask):
        assert isinstance(env.table.action(int(index)), Action)


def test_an_environment_copied_mid_match_plays_on_as_the_original() -> None:
    # deepcopy (and pickle) of an environment after reset: a search can clone it and try a line
    import copy
    import pickle

    env = koikoi_v0.env()
    env.reset(seed=4)
    rng = random.Random(4)
    for _ in range(5):
        env.step(_masked(env.last()[0]["action_mask"], rng))
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        moves = random.Random(9)
        original, twin = copy.deepcopy(env), clone
        while not all(original.terminations.values()):
            action = _masked(original.last()[0]["action_mask"], moves)
            original.step(action)
            twin.step(action)
            assert np.array_equal(original.last()[0]["observation"], twin.last()[0]["observation"])
        assert original.table.state.scores == twin.table.state.scores
    gym_env = KoikoiEnv("greedy")
    gym_env.reset(seed=2)
    assert copy.deepcopy(gym_env).table.state.scores == gym_env.table.state.scores


def test_an_action_that_is_not_an_integer_is_refused_not_cut_down() -> None:
    raw = koikoi_v0.raw_env()
    raw.reset(seed=1)
    legal = int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0])
    for bad in (legal + 0.7, float(legal), str(legal), None):
        with pytest.raises(IllegalMoveError, match="is not an integer index"):
            raw.step(bad)  # type: ignore[arg-type]
    raw.step(np.int64(legal))  # type: ignore[arg-type]  # numpy's integers are integers
    assert raw.table.decisions == 1


def test_the_gym_environment_takes_the_two_player_environment_s_reset_options() -> None:
    deal = shuffled_deal(77, 0)
    for first in ("player_1", "player_2"):
        env = KoikoiEnv("random", rules="guide")
        env.reset(seed=3, options={"deals": [deal], "first_dealer": first})
        state = env.table.state
        assert state.deals == (deal,) and state.first_dealer == ("player_1", "player_2").index(first)
    two = koikoi_v0.raw_env()
    for options, words in (({"first_dealer": 1}, "first_dealer: 'player_1' or 'player_2', not 1"),
                           ({"deals": ["x"]}, "a list of referee.engine.Deal")):  # fmt: skip
        with pytest.raises(ValueError, match=re.escape(words)):
            KoikoiEnv("random").reset(seed=1, options=options)
        with pytest.raises(ValueError, match=re.escape(words)):
            two.reset(seed=1, options=options)


def test_observations_stay_in_the_space_under_a_rules_file_with_huge_points(tmp_path: Any) -> None:
    rules = tmp_path / "big.toml"
    rules.write_text('base = "guide"\nchaff_points = 10000\nchaff_min = 1\nchaff_extra = 10000\n')
    env = koikoi_v0.raw_env(rules=str(rules))
    space = env.observation_space("player_1")["observation"]
    highest = 0.0
    for seed in range(6):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            observation = env.observe(env.agent_selection)
            assert space.contains(observation["observation"])
            highest = max(highest, float(observation["observation"][246]))
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(INDEX[KOIKOI] if observation["action_mask"][INDEX[KOIKOI]] else legal[0]))
    assert highest == SCORE_BOUND  # a koi-koi call doubled past it: observed at the bound
