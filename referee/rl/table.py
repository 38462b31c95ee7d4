"""The match under both learning environments: the engine state, each seat's observation and mask (built from
``observe(state, seat)`` only), the action of an index, the rewards of a step, and the seat's table as text.

Seats are 0 and 1 here (the engine's); the environments name them ``player_1`` and ``player_2``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import numpy.typing as npt

from referee.engine import (
    Action,
    Deal,
    Event,
    MatchEnd,
    RoundEnd,
    Rules,
    State,
    View,
    apply,
    load_rules,
    new_match,
    observe,
)
from referee.errors import RefereeError
from referee.rl.actions import describe, legal_by_index
from referee.rl.observation import action_mask, encode

Observation = dict[str, npt.NDArray[Any]]
"""``{"observation": float32 vector, "action_mask": int8 vector}``."""


AGENTS = ("player_1", "player_2")
"""The agents, seat 1 and seat 2."""


class Reward(StrEnum):
    """What a step rewards."""

    POINTS = "points"
    """The points of each round as it ends: the winner gets +points, the loser -points."""
    OUTCOME = "outcome"
    """The match result at its end: +1 to the winner, -1 to the loser, 0 each for a draw."""


class IllegalMoveError(RefereeError, ValueError):
    """An action index that is not legal for the seat to move."""


def resolve_rules(rules: str | Rules) -> Rules:
    """A preset name, a rules file, or :class:`~referee.engine.Rules` as they are."""
    return rules if isinstance(rules, Rules) else load_rules(rules)


def rewards(events: Sequence[Event], mode: Reward) -> tuple[float, float]:
    """The rewards of seats 0 and 1 for the events of one step."""
    r0 = 0.0
    for e in events:
        if mode is Reward.POINTS and isinstance(e, RoundEnd) and e.winner is not None:
            r0 += e.points if e.winner == 0 else -e.points
        elif mode is Reward.OUTCOME and isinstance(e, MatchEnd) and e.winner is not None:
            r0 += 1.0 if e.winner == 0 else -1.0
    return r0, -r0


class Table:
    """One match at a time on the engine, from the seats' side."""

    def __init__(self, rules: str | Rules, reward: Reward | str = Reward.POINTS) -> None:
        self.rules = resolve_rules(rules)
        self.reward = Reward(reward)
        self.state: State = new_match(self.rules, 0)
        self._views: list[View | None] = [None, None]
        self.decisions = 0  # actions applied in this match

    def reset(self, seed: int, deals: Sequence[Deal] = (), first_dealer: int | None = None) -> Sequence[Event]:
        """A new match: ``new_match(rules, seed, deals, first_dealer)``; its opening events."""
        self.state = new_match(self.rules, seed, deals, first_dealer)
        self._views = [None, None]
        self.decisions = 0
        return self.state.events

    @staticmethod
    def reset_options(options: dict[str, Any] | None) -> tuple[tuple[Deal, ...], int | None]:
        """The deals and first dealer (engine seat) of a ``reset``'s ``options``: ``deals`` (a list of
        :class:`~referee.engine.Deal`, dealt first) and ``first_dealer`` (``"player_1"`` or ``"player_2"``);
        ``ValueError`` for another value of either. Other keys are left to wrappers (PettingZoo's API test passes
        one of its own)."""
        options = options or {}
        deals = tuple(options.get("deals") or ())
        if not all(isinstance(d, Deal) for d in deals):
            raise ValueError("reset option deals: a list of referee.engine.Deal")
        first = options.get("first_dealer")
        if first is not None and first not in AGENTS:
            raise ValueError(f"reset option first_dealer: 'player_1' or 'player_2', not {first!r}")
        return deals, None if first is None else AGENTS.index(first)

    def reset_playable(self, seed: int, deals: Sequence[Deal] = (), first_dealer: int | None = None) -> int:
        """:meth:`reset`, and while the match is over before its first decision (a hand yaku in a one-round
        match: nothing to decide) again with the next seed, without ``deals``. The seed played."""
        self.reset(seed, deals, first_dealer)
        while self.state.is_over:
            seed += 1
            self.reset(seed, (), first_dealer)
        return seed

    @property
    def to_move(self) -> int:
        """The seat whose decision is due (the last to move once the match is over)."""
        return self.state.to_move

    @property
    def over(self) -> bool:
        """Whether the match has ended."""
        return self.state.is_over

    def view(self, seat: int) -> View:
        """``observe(state, seat)``, built once per position."""
        v = self._views[seat]
        if v is None:
            v = self._views[seat] = observe(self.state, seat)
        return v

    def observation(self, seat: int) -> Observation:
        """The observation and action mask of ``seat``."""
        v = self.view(seat)
        return {"observation": encode(v), "action_mask": action_mask(v.legal)}

    def action(self, index: int) -> Action:
        """The engine action of ``index`` for the seat to move; :class:`IllegalMoveError` if it is not legal."""
        legal = legal_by_index(self.view(self.state.to_move).legal)
        try:
            number = operator.index(index)  # an integer (numpy's too), never a float cut down to one
        except TypeError:
            raise IllegalMoveError(f"action {index!r} is not an integer index") from None
        if number in legal:
            return legal[number]
        try:
            what = f"{number} ({describe(number)})"
        except ValueError:  # out of the action space
            what = repr(index)
        raise IllegalMoveError(f"illegal action {what} for seat {self.state.to_move + 1}")

    def step(self, action: Action) -> tuple[Sequence[Event], tuple[float, float]]:
        """Apply a legal engine ``action``: the events and both seats' rewards."""
        self.state = apply(self.state, action)
        self._views = [None, None]
        self.decisions += 1
        return self.state.events, rewards(self.state.events, self.reward)

    def render(self, seat: int) -> str:
        """The table as ``seat`` sees it, drawn by the terminal renderer (plain text)."""
        from referee.protocol import action_json, view_json
        from referee.seats.render import Renderer

        v = self.view(seat)
        lines = Renderer(seat + 1).board(view_json(v), [action_json(a) for a in v.legal])
        return "\n".join(line.plain.rstrip() for line in lines) + "\n"
