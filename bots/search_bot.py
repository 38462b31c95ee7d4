#!/usr/bin/env python3
"""A strong koikoi/1 house bot: determinized Monte Carlo search over the referee's own rules engine.

Run: ``python3 bots/search_bot.py [--ms N] [--playouts N] [--seed N] [--model M] [--koikoi K]
[--continuations C] [--stats] [--name NAME]`` (needs the
``referee`` package: installed, or this file inside the repository). It speaks the protocol through
:mod:`referee.bot`.

How it decides. It keeps a :class:`~referee.engine.determinize.Record` of everything its seat was told this match
(the events of its input, nothing else). At each decision with more than one legal action it repeats, until its
time or playout budget is spent: sample the unseen cards (the opponent's hand, the stock order) among the deals
consistent with that record and rebuild the exact state (:func:`determinize`), then for every legal action apply
it and play the rest of the round, its own seat with the greedy heuristic and the opponent with a policy from a
model of it. The default model (``--model hybrid``) plays the opponent's cards as the greedy heuristic does and draws
its koi-koi rule (:data:`~referee.engine.policies.KOIKOI_RULES`) by weights learned from the opponent's koi-koi calls
this match (:class:`~referee.engine.opponents.OpponentModel`; the calls are public, so one replay of the record
weighs them exactly); the opponent's hand is sampled among those with which greedy would have played each card it
played this round, drawn without the cards greedy would rather have played than one of those
(:meth:`~referee.engine.policies.Valuation.excluded`); after 64 tries the model is dropped for that sample, and once
two samples were dropped and none kept it since the opponent's last play, it is dropped until the opponent plays
again. ``--model mixture`` also
learns the card play: a family of simple policies (:mod:`referee.engine.policies`) weighed by how well each
explains all the opponent's choices, each sample drawing a member by those weights; ``--model greedy`` assumes the
greedy heuristic.
Every action is tried on the same samples, and an action that the leader beats by ``PRUNE_T`` standard errors of
the paired differences is no longer sampled; when one action is left the search ends early. The value of a finished
round is the match outcome when the match is over (win 1, draw 1/2, loss 0), otherwise the chance of winning the
match from the new scores, the rounds left and who deals, read from a table computed from the rules
(:class:`~referee.engine.simulate.MatchOdds`, over the round results of 2,000 rounds of greedy self-play, built at
``hello``). It plays the action with the best mean.

Its own play after the first action (``--continuations``): the greedy heuristic (``greedy``, the default), or a
portfolio of the family's policies (:data:`PORTFOLIO`, ``all``): each action's round is played out with each of
them on every sample, and an action is worth its best continuation's mean; its koi-koi call is then worth the best
of :data:`KOIKOI_PORTFOLIO` (greedy with each koi-koi rule of the family) against its worst opponent. Each
continuation plays on its seat's view alone, so the best of them is a plan the bot could follow. It takes up to
about twice the time for the same samples and was not shown to play better (``bots/STRENGTH.md``), so the greedy
continuation stays the default. ``learned`` plays on with a card play learned from the search's own choices
(:class:`~referee.engine.policies.Learned`, the weights of ``referee/engine/play_weights.json`` fitted by
``benchmarks/learn_play.py``: one step of expert iteration), with the ``--rollout-koikoi`` rule.

Its own koi-koi call (``--koikoi robust``, the default): stopping is worth its exact value (the round is scored);
koi-koi is worth the mean of its rollouts against the opponent of each sample *and* against each of
:data:`RACERS` (every valuation of the family, stopping at its first yaku), on the same samples, and the call is
koi-koi only when the worst of those means beats stopping: a koi-koi must pay against an opponent that races to a
yaku and cashes it, whoever the opponent seemed to be. ``--koikoi model`` values it against the model alone. In
every rollout both seats stop where stopping wins the match, whatever their koi-koi rule
(:func:`~referee.engine.policies.cashing`; ``--opponent-koikoi model`` leaves the opponent's rule as the model drew
it).

Time. Each request carries ``move_ms`` and ``bank_ms``. The bot may use ``MOVE_SHARE`` of ``move_ms`` plus
``BANK_SHARE`` of the bank left, in wall-clock time, and ``--ms`` caps its thinking in this process's CPU time
(``--wall``: in wall-clock time); it stops at the first limit reached, when one more sample would not fit. A
decision with one legal action is answered at once. As the extra time is a fixed share of what is left of the
bank, the bank never runs out, however busy the machine. Counting ``--ms`` in CPU time makes the bot's strength
the same on a busy machine as on an idle one, as long as the machine gives it enough CPU to stay within the
clock's share. ``--stats`` prints each decision's samples, rollouts, wall and CPU milliseconds to stderr.
``--seed`` fixes the sampling; the choices repeat exactly when ``--playouts`` (samples per decision), not the
clock, ends the search.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

try:
    import referee  # noqa: F401
except ImportError:  # run from a checkout without installing: use the package next to this file
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.bot import Message, run
from referee.engine import (
    CARD_IDS,
    KOIKOI,
    STOP,
    Action,
    ActionKind,
    Phase,
    Rules,
    State,
    apply,
    card,
    legal_actions,
    mask_of_ids,
    rules_from_dict,
)
from referee.engine.determinize import Record, determinize
from referee.engine.events import RoundEnd
from referee.engine.opponents import OpponentModel
from referee.engine.policies import (
    GREEDY,
    GREEDY_POLICY,
    KOIKOI_RULES,
    VALUATIONS,
    KoikoiRule,
    Policy,
    bold,
    cashing,
    cautious,
    learned_play,
    never,
    play_round,
)
from referee.engine.policies import greedy_action as greedy_action  # the heuristic its rollouts play, by name
from referee.engine.rules import TieBreak
from referee.engine.simulate import MatchOdds, RoundOutcome, round_outcomes, sample_values, values_against
from referee.protocol import seat_event_from_json

MOVE_SHARE = 0.5
"""Share of each decision's ``move_ms`` spent thinking."""
BANK_SHARE = 0.02
"""Share of the bank left added to each decision's thinking time."""
BELIEF = 1.0
"""Default share of the samples whose opponent hand agrees with the model of the opponent (``--belief``)."""
MODELS = ("hybrid", "mixture", "greedy")
"""The models of the opponent (``--model``): the greedy heuristic's card play with a koi-koi rule weighted by the
opponent's koi-koi calls, a family weighted by all its choices, or the greedy heuristic alone."""
OWN_KOIKOI = {"cautious": Policy(GREEDY, cashing(cautious)), "never": Policy(GREEDY, never)}
"""Its own play in its rollouts (``--rollout-koikoi``): the greedy heuristic, with its koi-koi rule (but stopping
where that wins the match) or stopping at every yaku."""
OPPONENT_KOIKOI = ("cashing", "model")
"""The opponent's koi-koi calls in its rollouts (``--opponent-koikoi``): the model's rule but stopping where that
wins the match, or the model's rule alone."""
CONTINUATIONS = ("greedy", "all", "learned")
"""Its own play after the first action in its rollouts (``--continuations``): the ``--rollout-koikoi`` policy alone,
every policy of :data:`PORTFOLIO` (an action is worth its best mean over them), or the ``--rollout-koikoi`` policy
with the card play learned from the search's own choices (:func:`~referee.engine.policies.learned_play`)."""
CASHING: dict[KoikoiRule, KoikoiRule] = {rule: cashing(rule) for _, rule in KOIKOI_RULES}
"""Each koi-koi rule of the opponent model, stopping where that wins the match: the model's opponent cashes a
winning stop, whatever its rule."""
KOIKOI_VALUES = ("robust", "model")
"""How the search values its own koi-koi call (``--koikoi``): against the worst of several opponents that stop at
their first yaku and the model (``robust``), or against the model alone."""
EVIDENCE_SAMPLES = 6
"""Uniform deals on which the opponent's choices this round are weighed again at each decision."""
EVIDENCE_SETTLE = 16
"""Uniform deals on which a finished round's choices are weighed once, when it ends."""

