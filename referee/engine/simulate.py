"""Simulation for search bots and learning: random playouts from any state, in one call.

States are immutable: :func:`referee.engine.apply` returns a new state and never changes the one it is given, so a
clone of a state is the state itself. ``root = state`` copies nothing, and any number of playouts may start from the
same root, in any order::

    rng = random.Random(7)
    for action in legal_actions(root):
        wins = sum(random_playout(apply(root, action), rng)[0].winner == me for _ in range(100))

In the compiled build the whole playout loop runs in C, without the interpreter between steps, and no step builds
event objects that nobody reads.

A search that stops at the end of a round needs the value of the match from there: :func:`round_outcomes` counts
what rounds played by a policy do, and :class:`MatchOdds` turns those counts and the rules into each player's
chance to win, by the lead, the rounds left and who deals.
"""

from __future__ import annotations

import random
from typing import Final

from referee.engine.policies import Ending, Policy, play_round, round_ends, round_ends_against
from referee.engine.rules import Rules
from referee.engine.state import Action, Phase, State, apply, legal_actions, new_match, settle

_OVER: Final = Phase.MATCH_OVER


def random_playout(state: State, rng: random.Random) -> tuple[State, int]:
    """Uniformly random legal actions from ``state`` to the end of the match: the final state and the number of
    decisions made. Deterministic for a given ``rng`` state; ``state`` itself is left as it was. No event is built
    on the way (``apply(..., record=False)``): the final state's ``events`` is empty; its ``winner``, ``scores`` and
    ``history`` tell the result."""
    steps = 0
    while state.phase is not _OVER:
        legal = legal_actions(state)
        state = apply(state, legal[int(rng.random() * len(legal))], record=False)
        steps += 1
    return state, steps


RoundOutcome = tuple[int, bool]
"""What one round did, seen from its dealer: the change of the dealer's lead (its score minus the other's) and
whether the dealer deals the next round too."""


def round_outcomes(rules: Rules, policy: Policy, rounds: int, seed: int) -> dict[RoundOutcome, int]:
    """How often each :data:`RoundOutcome` happens when ``policy`` plays both seats: ``rounds`` first rounds of
    matches seeded from ``seed`` (deterministic), counted. The raw material of :class:`MatchOdds`."""
    counts: dict[RoundOutcome, int] = {}
    for k in range(rounds):
        state = new_match(rules, seed * 1_000_003 + k)
        dealer = state.dealer
        lead = state.scores[dealer] - state.scores[1 - dealer]
        state = play_round(state, 0, policy, policy)
        key = (state.scores[dealer] - state.scores[1 - dealer] - lead, state.dealer == dealer)
        counts[key] = counts.get(key, 0) + 1
    return counts


