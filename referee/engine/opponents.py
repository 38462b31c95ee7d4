"""A model of the opponent for search bots: the family of :mod:`referee.engine.policies`, weighted by its choices.

:class:`OpponentModel` weighs each valuation and each koi-koi rule of the family by how well it explains the
opponent's choices seen so far in the match (and, by a factor ``CARRY``, in earlier matches against the same
process). The opponent's hand is hidden, so the likelihood of a play is estimated on deals sampled uniformly among
those consistent with what the seat saw (:func:`~referee.engine.determinize.determinize` with an ``observer``): the
share of samples in which the member makes that play, with a tremble ``TREMBLE`` spread over the legal actions so
that one surprise does not rule a member out (the ``None`` valuation gives every legal action the same chance).
The weights are the posterior over the family (uniform prior), valuations and koi-koi rules apart, mixed with a
uniform share ``FLOOR``; :meth:`OpponentModel.draw` draws a member by them. The evidence of a round is gathered
again at each of the seat's decisions (:meth:`OpponentModel.gather`) and settled when the round ends.

Standard library only, no I/O.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random

from referee.engine.determinize import DeterminizeError, Record, determinize
from referee.engine.policies import KOIKOI_RULES, VALUATIONS, KoikoiRule, Policy
from referee.engine.state import KOIKOI, Action, Phase, State, legal_actions

TREMBLE = 0.1
"""Share of a member's choices assumed to be any legal action (so that no single play rules a member out)."""
FLOOR = 0.1
"""Share of the weights kept uniform over the family, however strong the evidence."""
CARRY = 0.5
"""Factor on the evidence of earlier matches when a new match starts against the same process."""


class OpponentModel:
    """Log-likelihoods of each valuation and koi-koi rule given the opponent's choices, and draws from the
    weights they give."""

    def __init__(self) -> None:
        self.settled = [0.0] * len(VALUATIONS)  # evidence of finished rounds
        self.settled_koikoi = [0.0] * len(KOIKOI_RULES)
        self.current = [0.0] * len(VALUATIONS)  # evidence of the round being played
        self.current_koikoi = [0.0] * len(KOIKOI_RULES)
        self.choices = 0  # opponent decisions with a choice seen in finished rounds
        # the koi-koi weights, with the evidence they came from (a search draws a rule for every sample)
        self._koikoi_cache: tuple[list[float], list[float], list[float], list[float]] | None = None

    def new_match(self) -> None:
        """Keep a share ``CARRY`` of the evidence when a new match starts against the same process."""
        self.settled = [CARRY * x for x in self.settled]
        self.settled_koikoi = [CARRY * x for x in self.settled_koikoi]
        self.current = [0.0] * len(VALUATIONS)
        self.current_koikoi = [0.0] * len(KOIKOI_RULES)

    def gather(self, record: Record, rng: random.Random, samples: int, settle: bool = False) -> None:
        """Estimate the evidence of the round being played from ``samples`` uniform deals; ``settle``: the round is
        ending, add it to the finished rounds'."""
        plays, koikois = round_evidence(record, rng, samples)
        n = len(VALUATIONS)
        cur = [0.0] * n
        for agree, width in plays:
            for i in range(n):
                share = 1.0 / width if VALUATIONS[i] is None else (1 - TREMBLE) * agree[i] + TREMBLE / width
                cur[i] += math.log(max(share, 1e-9))
        cur_k = [0.0] * len(KOIKOI_RULES)
        for agree in koikois:
            for i in range(len(KOIKOI_RULES)):
                cur_k[i] += math.log((1 - TREMBLE) * agree[i] + TREMBLE / 2)
        if settle:
            self.settled = [a + b for a, b in zip(self.settled, cur, strict=True)]
            self.settled_koikoi = [a + b for a, b in zip(self.settled_koikoi, cur_k, strict=True)]
            self.current, self.current_koikoi = [0.0] * n, [0.0] * len(KOIKOI_RULES)
            self.choices += len(plays) + len(koikois)
        else:
            self.current, self.current_koikoi = cur, cur_k

    def weights(self) -> tuple[list[float], list[float]]:
        """The weights of the valuations and of the koi-koi rules (each sums to 1)."""
        return (_posterior([a + b for a, b in zip(self.settled, self.current, strict=True)]),
                _posterior([a + b for a, b in zip(self.settled_koikoi, self.current_koikoi, strict=True)]))  # fmt: skip

    def draw(self, rng: random.Random) -> Policy:
        """A member of the family drawn by the weights."""
        wv, wk = self.weights()
        v = rng.choices(range(len(VALUATIONS)), wv)[0]
        k = rng.choices(range(len(KOIKOI_RULES)), wk)[0]
        return Policy(VALUATIONS[v], KOIKOI_RULES[k][1])

    def draw_koikoi(self, rng: random.Random) -> KoikoiRule:
        """A koi-koi rule of the family drawn by its weights alone (the hybrid model: the opponent's koi-koi calls are
        public, so their evidence needs one sample, see :meth:`gather`)."""
        cum = self._koikoi_table()[3]  # as rng.choices(range(n), weights) draws: the same index for the same rng state
        return KOIKOI_RULES[bisect.bisect_right(cum, rng.random() * (cum[-1] + 0.0), 0, len(cum) - 1)][1]

    def koikoi_weights(self) -> list[float]:
        """The weights of the koi-koi rules (as :meth:`weights` gives them), computed again only when their
        evidence has changed."""
        return self._koikoi_table()[2]

    def _koikoi_table(self) -> tuple[list[float], list[float], list[float], list[float]]:
        """The koi-koi evidence the weights came from (settled, current), the weights and their running sums."""
        a, b = self.settled_koikoi, self.current_koikoi
        cache = self._koikoi_cache
        if cache is None or cache[0] != a or cache[1] != b:
            weights = _posterior([x + y for x, y in zip(a, b, strict=True)])
            cache = self._koikoi_cache = (list(a), list(b), weights, list(itertools.accumulate(weights)))
        return cache

    def describe(self) -> str:
        """The weights, for ``--stats``."""
        wv, wk = self.weights()
        names = [v.name if v else "any" for v in VALUATIONS] + [n for n, _ in KOIKOI_RULES]
        return " ".join(f"{n}={w:.2f}" for n, w in zip(names, wv + wk, strict=True))


