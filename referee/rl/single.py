"""Koi-Koi as a Gymnasium environment for one seat against an opponent::

    import gymnasium
    from referee.rl.single import KoikoiEnv

    env = KoikoiEnv(opponent="greedy")            # or "random", a policy(obs, mask), or a bot command
    observation, info = env.reset(seed=7)
    while True:
        action = env.action_space.sample(observation["action_mask"])
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

The spaces, observation and rewards are those of :mod:`referee.rl.koikoi_v0` for the agent's seat. The opponent
plays its decisions inside :meth:`KoikoiEnv.reset` and :meth:`KoikoiEnv.step` (a match over before the agent's first
decision is passed over for the next seed: ``info["match_seed"]`` says which was played); a bot command runs as a
process speaking ``koikoi/1`` (:class:`~referee.rl.opponents.BotOpponent`). An illegal action ends the episode with
``illegal_reward`` and ``info["illegal_action"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
from gymnasium import spaces

from referee.engine import Event, Rules
from referee.rl.actions import N_ACTIONS
from referee.rl.koikoi_v0 import observation_space
from referee.rl.opponents import BotOpponent, Opponent, PolicyOpponent, RandomOpponent
from referee.rl.policies import Policy, greedy
from referee.rl.table import AGENTS, IllegalMoveError, Observation, Reward, Table, rewards

OpponentSpec = str | Policy | Opponent
"""``"random"``, ``"greedy"``, any other string (a bot command), a policy ``(observation, mask) -> index``, or
an :class:`~referee.rl.opponents.Opponent`."""


def make_opponent(spec: OpponentSpec) -> Opponent:
    """The :class:`~referee.rl.opponents.Opponent` of ``spec``."""
    if isinstance(spec, Opponent):
        return spec
    if spec == "random":
        return RandomOpponent()
    if spec == "greedy":
        return PolicyOpponent(greedy, "greedy")
    if isinstance(spec, str):
        return BotOpponent(spec)
    return PolicyOpponent(spec, getattr(spec, "__name__", "policy"))


ENV_ID = "koikoi/KoiKoi-v0"
"""The Gymnasium id of :class:`KoikoiEnv` (``gymnasium.make(ENV_ID, opponent="greedy")`` once this module is
imported)."""


class KoikoiEnv(gymnasium.Env[dict[str, Any], Any]):
    """One seat of a match against ``opponent``. ``seat``: ``"player_1"`` or ``"player_2"`` (None: drawn at each
    reset); ``rules``, ``reward`` and ``render_mode`` as in :class:`referee.rl.koikoi_v0.raw_env`."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}  # noqa: RUF012 - gymnasium declares it so

    def __init__(
        self,
        opponent: OpponentSpec = "random",
        *,
        rules: str | Rules = "koikoi-japan",
        seat: str | None = None,
        reward: str = "points",
        render_mode: str | None = None,
        illegal_reward: float = -1.0,
    ) -> None:
        if seat is not None and seat not in AGENTS:
            raise ValueError(f"seat must be None, 'player_1' or 'player_2', not {seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', not {render_mode!r}")
        self.render_mode = render_mode
        self.table = Table(rules, Reward(reward))
        self.opponent = make_opponent(opponent)
        self.fixed_seat = None if seat is None else AGENTS.index(seat)
        self.illegal_reward = illegal_reward
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.seat = 0
        self.match_seed = 0
        self._matches = 0
        self._done = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """A new match: ``new_match(rules, seed)`` with a seed given, else one drawn from the environment's
        generator; the opponent plays until the agent's first decision. ``options`` as the two-player
        environment's: ``deals`` (dealt first) and ``first_dealer`` (``"player_1"`` or ``"player_2"``)."""
        deals, dealer = Table.reset_options(options)
        super().reset(seed=seed)
        rng = self.np_random
        self.match_seed = seed if seed is not None else int(rng.integers(2**52))
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(2))
        opp = 1 - self.seat
        while True:  # a match over before the agent's first decision has nothing to learn: the next seed
            self._matches += 1
            events = self.table.reset(self.match_seed, deals, dealer)
            deals = ()  # a match over at once: the next seed, dealt from it
            self.opponent.start(self.table.rules, opp, f"m-{self._matches:04d}", rng)
            self.opponent.tell(events, opp)
            self._reward = rewards(events, self.table.reward)[self.seat]  # a round a hand yaku ended at once
            self._opponent_turns()
            if not self._done:
                return self.table.observation(self.seat), self._info()
            self.match_seed += 1

    def _info(self, **extra: Any) -> dict[str, Any]:
        return {"seat": AGENTS[self.seat], "match_seed": self.match_seed, **extra}

    def _record(self, events: Sequence[Event], rewards: tuple[float, float]) -> None:
        self.opponent.tell(events, 1 - self.seat)
        self._reward += rewards[self.seat]

    def _opponent_turns(self) -> None:
        table, opp = self.table, 1 - self.seat
        while not table.over and table.to_move == opp:
            self._record(*table.step(self.opponent.act(table, opp)))
        self._done = table.over

    def step(self, action: int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Play ``action`` (an index), then the opponent's decisions up to the agent's next one. The reward sums
        the agent's rewards of all those steps."""
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        table = self.table
        try:
            engine_action = table.action(action)
        except IllegalMoveError:
            self._done = True
            return table.observation(self.seat), self.illegal_reward, True, False, self._info(illegal_action=True)
        self._record(*table.step(engine_action))
        self._opponent_turns()
        reward, self._reward = self._reward, 0.0  # with what came before the agent's first decision
        return table.observation(self.seat), reward, self._done, False, self._info()

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: the table as the agent's seat sees it; ``"human"``: printed."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: pass render_mode='ansi' or 'human'")
            return None
        text = self.table.render(self.seat)
        if self.render_mode == "human":  # printed, as the classic environments' human mode
            print(text, flush=True)
            return None
        return text

    def close(self) -> None:
        """Close the opponent (a bot process ends)."""
        self.opponent.close()


if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point="referee.rl.single:KoikoiEnv")
