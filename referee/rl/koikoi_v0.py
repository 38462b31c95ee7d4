"""Koi-Koi as a PettingZoo AEC environment, written as PettingZoo's classic card games are::

    from referee.rl import koikoi_v0

    env = koikoi_v0.env(rules="koikoi-japan")
    env.reset(seed=7)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else env.action_space(agent).sample(observation["action_mask"])
        env.step(action)

Agents ``player_1`` and ``player_2`` are seats 1 and 2. The action space is ``Discrete(242)``
(:mod:`referee.rl.actions`), the observation ``{"observation": Box(257,), "action_mask": Box(242,)}``
(:mod:`referee.rl.observation`), built from what that seat may see and nothing else. Rewards are the points of each
round as it ends (``reward="outcome"``: +1/-1/0 for the match). ``reset(seed=S)`` plays the engine's match
``new_match(rules, seed=S)`` (``match_seed`` says which; a match over before its first decision, a hand yaku in a
one-round match, is passed over for the next seed); without a seed the next match seed comes from the last one given
(or a random start). :func:`env` wraps :class:`raw_env` as the classic games do: an illegal action ends the match
with ``-1`` for the player who made it; :class:`raw_env` itself raises :class:`~referee.rl.table.IllegalMoveError`.
"""

from __future__ import annotations

import random
import secrets
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from referee.engine import Rules
from referee.rl.actions import N_ACTIONS
from referee.rl.observation import HIGH, LOW
from referee.rl.table import AGENTS, Observation, Reward, Table, rewards


def observation_space() -> spaces.Dict:
    """The observation space of one agent."""
    return spaces.Dict(
        {
            "observation": spaces.Box(LOW, HIGH, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
        }
    )


def env(**kwargs: Any) -> AECEnv[str, Observation, int]:
    """The environment, wrapped as PettingZoo's classic games: an illegal action ends the match (reward -1 to
    its player), an out-of-range one is an assertion error, and the call order is enforced. ``kwargs`` go to
    :class:`raw_env`."""
    inner: AECEnv[str, Observation, int] = raw_env(**kwargs)
    inner = wrappers.TerminateIllegalWrapper(inner, illegal_reward=-1)
    inner = wrappers.AssertOutOfBoundsWrapper(inner)
    return wrappers.OrderEnforcingWrapper(inner)


class raw_env(AECEnv[str, Observation, int]):  # type: ignore[misc]  # PettingZoo's name
    """The unwrapped environment. ``rules``: a preset name, a rules file or :class:`~referee.engine.Rules`;
    ``reward``: ``"points"`` or ``"outcome"``; ``render_mode``: None, ``"ansi"`` or ``"human"``."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "koikoi_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self, rules: str | Rules = "koikoi-japan", render_mode: str | None = None, reward: str = "points"
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', not {render_mode!r}")
        self.render_mode = render_mode
        self.table = Table(rules, Reward(reward))
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        space = observation_space()
        self.observation_spaces = dict.fromkeys(AGENTS, space)
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in AGENTS}
        self._seeds = random.Random(secrets.randbits(64))
        self.match_seed = 0
        self._reset_records()

    def _reset_records(self) -> None:
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """The observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """The action space of ``agent``."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a match: ``new_match(rules, seed)``, or the next seed of the sequence without one.
        ``options`` may give ``deals`` (a list of :class:`~referee.engine.Deal`, used first) and ``first_dealer``
        (``"player_1"`` or ``"player_2"``); ``ValueError`` for another value of either."""
        if seed is not None:
            self._seeds = random.Random(seed)
            self.match_seed = seed
        else:
            self.match_seed = self._seeds.getrandbits(52)
        deals, dealer = Table.reset_options(options)
        self.match_seed = self.table.reset_playable(self.match_seed, deals, dealer)
        self.agents = list(AGENTS)
        self._reset_records()
        r0, r1 = rewards(self.table.state.events, self.table.reward)  # a round a hand yaku ended as it was dealt
        self.rewards = {AGENTS[0]: r0, AGENTS[1]: r1}
        self._cumulative_rewards = dict(self.rewards)
        self.agent_selection = AGENTS[self.table.to_move]

    def observe(self, agent: str) -> Observation:
        """What ``agent`` may see now, and its action mask (all 0 when it has no decision due)."""
        return self.table.observation(AGENTS.index(agent))

    def step(self, action: int | None) -> None:
        """Play ``action`` (an index of the action space) for the agent to move."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        table = self.table
        _, (r0, r1) = table.step(table.action(action))  # type: ignore[arg-type]  # None: only when dead
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {AGENTS[0]: r0, AGENTS[1]: r1}
        if table.over:
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = AGENTS[table.to_move]
        self._accumulate_rewards()

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: the table as the agent to move sees it; ``"human"``: printed."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: pass render_mode='ansi' or 'human'")
            return None
        text = self.table.render(AGENTS.index(self.agent_selection))
        if self.render_mode == "human":  # printed, as the classic environments' human mode
            print(text, flush=True)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""