def _posterior(loglik: list[float]) -> list[float]:
    top = max(loglik)
    w = [math.exp(x - top) for x in loglik]
    total = sum(w)
    n = len(w)
    return [(1 - FLOOR) * x / total + FLOOR / n for x in w]


def round_evidence(record: Record, rng: random.Random, samples: int
                   ) -> tuple[list[tuple[list[float], float]], list[list[float]]]:  # fmt: skip
    """The opponent's decisions with a choice in the round being played, and how often each member of the family
    makes them on ``samples`` uniform deals: for each play or capture choice, the share per valuation and the mean
    number of legal actions; for each koi-koi decision, the share per koi-koi rule."""
    spy = _Spy(1 - record.seat, samples)
    current = record.current
    if current is not None and not current.opponent_played:
        # The opponent has not played yet (each of its turns starts with a play from its hand): no decision to weigh.
        # So also for a round that ended before its first turn: won at the deal by an opening hand's yaku, or
        # stopped by the seat itself on the round's first turn, where a replay would run past the round's end.
        return [], []
    for _ in range(samples):
        spy.at = 0
        try:
            determinize(record, rng, observer=spy)
        except DeterminizeError:
            # A round whose last decision was just made replays past its end, which determinize refuses only
            # after the observer saw every decision; any other inconsistency has no decision to show.
            if not spy.at:
                raise
    return list(spy.plays.values()), list(spy.koikois.values())


class _Spy:
    """The observer of :func:`round_evidence`: at each decision of the opponent, which members agree with it."""

    def __init__(self, opponent: int, samples: int) -> None:
        self.opponent, self.samples = opponent, samples
        self.plays: dict[int, tuple[list[float], float]] = {}
        self.koikois: dict[int, list[float]] = {}
        self.at = 0

    def __call__(self, state: State, action: Action) -> None:
        self.at += 1  # the opponent's decisions are the same, in the same order, in every sample
        legal = legal_actions(state)
        if len(legal) < 2:
            return
        share = 1.0 / self.samples
        if state.phase is Phase.KOIKOI:
            row = self.koikois.setdefault(self.at, [0.0] * len(KOIKOI_RULES))
            want = action == KOIKOI
            for i, (_, rule) in enumerate(KOIKOI_RULES):
                if rule(state, self.opponent) == want:
                    row[i] += share
            return
        agree, width = self.plays.get(self.at, ([0.0] * len(VALUATIONS), 0.0))
        for i, v in enumerate(VALUATIONS):
            if v is not None and v.choose(state, legal) == action:
                agree[i] += share
        self.plays[self.at] = (agree, width + len(legal) * share)