class MatchOdds:
    """The value of the match to a player between two rounds: its chance to win plus half its chance to draw.

    Computed from the rules (rounds, the points each starts with, whether round points pass between the players and
    a player with none left loses, ties) and a distribution of :data:`RoundOutcome` (as :func:`round_outcomes`
    counts them), assumed the same for every round, by dynamic programming over the lead and the rounds left.
    ``tie``: the value of a tie at the end (1/2 for a draw; 1 or 0 when the first dealer wins ties).
    """

    def __init__(self, rules: Rules, outcomes: dict[RoundOutcome, int], tie: float) -> None:
        total = sum(outcomes.values())
        if total <= 0:
            raise ValueError("no round outcomes")
        moves = [(delta, keep, n / total) for (delta, keep), n in sorted(outcomes.items())]
        self.broke = rules.end_when_broke and rules.transfer_points and 0 < rules.starting_points <= 500
        widest = max(abs(delta) for delta, _, _ in moves)
        levels = min(rules.rounds, 64)
        self.bound = 2 * rules.starting_points if self.broke else min(widest * levels + 1, 1001)
        self.rounds = rules.rounds
        size = 2 * self.bound + 1
        end = [1.0 if d > 0 else 0.0 if d < 0 else tie for d in range(-self.bound, self.bound + 1)]
        self.table: list[tuple[list[float], list[float]]] = [(end, end)]  # [left][dealing][lead + bound]
        for _ in range(levels):
            after = self.table[-1]
            now: tuple[list[float], list[float]] = ([0.0] * size, [0.0] * size)
            for dealing in (0, 1):
                row = now[dealing]
                sign = 1 if dealing else -1  # outcomes are the dealer's: a lead change of -delta for the other
                for i in range(size):
                    d = i - self.bound
                    v = 0.0
                    for delta, keep, p in moves:
                        v += p * self._after(after, d + sign * delta, dealing == int(keep))
                    row[i] = v
            self.table.append(now)

    def _after(self, after: tuple[list[float], list[float]], lead: int, dealing: bool) -> float:
        if lead >= self.bound:
            return 1.0 if self.broke else after[int(dealing)][-1]
        if lead <= -self.bound:
            return 0.0 if self.broke else after[int(dealing)][0]
        return after[int(dealing)][lead + self.bound]

    def outcome(self, state: State, me: int) -> float:
        """The value for seat ``me`` of a state between rounds (as :func:`play_round` leaves it): the match result,
        or its chance to win, plus a tiny share (0.0005 a point) of the lead so that more points are better when
        the chance does not move."""
        return self._between(state.scores, state.is_over, state.winner, state.rules.rounds - state.round + 1,
                             state.dealer, me)  # fmt: skip

    def ending(self, state: State, end: Ending, me: int) -> float:
        """:meth:`outcome` of the state in which ``state``'s round ends as ``end`` says (:func:`round_ends`),
        without building it."""
        winner, points, reason = end
        won = winner if winner >= 0 else None
        scores, over, match_winner, dealer = settle(state.rules, state.scores, state.dealer, state.first_dealer,
                                                    state.round, won, points, reason)  # fmt: skip
        return self._between(scores, over, match_winner, state.rules.rounds - state.round, dealer, me)

    def _between(self, scores: tuple[int, int], over: bool, winner: int | None, left: int, dealer: int,
                 me: int) -> float:  # fmt: skip
        a, b = scores[me], scores[1 - me]
        if over:
            return 0.5 if winner is None else (1.0 if winner == me else 0.0)
        return self.value(a - b, left, dealer == me) + 0.0005 * (a - b)

    def value(self, lead: int, left: int, dealing: bool) -> float:
        """The value with ``lead`` (my score minus the other's), ``left`` rounds still to play, and whether I deal
        the next one. Beyond 64 rounds left, the value at 64."""
        if self.broke and abs(lead) >= self.bound:
            return 1.0 if lead > 0 else 0.0
        row = self.table[max(0, min(left, len(self.table) - 1))][int(dealing)]
        return row[max(0, min(lead + self.bound, len(row) - 1))]


def sample_values(state: State, actions: list[Action], alive: list[int], me: int, mine: Policy, theirs: Policy,
                  odds: MatchOdds, values: list[list[float]]) -> None:  # fmt: skip
    """One sample of a determinized search: each action ``actions[i]`` for ``i`` in ``alive`` played at ``state``,
    its round played out by :func:`play_round` (seat ``me`` by ``mine``, the other by ``theirs``) and valued by
    :meth:`MatchOdds.outcome`; the value appended to ``values[i]``. In the compiled engine every action's round
    is played in one call of the C round loop (:func:`round_ends`) and valued from its end (:meth:`MatchOdds.ending`,
    the same value)."""
    ends = round_ends(state, [actions[i] for i in alive], me, mine, theirs)
    for k, i in enumerate(alive):
        values[i].append(_valued(state, actions[i], ends[k] if ends is not None else None, me, mine, theirs, odds))


def values_against(state: State, action: Action, me: int, mine: Policy, opponents: list[Policy],
                   odds: MatchOdds) -> list[float]:  # fmt: skip
    """``action`` played at ``state`` and its round played out against each of ``opponents`` (seat ``me`` by
    ``mine``), each valued by :meth:`MatchOdds.outcome`: in the compiled engine in one call of the C round loop
    (:func:`round_ends_against`), the same values."""
    ends = round_ends_against(state, action, me, mine, opponents)
    return [_valued(state, action, ends[j] if ends is not None else None, me, mine, rival, odds)
            for j, rival in enumerate(opponents)]  # fmt: skip


def _valued(state: State, action: Action, end: Ending | None, me: int, mine: Policy, theirs: Policy,
            odds: MatchOdds) -> float:  # fmt: skip
    """The value of ``action``'s round: from its end where the C round loop gave one, else played by the engine."""
    if end is not None:
        return odds.ending(state, end, me)
    return odds.outcome(play_round(apply(state, action, record=False), me, mine, theirs), me)