_MONTH = tuple(15 << (4 * (c // 4)) for c in range(48))


def value(c: int, mine: int) -> float:
    """What taking card ``c`` is worth to a player who captured ``mine`` (a card mask), to the greedy heuristic."""
    return GREEDY.value(c, mine)


ODDS_ROUNDS = 2000
"""Rounds of greedy self-play that measure the distribution of round results behind the match value table."""
_OUTCOMES: dict[str, dict[RoundOutcome, int]] = {}
_ODDS: dict[tuple[str, float], MatchOdds] = {}


def match_odds(rules: Rules, tie: float) -> MatchOdds:
    """The match value table of ``rules`` (cached): round results of greedy self-play, then dynamic programming."""
    key = repr(sorted(rules.to_dict().items()))
    if key not in _OUTCOMES:
        _OUTCOMES[key] = round_outcomes(rules, GREEDY_POLICY, ODDS_ROUNDS, 1)
    if (key, tie) not in _ODDS:
        _ODDS[key, tie] = MatchOdds(rules, _OUTCOMES[key], tie)
    return _ODDS[key, tie]


def outcome(state: State, me: int, odds: MatchOdds) -> float:
    """The value for seat ``me`` of a state between rounds: the match result, or its chance to win (``odds``),
    plus a tiny share of the lead so that more points are better when the chance does not move
    (:meth:`~referee.engine.simulate.MatchOdds.outcome`)."""
    return odds.outcome(state, me)


def rollout(state: State, me: int, odds: MatchOdds, opponent: Policy = GREEDY_POLICY,
            mine: Policy = GREEDY_POLICY) -> float:  # fmt: skip
    """Play the round to its end, ``me`` with ``mine`` and the other seat with ``opponent`` (both by default the
    greedy heuristic; :func:`~referee.engine.policies.play_round`), and value the result for ``me``."""
    return outcome(play_round(state, me, mine, opponent), me, odds)


def wire(action: Action) -> dict[str, Any]:
    """The koikoi/1 action object of an engine action (as the request's ``legal`` list spells it)."""
    if action.kind is ActionKind.PLAY:
        if action.target >= 0:
            return {"play": CARD_IDS[action.card], "capture": CARD_IDS[action.target]}
        return {"play": CARD_IDS[action.card]}
    if action.kind is ActionKind.CHOOSE:
        return {"capture": CARD_IDS[action.target]}
    return {"koikoi": action.kind is ActionKind.KOIKOI}


PORTFOLIO = (
    OWN_KOIKOI["cautious"],
    *(Policy(v, OWN_KOIKOI["cautious"].koikoi) for v in VALUATIONS[1:] if v is not None),
    Policy(GREEDY, cashing(bold)),
)
"""Its own continuations with ``--continuations all``: each valuation of the family with the greedy heuristic's
koi-koi rule, and the greedy valuation playing on while it holds two cards; each stops where stopping wins the
match. Each plays on its seat's view alone, so an action's best continuation is one it could follow."""

KOIKOI_PORTFOLIO = (OWN_KOIKOI["cautious"], OWN_KOIKOI["never"], Policy(GREEDY, cashing(bold)))
"""Its own continuations after a koi-koi call with ``--continuations all``: the greedy heuristic with each koi-koi
rule of the family (greedy's, stopping at its next yaku, playing on while it holds two cards)."""

RACERS = tuple(Policy(v, never) for v in VALUATIONS if v is not None)
"""The opponents a koi-koi call is valued against (``--koikoi robust``): each valuation of the family, stopping at its
first yaku (after a koi-koi, an opponent's yaku that it cashes at once is what costs the caller most)."""


PRUNE_AT = frozenset((6, 10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
                      6144, 8192, 12288, 16384))
"""Sample counts at which clearly worse actions stop being sampled (successive elimination)."""
PRUNE_T = 3.0
"""An action is dropped when the leader beats it by this many standard errors of the paired differences."""


def prune(values: list[list[float]], alive: list[int]) -> list[int]:
    """The actions of ``alive`` still worth sampling: all but those the leader beats clearly on the same samples."""
    lead = max(alive, key=lambda i: sum(values[i]))
    best = values[lead]
    n = len(best)
    keep = []
    for i in alive:
        d = [b - v for b, v in zip(best, values[i], strict=True)]
        mean = sum(d) / n
        var = sum((x - mean) ** 2 for x in d) / (n - 1)
        if i == lead or mean <= PRUNE_T * math.sqrt(var / n):
            keep.append(i)
    return keep


def best_series(values: list[list[list[float]]], alive: list[int]) -> list[list[float]]:
    """Each action's values (``values[k][i]``: continuation ``k``, action ``i``) under its best continuation so far
    (the highest sum); the actions not in ``alive`` keep an empty series."""
    series: list[list[float]] = [[] for _ in values[0]]
    for i in alive:
        series[i] = max((v[i] for v in values), key=sum)
    return series


def best_call(values: list[list[list[float]]]) -> list[list[float]]:
    """The values of a koi-koi call (``values[k][j]``: its own continuation ``k``, opponent ``j``) under the
    continuation whose worst opponent's sum is the highest: one series per opponent."""
    return max(values, key=lambda v: min(map(sum, v)))


def fallback(request: Message) -> Message:
    """The greedy heuristic's choice from the request alone (its view and legal actions), stopping at a yaku."""
    legal: list[dict[str, Any]] = request["legal"]
    view = request["view"]
    mine = mask_of_ids(view["captured"][view["seat"] - 1])
    field, hand = mask_of_ids(view["field"]), mask_of_ids(view["hand"])

    def worth(a: dict[str, Any]) -> float:
        if "koikoi" in a:
            return 0.0 if a["koikoi"] else 1.0
        if "play" not in a:
            return value(card(a["capture"]), mine)
        c = card(a["play"])
        taken = 1 << card(a["capture"]) if "capture" in a else field & _MONTH[c]
        if not taken:
            return -value(c, mine) - 0.5 * ((hand & _MONTH[c]).bit_count() - 1)
        return 2.0 + value(c, mine) + sum(value(t, mine) for t in range(48) if taken >> t & 1)

    return max(legal, key=worth)


class Fit:
    """How the greedy card-play model fits the opponent's plays, since its last play (``at``: the match, the round
    and how many cards it played this round): the cards that model rules out of its hand, and how many samples
    since then found a hand that explains its plays (``kept``) or found none (``dropped``). A plain class, not a
    dataclass: this file is also loaded by path, as a module that ``sys.modules`` does not hold."""

    __slots__ = ("at", "dropped", "exclude", "kept")

    def __init__(self, at: tuple[int, int, int], exclude: int) -> None:
        self.at, self.exclude = at, exclude
        self.kept = self.dropped = 0


class Searcher:
    """The bot's memory of the current match and its search."""

    def __init__(
        self,
        ms: int | None,
        playouts: int | None,
        seed: int,
        belief: float = BELIEF,
        wall: bool = False,
        stats: bool = False,
        model: str = "hybrid",
        koikoi: str = "robust",
        rollout_koikoi: str = "cautious",
        opponent_koikoi: str = "cashing",
        continuations: str = "greedy",
    ) -> None:
        options = (("model", model, MODELS), ("koikoi", koikoi, KOIKOI_VALUES),
                   ("rollout_koikoi", rollout_koikoi, tuple(OWN_KOIKOI)),
                   ("opponent_koikoi", opponent_koikoi, OPPONENT_KOIKOI),
                   ("continuations", continuations, CONTINUATIONS))  # fmt: skip
        for name, given, known in options:
            if given not in known:
                raise ValueError(f"{name} is one of {', '.join(known)}, not {given!r}")
        self.ms, self.playouts, self.seed, self.belief, self.wall = ms, playouts, seed, belief, wall
        self.stats = stats
        self.mixture = model == "mixture"
        self.hybrid = model == "hybrid"
        self.robust = koikoi == "robust"
        self.mine = OWN_KOIKOI[rollout_koikoi]
        self.cashing = opponent_koikoi == "cashing"
        if continuations == "learned":
            self.mine = Policy(self.mine.valuation, self.mine.koikoi, learned_play())
        portfolio = continuations == "all"
        self.continuations = (self.mine, *PORTFOLIO[1:]) if portfolio else (self.mine,)
        self.after_call = (self.mine, *KOIKOI_PORTFOLIO[1:]) if portfolio else (self.mine,)
        self.opponent = OpponentModel()
        self.record: Record | None = None
        self.rules: Rules | None = None
        self.match = 0
        self.fit: Fit | None = None
        """How the greedy card-play model fits the opponent's plays since its last play (``greedy_sample``)."""

    def observe(self, msg: Message) -> None:
        """Take in ``hello``/``new_match`` (a new match) and every event."""
        if msg["type"] in ("hello", "new_match"):
            rules = dict(msg["rules"])
            self.rules = rules_from_dict(rules, source="hello")
            self.record = Record(self.rules, int(msg["seat"]) - 1)
            match_odds(self.rules, 0.5)  # the table now, while the clock allows (startup)
            self.match += 1
            self.opponent.new_match()
        elif self.record is not None:
            event = seat_event_from_json(msg)
            learn = self.mixture or self.hybrid
            if isinstance(event, RoundEnd) and learn and self.record.current is not None:
                rng = random.Random(f"{self.seed}/{self.match}/end/{len(self.record.rounds)}")
                try:
                    self.opponent.gather(self.record, rng, EVIDENCE_SETTLE if self.mixture else 1, settle=True)
                except Exception as exc:  # a record that does not replay: no evidence from this round
                    print(f"search: {type(exc).__name__}: {exc}; round not weighed", file=sys.stderr)
            self.record.add(event)

    def budget_s(self, request: Message) -> float:
        """Wall-clock seconds to think on ``request``: a share of its move time and bank (capped by ``--ms`` only
        with ``--wall``; otherwise ``--ms`` counts CPU time, in the search loop)."""
        t = request.get("time") or {}
        ms = MOVE_SHARE * float(t.get("move_ms", 1000)) + BANK_SHARE * float(t.get("bank_ms", 0))
        if self.ms is not None and self.wall:
            ms = min(ms, float(self.ms))
        return max(ms, 1.0) / 1000.0

    def choose(self, request: Message) -> Message:
        """The action to play: the search's choice, or the greedy heuristic's if the search cannot run."""
        legal_json: list[dict[str, Any]] = request["legal"]
        if len(legal_json) == 1:
            return legal_json[0]
        try:
            return self.search(request)
        except Exception as exc:  # a record that does not replay (a rules variant, a lost line): play on
            print(f"search: {type(exc).__name__}: {exc}; playing the greedy heuristic", file=sys.stderr)
            return fallback(request)

    def sample(self, record: Record, rng: random.Random) -> tuple[State, Policy]:
        """One determinization and the opponent's policy in its rollouts. With the mixture model, a member of the
        family drawn by its weights, and a hand with which it would have made the opponent's plays this round (none
        asked of ``any``); with the greedy model, the greedy heuristic. A share ``1 - belief`` of the samples is
        drawn without a model (the opponent plays greedy in their rollouts). With ``--opponent-koikoi cashing``
        the policy's koi-koi rule stops where stopping wins the match."""
        state, policy = self.draw(record, rng)
        if self.cashing:
            policy = Policy(policy.valuation, CASHING[policy.koikoi])
        return state, policy

    def draw(self, record: Record, rng: random.Random) -> tuple[State, Policy]:
        """The determinization and the opponent's policy of :meth:`sample`, as the model has it."""
        if rng.random() >= self.belief:
            return determinize(record, rng), GREEDY_POLICY
        if self.hybrid:
            return self.greedy_sample(record, rng), Policy(GREEDY, self.opponent.draw_koikoi(rng))
        if not self.mixture:
            return self.greedy_sample(record, rng), GREEDY_POLICY
        policy: Policy = self.opponent.draw(rng)
        if policy.valuation is None:
            return determinize(record, rng), policy
        return determinize(record, rng, captures=True, model=policy.valuation), policy

    def greedy_sample(self, record: Record, rng: random.Random) -> State:
        """A determinization whose opponent hand explains its plays this round as the greedy heuristic's. The
        hand is drawn without the cards that greedy would rather have played than one of those plays (captured
        with, or discarded; :meth:`~referee.engine.policies.Valuation.excluded`, found once per play of the
        opponent), so that few
        samples are rejected. Once two samples found no such hand (64 tries each) and none found one since the
        opponent's last play, its plays are taken for unexplained and the samples use the capture model only until
        it plays again, instead of spending 64 replays a sample on a model that does not fit."""
        current = record.current
        here = (self.match, len(record.rounds), current.opponent_played.bit_count() if current else 0)
        fit = self.fit
        if fit is None or fit.at != here:
            fit = self.fit = Fit(here, self.excluded(record, rng))
        if fit.dropped >= 2 and not fit.kept:
            return determinize(record, rng, captures=True)
        state = determinize(record, rng, captures=True, model=GREEDY, exclude=fit.exclude)
        if record.agreed:
            fit.kept += 1
        else:
            fit.dropped += 1
        return state

    @staticmethod
    def excluded(record: Record, rng: random.Random) -> int:
        """The cards the opponent cannot hold if it made its plays of this round as the greedy heuristic does."""
        out = 0

        def see(state: State, action: Action) -> None:
            nonlocal out
            if state.phase is Phase.PLAY:
                out |= GREEDY.excluded(state, action)

        determinize(record, rng, observer=see)
        return out

    def search(self, request: Message) -> Message:
        """The best mean value over determinized rollouts."""
        started = time.perf_counter()
        legal_json: list[dict[str, Any]] = request["legal"]
        if self.record is None or self.rules is None:
            raise RuntimeError("a request before hello")
        record = self.record
        me = record.seat
        first = record.first_dealer
        tie = 0.5 if self.rules.tie_break is TieBreak.DRAW else float(first == me)
        odds = match_odds(self.rules, tie)
        rng = random.Random(f"{self.seed}/{self.match}/{request['id']}")
        deadline = started + self.budget_s(request)
        cpu_deadline = time.process_time() + self.ms / 1000.0 if self.ms is not None and not self.wall else math.inf
        if self.mixture or self.hybrid:
            self.opponent.gather(record, rng, EVIDENCE_SAMPLES if self.mixture else 1)
        state, opponent = self.sample(record, rng)
        actions = legal_actions(state)
        answers = [wire(a) for a in actions]
        if sorted(map(str, answers)) != sorted(map(str, legal_json)):
            raise RuntimeError("the rebuilt state's legal actions differ from the request's")
        if self.robust and state.phase is Phase.KOIKOI:
            return self.koikoi(state, opponent, record, rng, odds, started, deadline, cpu_deadline)
        own = self.continuations
        values: list[list[list[float]]] = [[[] for _ in actions] for _ in own]  # by continuation, then action
        alive = list(range(len(actions)))
        samples = rollouts = 0
        cpu_started = last_cpu = time.process_time()
        last = time.perf_counter()
        while True:
            for k, mine in enumerate(own):
                sample_values(state, actions, alive, me, mine, opponent, odds, values[k])  # rollout() of each action
            samples += 1
            rollouts += len(alive) * len(own)
            if samples in PRUNE_AT and len(alive) > 1:
                alive = prune(best_series(values, alive), alive)
                if len(alive) == 1:
                    break  # the others are clearly worse: the rest of the budget would not change the choice
            if self.playouts is not None and samples >= self.playouts:
                break
            now, cpu = time.perf_counter(), time.process_time()
            if now + (now - last) > deadline or cpu + (cpu - last_cpu) > cpu_deadline:
                break  # one more sample (as long as the last one) would not fit
            last, last_cpu = now, cpu
            state, opponent = self.sample(record, rng)
        series = best_series(values, alive)
        best = max(alive, key=lambda i: sum(series[i]))
        if self.stats:
            print(f"search: {samples} samples, {rollouts} rollouts, {len(alive)} of {len(actions)} actions left, "
                  f"{1000 * (time.perf_counter() - started):.0f} ms wall, "
                  f"{1000 * (time.process_time() - cpu_started):.0f} ms cpu, "
                  f"{actions[best]} {sum(series[best]) / samples:.3f}"
                  + (f"; model {self.opponent.describe()}" if self.mixture else ""), file=sys.stderr)  # fmt: skip
        return answers[best]

    def koikoi(self, state: State, opponent: Policy, record: Record,
               rng: random.Random, odds: MatchOdds, started: float, deadline: float, cpu_deadline: float,
               ) -> Message:  # fmt: skip
        """The robust koi-koi decision: stopping is worth its exact value; koi-koi is worth its mean over rollouts
        against the worst of the model and :data:`RACERS`, all on the same samples. Koi-koi only if that beats
        stopping; the search ends early once the worst opponent's mean is clearly above or below. With the
        portfolio (``--continuations all``) its own play after the call is each of :data:`KOIKOI_PORTFOLIO` in
        turn, and the call is worth the best of them against its worst opponent."""
        me = state.to_move
        stop = outcome(apply(state, STOP, record=False), me, odds)
        rivals = len(RACERS) + 1
        own = self.after_call
        values: list[list[list[float]]] = [[[] for _ in range(rivals)] for _ in own]  # by continuation, opponent
        samples = 0
        cpu_started = last_cpu = time.process_time()
        last = time.perf_counter()
        while True:
            for k, mine in enumerate(own):
                for j, v in enumerate(values_against(state, KOIKOI, me, mine, [opponent, *RACERS], odds)):
                    values[k][j].append(v)  # rollout() of the call against each
            samples += 1
            if samples in PRUNE_AT:
                worst = min(best_call(values), key=sum)
                mean = sum(worst) / samples
                sd = math.sqrt(sum((x - mean) ** 2 for x in worst) / (samples - 1))
                if abs(mean - stop) > PRUNE_T * sd / math.sqrt(samples):
                    break  # clearly above or below stopping: more samples would not change the call
            if self.playouts is not None and samples >= self.playouts:
                break
            now, cpu = time.perf_counter(), time.process_time()
            if now + (now - last) > deadline or cpu + (cpu - last_cpu) > cpu_deadline:
                break
            last, last_cpu = now, cpu
            state, opponent = self.sample(record, rng)
        best = best_call(values)
        play_on = min(sum(v) for v in best) / samples
        choice = KOIKOI if play_on > stop else STOP
        if self.stats:
            print(f"search: {samples} samples, {samples * rivals * len(own)} rollouts, koi-koi call, "
                  f"{1000 * (time.perf_counter() - started):.0f} ms wall, "
                  f"{1000 * (time.process_time() - cpu_started):.0f} ms cpu, stop {stop:.3f}, koi-koi "
                  + " ".join(f"{sum(v) / samples:.3f}" for v in best) + f" -> {choice}", file=sys.stderr)
        return wire(choice)


def main(argv: list[str] | None = None) -> int:
    """Play the protocol on stdin/stdout until ``bye`` or the end of input."""
    parser = argparse.ArgumentParser(description="A koikoi/1 bot: determinized Monte Carlo search on the engine.")
    parser.add_argument("--ms", type=int, default=None, help="cap on thinking time per decision (milliseconds)")
    parser.add_argument("--playouts", type=int, default=None, help="samples per decision (repeatable with --seed)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampling (default 0)")
    parser.add_argument("--wall", action="store_true",
                        help="count --ms in wall-clock time (default: in this process's CPU time; the clock of the "
                        "request always bounds the wall time)")
    parser.add_argument("--stats", action="store_true", help="print each decision's samples and time to stderr")
    parser.add_argument("--belief", type=float, default=BELIEF,
                        help="share of samples in which the opponent's hand agrees with the greedy heuristic's plays "
                        f"this round (default {BELIEF})")
    parser.add_argument("--model", choices=MODELS, default="hybrid",
                        help="the model of the opponent: the greedy heuristic's card play with a koi-koi rule weighted "
                        "by its koi-koi calls so far (hybrid, the default), a family of policies weighted by how well "
                        "each explains all its choices (mixture), or the greedy heuristic alone")
    parser.add_argument("--koikoi", choices=KOIKOI_VALUES, default="robust",
                        help="how its own koi-koi call is valued: against the worst of the model and opponents that "
                        "stop at their first yaku (robust, the default), or against the model alone")
    parser.add_argument("--rollout-koikoi", choices=sorted(OWN_KOIKOI), default="cautious",
                        help="its own koi-koi calls in its rollouts: the greedy heuristic's rule (cautious, the "
                        "default) or stop at every yaku (never)")
    parser.add_argument("--opponent-koikoi", choices=OPPONENT_KOIKOI, default="cashing",
                        help="the opponent's koi-koi calls in its rollouts: the model's rule, but stopping where that "
                        "wins the match (cashing, the default), or the model's rule alone")
    parser.add_argument("--continuations", choices=CONTINUATIONS, default="greedy",
                        help="its own play after the first action in its rollouts: the greedy heuristic (greedy, "
                        "the default), the best of a portfolio of the family's policies for each action (all), or "
                        "the card play learned from the search's own choices (learned)")
    parser.add_argument("--name", default="search", help="the name sent in hello")
    args = parser.parse_args(argv)
    searcher = Searcher(args.ms, args.playouts, args.seed, args.belief, args.wall, args.stats, args.model,
                        args.koikoi, args.rollout_koikoi, args.opponent_koikoi, args.continuations)
    return run(searcher.choose, name=args.name, version="1.0", observe=searcher.observe)


if __name__ == "__main__":
    sys.exit(main())
