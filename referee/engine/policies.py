"""Simple players on the engine state: the policies search bots roll out and model their opponents with.

A :class:`Policy` is a *valuation* of cards (how it chooses what to play and which field card to capture) and a
*koi-koi rule* (when it plays on). It reads only the mover's own cards and public ones (its hand, the field, both
capture piles, the scores), never the opponent's hand or the stock. The family:

- valuations (:data:`VALUATIONS`): ``greedy`` (the house greedy heuristic of ``bots/greedy_bot.py``), ``spiteful``
  (a capture is also worth what it keeps from the other player, a discard costs what it gives), ``rare`` (brights
  and the viewing cards above all), ``count`` (the number of cards taken, whatever their kind), and ``None``, no
  valuation (a model that every legal action is as likely; played as greedy where an action is needed);
- koi-koi rules (:data:`KOIKOI_RULES`): :func:`cautious` (the greedy heuristic's), :func:`never`, :func:`bold`;
  :func:`cashing` makes any of them stop where stopping wins the match.

:func:`greedy_action` is the greedy heuristic, move for move; :func:`play_round` plays a round out with two policies,
:func:`round_ends` the rounds after each of several first actions at once; :class:`PlayCheck` tells for any hand
whether a valuation makes a play (a model of the opponent's hidden hand). :class:`Learned` is a card play learned
from the search bot's own choices (:data:`FEATURES`, weights in :data:`WEIGHTS_FILE`).
Standard library only; no I/O but reading the learned play's weights file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.resources import files
from typing import Any, Final

from referee.engine import cards as C
from referee.engine.actions import NIBBLE_LOW, months_of
from referee.engine.cards import KINDS, card, cards_of
from referee.engine.rules import CaptureThree, KoikoiScoring, LastTurn, Reopen, Rules, SetGrowth, TieBreak
from referee.engine.state import KOIKOI, STOP, Action, ActionKind, Phase, State, _end_round, apply, legal_actions
from referee.engine.yaku import score

# Final: a compiled build reads these module constants as C constants on the hot path, not from the module's dict.
_PH_DRAW_CHOICE: Final = Phase.DRAW_CHOICE
_PH_KOIKOI: Final = Phase.KOIKOI
_PH_PLAY: Final = Phase.PLAY
_PH_MATCH_OVER: Final = Phase.MATCH_OVER
_KIND_OF: Final = tuple(int(k) for k in KINDS)  # bright 0, animal 1, ribbon 2, chaff 3
_KIND_MASKS: Final = tuple(sum(1 << c for c in range(48) if _KIND_OF[c] == k) for k in range(4))
_MONTH: Final = tuple(15 << (4 * (c // 4)) for c in range(48))
_SAKE: Final = card("chrysanthemum-sake")


def _mask(*ids: str) -> int:
    return sum(1 << card(i) for i in ids)


BRIGHTS = _mask("pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix")
"""The five brights, as a card mask."""
_GROUPS = (
    (BRIGHTS, 6.0),
    (_mask("pine-ribbon", "plum-ribbon", "cherry-ribbon"), 5.0),
    (_mask("peony-ribbon", "chrysanthemum-ribbon", "maple-ribbon"), 5.0),
    (_mask("clover-boar", "maple-deer", "peony-butterfly"), 5.0),
    (_mask("chrysanthemum-sake", "pampas-moon"), 6.0),
    (_mask("chrysanthemum-sake", "cherry-curtain"), 6.0),
)

_HELD: Final = 0.5
"""What each further card of its month in hand takes off the value of a discard (a pair held is kept for later)."""

_CARD_GROUPS: Final = tuple(tuple((g, bonus) for g, bonus in _GROUPS if g >> c & 1) for c in range(48))
"""The groups each card belongs to (most cards: none), so that a card's value looks at its own groups only."""


@dataclass(frozen=True)
class Valuation:
    """How a policy values cards: per kind (bright, animal, ribbon, chaff), per card of a begun yaku (``groups``
    scales the greedy bonuses), per card of the same kind held (``count``), what the other player would get from
    the card (``spite``), and per card taken (``sweep``)."""

    name: str
    base: tuple[float, float, float, float] = (10.0, 5.0, 4.0, 1.0)
    groups: float = 1.0
    count: float = 0.3
    spite: float = 0.0
    sweep: float = 0.0

    def value(self, c: int, mine: int) -> float:
        """What taking card ``c`` is worth to a player who captured ``mine``."""
        k = _KIND_OF[c]
        v = self.base[k] + (4.0 if c == _SAKE else 0.0)
        for g, bonus in _CARD_GROUPS[c]:
            v += self.groups * bonus * (g & mine).bit_count()
        if k:
            v += self.count * (mine & _KIND_MASKS[k]).bit_count()
        return v

    def worth(self, c: int, mine: int, theirs: int) -> float:
        """The value of taking ``c``, with the share ``spite`` of its value to the other player."""
        v = self.value(c, mine)
        return v + self.spite * self.value(c, theirs) if self.spite else v

    def play_value(self, c: int, target: int, field: int, hand: int, mine: int, theirs: int) -> float:
        """What playing hand card ``c`` is worth (capturing ``target``, or when -1 whatever of its month is on the
        field, or nothing: a discard, which costs more when ``hand`` holds fewer of its month)."""
        taken = 1 << target if target >= 0 else field & _MONTH[c]
        if not taken:
            return -self.worth(c, mine, theirs) - _HELD * ((hand & _MONTH[c]).bit_count() - 1)
        v = 2.0 + self.worth(c, mine, theirs) + self.sweep
        while taken:
            low = taken & -taken
            taken ^= low
            v += self.worth(low.bit_length() - 1, mine, theirs) + self.sweep
        return v

    def choose(self, state: State, legal: list[Action]) -> Action:
        """The action this valuation prefers among ``legal`` (a play or a capture choice; first of equals)."""
        p = state.to_move
        mine, theirs = state.captured[p], state.captured[1 - p]
        if state.phase is _PH_DRAW_CHOICE:
            return max(legal, key=lambda a: self.worth(a.target, mine, theirs))
        field, hand = state.field, state.hands[p]
        best, best_v = legal[0], -1e9
        for a in legal:
            v = self.play_value(a.card, a.target, field, hand, mine, theirs)
            if v > best_v:
                best, best_v = a, v
        return best

    def excluded(self, state: State, played: Action) -> int:
        """The cards (a mask) that the player to move at ``state`` cannot have held if it chose ``played`` (a play
        from its hand) by this valuation: those whose capture it values above ``played``, whatever else it held.
        A discard is worth at most minus its card's worth, whatever the hand; so every card that could capture is
        excluded by a discard, and so is every card whose own discard would be worth more (at least minus its worth
        less three times ``_HELD``, for three more of its month held). The rest is checked by replaying the whole
        hand."""
        p = state.to_move
        mine, theirs = state.captured[p], state.captured[1 - p]
        field, c = state.field, played.card
        discarded = played.target < 0 and not field & _MONTH[c]
        if discarded:
            bound = -self.worth(c, mine, theirs)
        else:
            bound = self.play_value(c, played.target, field, state.hands[p], mine, theirs)
        choose3 = state.rules.capture_three is CaptureThree.CHOOSE
        out = 0
        for u in range(48):
            mates = field & _MONTH[u]
            if field >> u & 1:
                continue
            if not mates:
                if discarded and -self.worth(u, mine, theirs) - 3 * _HELD > bound:
                    out |= 1 << u
                continue
            n = mates.bit_count()
            targets = cards_of(mates) if n == 2 or (n == 3 and choose3) else [-1]
            if max(self.play_value(u, t, field, 0, mine, theirs) for t in targets) > bound:
                out |= 1 << u
        return out


class PlayCheck:
    """One play from the hand, and whether a valuation makes it whatever the hand: :meth:`explains` answers, for
    any hand, what :meth:`Valuation.choose` answers at ``state`` with that hand (the same legal actions in the same
    order, the first of equal values, the same float sums), from values of every card computed once, without
    building a state or its legal actions. Only the hand matters: a capture's value does not read it, a discard's
    reads the cards of its month held."""

    __slots__ = ("best", "capture", "card", "discard_illegal", "field", "own_ok", "value", "worth")

    def __init__(self, valuation: Valuation, state: State, played: Action) -> None:
        p = state.to_move
        mine, theirs = state.captured[p], state.captured[1 - p]
        field = state.field
        rules = state.rules
        choose3 = rules.capture_three is CaptureThree.CHOOSE
        c = played.card
        self.card, self.field = c, field
        self.discard_illegal = rules.must_match_from_hand  # while the hand holds a card that can capture
        self.capture = bool(field & _MONTH[c])
        worth = [0.0] * 48
        best = [0.0] * 48  # a capturing card: the best value of its actions
        own: list[tuple[int, float]] = []
        for u in range(48):
            if field >> u & 1:
                continue
            mates = field & _MONTH[u]
            if not mates:
                worth[u] = valuation.worth(u, mine, theirs)
                continue
            n = mates.bit_count()
            targets = cards_of(mates) if n == 2 or (n == 3 and choose3) else [-1]
            values = [valuation.play_value(u, t, field, 0, mine, theirs) for t in targets]
            best[u] = max(values)
            if u == c:
                own = list(zip(targets, values, strict=True))
        self.worth, self.best = worth, best
        self.value = 0.0
        # the played card's other captures: earlier ones must be worth less, later ones no more; a play not in the
        # engine's form (a target where the engine names none) is never the valuation's
        self.own_ok = played.target in [t for t, _ in own] if self.capture else played.target == -1
        for t, v in own:
            if t == played.target:
                self.value = v
        for t, v in own:
            if (t < played.target and v >= self.value) or (t > played.target and v > self.value):
                self.own_ok = False

    def explains(self, hand: int) -> bool:
        """Whether the valuation, holding ``hand`` (the played card among it), makes the play."""
        c = self.card
        field = self.field
        if not self.own_ok:
            return False
        if self.capture:
            va = self.value
            discards = not self.discard_illegal  # the played card can capture: a discard is illegal under the rule
        else:
            va = -self.worth[c] - _HELD * ((hand & _MONTH[c]).bit_count() - 1)
            if self.discard_illegal and field & months_of(hand):
                return False  # the play itself is illegal with this hand
            discards = True
        rest = hand & ~(1 << c)
        while rest:
            low = rest & -rest
            rest ^= low
            u = low.bit_length() - 1
            if field & _MONTH[u]:
                v = self.best[u]
            elif discards:
                v = -self.worth[u] - _HELD * ((hand & _MONTH[u]).bit_count() - 1)
            else:
                continue
            if v > va or (v == va and u < c):
                return False
        return True


VALUATIONS: tuple[Valuation | None, ...] = (
    Valuation("greedy"),  # GREEDY
    Valuation("spiteful", spite=1.0),
    Valuation("rare", base=(20.0, 3.0, 2.0, 0.5), groups=1.5, count=0.1),
    Valuation("count", base=(5.0, 3.0, 3.0, 3.0), groups=0.3, count=0.5, sweep=5.0),
    None,  # "any": no model of its plays
)
"""The valuations of the family; ``None`` is ``any`` (every legal action as likely)."""


def _last_round_ahead(state: State, p: int) -> bool:
    return state.round >= state.rules.rounds and state.scores[p] > state.scores[1 - p]


def cautious(state: State, p: int) -> bool:
    """The greedy heuristic's koi-koi rule: early, under 7 points, against an opponent with little."""
    if _last_round_ahead(state, p):
        return False
    rules = state.rules
    if state.hands[p].bit_count() < 5 or score(state.captured[p], rules, state.koikoi[p]).total >= 7:
        return False
    opp = state.captured[1 - p]
    if score(opp, rules, state.koikoi[1 - p]).total > 0:
        return False
    return not ((opp & BRIGHTS).bit_count() >= 2 or opp.bit_count() >= 10)


def never(state: State, p: int) -> bool:
    """Always stop."""
    return False


def bold(state: State, p: int) -> bool:
    """Play on while two cards or more are in hand, except to keep a lead in the last round."""
    return not _last_round_ahead(state, p) and state.hands[p].bit_count() >= 2


KoikoiRule = Callable[[State, int], bool]
"""Whether player ``p`` calls koi-koi at ``state``."""


def stop_wins(state: State, p: int) -> bool:
    """Whether player ``p``, at a koi-koi choice in the match's last round, wins the match by stopping."""
    if state.round < state.rules.rounds:
        return False
    after = apply(state, STOP, record=False)
    return after.is_over and after.winner == p


class Cashing:
    """A koi-koi rule that stops whenever stopping wins the match (:func:`stop_wins`), and otherwise follows
    ``rule``."""

    def __init__(self, rule: KoikoiRule) -> None:
        self.rule = rule

    def __call__(self, state: State, p: int) -> bool:
        return self.rule(state, p) and not stop_wins(state, p)


def cashing(rule: KoikoiRule) -> KoikoiRule:
    """``rule``, except that it stops whenever stopping wins the match (:func:`stop_wins`)."""
    return Cashing(rule)


KOIKOI_RULES: tuple[tuple[str, KoikoiRule], ...] = (("cautious", cautious), ("never", never), ("bold", bold))
"""The koi-koi rules of the family, by name."""

GREEDY = Valuation("greedy")
"""The greedy heuristic's valuation (the first of :data:`VALUATIONS`)."""

_GOALS: Final = (
    (C.BRIGHTS, 3), (C.POETRY, 3), (C.BLUE, 3), (C.BOAR_DEER_BUTTERFLY, 3), ((1 << C.SAKE) | (1 << C.CURTAIN), 2),
    ((1 << C.SAKE) | (1 << C.MOON), 2), (C.ANIMALS, 5), (C.RIBBONS, 5), (C.CHAFF | (1 << C.SAKE), 10),
)  # fmt: skip
"""The sets a learned play reads progress towards (cards, how many of them): the brights, the two ribbon sets,
boar-deer-butterfly, the two viewings, animals, ribbons, chaff; every preset's yaku are among them or grow them."""

FEATURES: Final = (
    "greedy", "discard", "taken", "done", "progress", "deny", "expose", "expose_unseen", "keep_discard",
    "keep_capture", "done_after_call", "progress_late", "expose_late", "deny_near",
)  # fmt: skip
"""What :class:`Learned` reads of an action, in its weights' order: ``greedy``, the greedy heuristic's value of it
(/10); ``discard``, 1 for a discard; ``taken``, the cards taken (/2); ``done``, the sets of :data:`_GOALS` it
completes; ``progress``, how much nearer it brings the mover's open sets (each worth 1/(cards missing + 1), a set
the other player has made impossible worth nothing); ``deny``, how much farther it puts the other player's;
``expose``, what the cards of its month it leaves on the field are worth to the other player (greedy's value, /10;
0 when no card of that month is unseen), and ``expose_unseen`` that times the unseen cards of the month (/3);
``keep_discard`` and ``keep_capture``, whether a discard or a capture keeps a card of its month in hand;
``done_after_call``, ``done`` when the other player has called koi-koi this round; ``progress_late`` and
``expose_late``, ``progress`` and ``expose`` times how far the round is (1 - cards in hand / 8); ``deny_near``,
how many of the other player's sets one card from done it puts farther."""


def _goals(x: int, y: int) -> tuple[float, int, int]:
    """For a player who captured ``x`` against one who captured ``y``: the sum over its open sets of 1/(cards
    missing + 1), the sets it has completed, and the open sets one card from done."""
    v, done, near = 0.0, 0, 0
    for g, need in _GOALS:
        have = (g & x).bit_count()
        if have >= need:
            done += 1
        elif (g & ~y).bit_count() >= need:
            v += 1.0 / (need - have + 1)
            if need - have == 1:
                near += 1
    return v, done, near


def learned_features(state: State, action: Action) -> list[float]:
    """:data:`FEATURES` of ``action`` (a play, or a capture choice after a draw) for the player to move at
    ``state``: its hand, the field, both capture piles, the drawn card and the koi-koi calls; nothing hidden."""
    return action_features(learned_decision(state), action.card, action.target)


def learned_decision(state: State) -> Decision:
    """The :class:`Decision` of the player to move at ``state`` (a play, or a capture choice after a draw)."""
    p = state.to_move
    pending = state.pending if state.phase is _PH_DRAW_CHOICE else -1
    return Decision(state.hands[p], state.field, state.captured[p], state.captured[1 - p], pending,
                    state.koikoi[1 - p])  # fmt: skip


class Decision:
    """What :data:`FEATURES` read of a decision before any action, computed once for all of its actions: the
    mover's hand, the field, both capture piles, the drawn card (``pending``, -1 when choosing a card to play), the
    cards unseen, how far the round is, both players' set progress (``referee/engine/_rollout.c``'s
    ``decision_t``)."""

    def __init__(self, hand: int, field: int, mine: int, theirs: int, pending: int, their_calls: int) -> None:
        self.hand, self.field, self.mine, self.theirs, self.pending = hand, field, mine, theirs, pending
        self.unseen = C.ALL & ~(hand | field | mine | theirs | (1 << pending if pending >= 0 else 0))
        self.late = 1.0 - hand.bit_count() / 8.0
        self.pv0, self.d0, _ = _goals(mine, theirs)
        self.ov0, _, self.on0 = _goals(theirs, mine)
        self.called = 1.0 if their_calls else 0.0


def play_features(hand: int, field: int, mine: int, theirs: int, pending: int, their_calls: int, c: int,
                  t: int) -> list[float]:  # fmt: skip
    """:data:`FEATURES` of playing hand card ``c`` (capturing ``t``, or -1: whatever of its month is on the field,
    or a discard), or with a drawn card ``pending`` (not -1) of capturing ``t`` with it (``c`` = ``pending``), for
    a player who holds ``hand`` and captured ``mine`` against one who captured ``theirs`` and called koi-koi
    ``their_calls`` times this round (``referee/engine/_rollout.c`` restates it, float for float)."""
    return action_features(Decision(hand, field, mine, theirs, pending, their_calls), c, t)


def action_features(x: Decision, c: int, t: int) -> list[float]:
    """:func:`play_features` of playing ``c`` (capturing ``t``) at decision ``x``: the same list, with what depends
    on the decision alone read from ``x``."""
    hand, field, mine, theirs = x.hand, x.field, x.mine, x.theirs
    month = C.CARD_MONTH_MASK[c]
    if x.pending >= 0:
        g = GREEDY.worth(t, mine, theirs)
        taken = 1 << c | 1 << t
        left = field & ~taken
    else:
        g = GREEDY.play_value(c, t, field, hand, mine, theirs)
        taken = 1 << c | 1 << t if t >= 0 else (1 << c | field & month if field & month else 0)
        left = field & ~taken if taken else field | 1 << c
        hand &= ~(1 << c)
    mine2 = mine | taken
    pv, d, _ = _goals(mine2, theirs)
    ov, _, on = _goals(theirs, mine2)
    unseen_month = (x.unseen & month).bit_count()
    expose = 0.0
    if unseen_month:
        for y in cards_of(left & month):
            expose += GREEDY.value(y, theirs)
        expose /= 10.0
    discard = 0.0 if taken else 1.0
    keep = 1.0 if hand & month else 0.0
    return [g / 10.0, discard, taken.bit_count() / 2.0, float(d - x.d0), pv - x.pv0, x.ov0 - ov, expose,
            expose * unseen_month / 3.0, discard * keep, (1.0 - discard) * keep, (d - x.d0) * x.called,
            (pv - x.pv0) * x.late, expose * x.late, float(x.on0 - on)]  # fmt: skip


@dataclass(frozen=True)
class Learned:
    """A card play learned from the search bot's own choices (``benchmarks/learn_play.py``): each legal action
    scored by the weighted sum of its :data:`FEATURES`, the best taken (first of equals). Reads only the mover's
    view, as every policy here."""

    name: str
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise ValueError(f"a learned play takes {len(FEATURES)} weights, not {len(self.weights)}")

    def weigh(self, features: list[float]) -> float:
        """The weighted sum of an action's :data:`FEATURES` (as :func:`play_features` gives them)."""
        s = 0.0
        for w, f in zip(self.weights, features, strict=True):
            s += w * f
        return s

    def choose(self, state: State, legal: list[Action]) -> Action:
        """The action with the highest score among ``legal`` (a play or a capture choice; first of equals)."""
        x = learned_decision(state)
        best, best_v = legal[0], -1e300
        for a in legal:
            v = self.weigh(action_features(x, a.card, a.target))
            if v > best_v:
                best, best_v = a, v
        return best


WEIGHTS_FILE: Final = str(files("referee.engine").joinpath("play_weights.json"))
"""The shipped learned play's weights (beside this module), as :func:`load_learned` reads them."""
_learned: list[Learned] = []


def load_learned(path: str, name: str = "learned") -> Learned:
    """A learned play from a weights file: JSON with ``features`` (:data:`FEATURES`, in its order) and
    ``weights`` (a number each). Raises ValueError for a file of other features, OSError for one it cannot read."""
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("weights"), list):
        raise ValueError(f"{path}: no list of weights")
    if tuple(data.get("features") or ()) != FEATURES:
        raise ValueError(f"{path}: its features are not those of this engine ({', '.join(FEATURES)})")
    return Learned(name, tuple(float(w) for w in data["weights"]))


def learned_play() -> Learned:
    """The shipped learned play (:data:`WEIGHTS_FILE`, read once): ``bots/search_bot.py --continuations learned``
    plays it in its rollouts."""
    if not _learned:
        _learned.append(load_learned(WEIGHTS_FILE))
    return _learned[0]


@dataclass(frozen=True)
class Policy:
    """One member of the family: a valuation (``None``: any action, played as greedy in rollouts) and a koi-koi
    rule; with ``learned``, its card play is that learned play's instead of the valuation's."""

    valuation: Valuation | None
    koikoi: KoikoiRule
    learned: Learned | None = None

    def act(self, state: State, legal: list[Action]) -> Action:
        """The policy's action at ``state`` for the player to move."""
        if state.phase is _PH_KOIKOI:
            return KOIKOI if self.koikoi(state, state.to_move) else STOP
        if self.learned is not None:
            return self.learned.choose(state, legal)
        return (self.valuation or GREEDY).choose(state, legal)

    def model(self, state: State) -> Action:
        """The policy's action at ``state`` (the form :func:`determinize` takes as a model)."""
        return self.act(state, legal_actions(state))


GREEDY_POLICY = Policy(GREEDY, cautious)
"""The greedy heuristic: the ``greedy`` valuation and the :func:`cautious` koi-koi rule."""


def greedy_action(state: State, legal: list[Action]) -> Action:
    """The greedy heuristic's choice among ``legal`` at ``state`` (the policy of ``bots/greedy_bot.py``)."""
    return GREEDY_POLICY.act(state, legal)


def play_round(state: State, me: int, mine: Policy, theirs: Policy) -> State:
    """``state`` played to the end of its round, seat ``me`` by ``mine`` and the other seat by ``theirs`` (a
    single legal action is taken without asking); no event is built and the next round is not dealt. Returns the
    match after the round (``apply(..., deal=False)``: its scores, history, dealer, round number and winner; not a
    position to play on), or the end of the match. The rollout of a search.

    In the compiled engine the round is played in C (``referee/engine/_rollout.c``) wherever its rules and policies
    are ones that loop knows (every preset, every policy of the family, :func:`cashing` of their koi-koi rules);
    otherwise, and in the pure engine, by :func:`play_round_loop`. Both give the same state, field for field."""
    if _ROLLOUT is not None and _c_loop_on and state.phase is not _PH_MATCH_OVER:
        packed = _pack_rules(state.rules)
        me_policy = _pack_policy(mine)
        other = _pack_policy(theirs)
        if packed is not None and me_policy is not None and other is not None:
            out = _ROLLOUT.play(packed, (me_policy, other), me, _position(state), state.stock)
            if out is not None:
                return _after_round(state, out)
    return play_round_loop(state, me, mine, theirs)


Ending = tuple[int, int, str]
"""A round's end as :func:`round_ends` gives it: the winner (-1: nobody), the points and the reason ("stop",
"auto_stop" or "exhausted")."""


def round_ends(state: State, actions: list[Action], me: int, mine: Policy, theirs: Policy,
               ) -> list[Ending | None] | None:  # fmt: skip
    """For each of ``actions`` (legal at ``state``), how the round ends when that action is played and the round
    is played out as :func:`play_round` plays it (seat ``me`` by ``mine``, the other by ``theirs``): all of them in
    one call of the C round loop, without building a state. None for an action that itself ends the round (where
    the engine's ``apply`` would deal the next round: play that one with :func:`play_round`); None for all when the
    C round loop does not play this position (the pure engine, a rule or policy it does not know)."""
    return _play_actions(state, me, [mine, theirs], [(a, 0) for a in actions])


def round_ends_against(state: State, action: Action, me: int, mine: Policy, opponents: list[Policy],
                       ) -> list[Ending | None] | None:  # fmt: skip
    """:func:`round_ends` of one action, the other seat played by each of ``opponents`` (at most 8) in turn."""
    return _play_actions(state, me, [mine, *opponents], [(action, j) for j in range(len(opponents))])


def _play_actions(state: State, me: int, policies: list[Policy], jobs: list[tuple[Action, int]],
                  ) -> list[Ending | None] | None:  # fmt: skip
    """The C round loop's ``play_actions``: each job's action played, the other seat by ``policies[1 + j]``."""
    if _ROLLOUT is None or not _c_loop_on or state.phase is _PH_MATCH_OVER or len(policies) > 9:
        return None
    packed = _pack_rules(state.rules)
    packs = tuple(_pack_policy(p) for p in policies)
    if packed is None or None in packs:
        return None
    work = tuple((_ACTION_CODE[a.kind], a.card, a.target, j) for a, j in jobs)
    out = _ROLLOUT.play_actions(packed, packs, me, _position(state), state.stock, work)
    if out is None:
        return None
    return [None if end is None else (end[0], end[1], _REASONS[end[2]]) for end in out]


def _position(state: State) -> tuple[int, ...]:
    """The position as the C round loop reads it (PLAY_DOC in ``_rollout.c``)."""
    p = state.phase
    return (
        state.round, state.dealer, state.first_dealer, state.scores[0], state.scores[1],
        0 if p is _PH_PLAY else 1 if p is _PH_DRAW_CHOICE else 2, state.to_move, state.turn, state.pending,
        state.hands[0], state.hands[1], state.field, state.captured[0], state.captured[1], state.koikoi[0],
        state.koikoi[1], state.last_points[0], state.last_points[1], state.last_names[0],
        state.last_names[1], state.stock_pos,
    )  # fmt: skip


def play_round_loop(state: State, me: int, mine: Policy, theirs: Policy) -> State:
    """:func:`play_round`, always by the engine's own ``legal_actions`` and ``apply`` (the loop the C round loop
    restates, and the one the pure engine runs)."""
    start = state.round
    while not state.is_over and state.round == start:
        legal = legal_actions(state)
        if len(legal) == 1:
            action = legal[0]
        elif state.to_move == me:
            action = mine.act(state, legal)
        else:
            action = theirs.act(state, legal)
        state = apply(state, action, record=False, deal=False)
    return state


_PHASES: Final = (Phase.PLAY, Phase.DRAW_CHOICE, Phase.KOIKOI)
_REASONS: Final = ("stop", "auto_stop", "exhausted")
_ACTION_CODE: Final = {ActionKind.PLAY: 0, ActionKind.CHOOSE: 1, ActionKind.KOIKOI: 2, ActionKind.STOP: 3}


def _after_round(state: State, out: tuple[int, ...]) -> State:
    """The state the C round loop's result ``out`` describes: the position it left, then the round's end."""
    s = state._copy()
    s.events = ()
    s.phase = _PHASES[out[3]]
    s.to_move, s.turn, s.pending = out[4], out[5], out[6]
    s.hands, s.field, s.captured = (out[7], out[8]), out[9], (out[10], out[11])
    s.koikoi, s.last_points, s.last_names = (out[12], out[13]), (out[14], out[15]), (out[16], out[17])
    s.stock_pos = out[18]
    winner = out[0]
    _end_round(s, winner if winner >= 0 else None, out[1], _REASONS[out[2]], (), None, False)
    return s


_RULE_CODE: Final[dict[object, int]] = {cautious: 0, never: 1, bold: 2}
_PolicyPack = tuple[tuple[float, float, float, float], float, float, float, float, int, int, tuple[float, ...]]


def _pack_policy(policy: Policy) -> _PolicyPack | None:
    """A policy as the C round loop takes it: the valuation's weights, the koi-koi rule's code and whether it
    cashes a winning stop; None for a koi-koi rule outside the family."""
    rule: object = policy.koikoi
    cash = 0
    if isinstance(rule, Cashing):
        rule, cash = rule.rule, 1
    code = _RULE_CODE.get(rule)
    if code is None:
        return None
    v = policy.valuation or GREEDY
    learned = policy.learned.weights if policy.learned is not None else ()
    return (v.base, v.groups, v.count, v.spite, v.sweep, code, cash, learned)


def _load_rollout() -> Any:
    """The C round loop, set up with the engine's card tables: only in the compiled engine (this module compiled),
    and only when it was built; else None."""
    if not __file__.endswith(tuple(EXTENSION_SUFFIXES)):
        return None
    try:
        from referee.engine import _rollout
    except ImportError:
        return None
    consts = {
        "brights": C.BRIGHTS, "rain": 1 << C.RAINMAN, "ribbons": C.RIBBONS, "poetry": C.POETRY, "blue": C.BLUE,
        "animals": C.ANIMALS, "bdb": C.BOAR_DEER_BUTTERFLY, "chaff": C.CHAFF, "sake": 1 << C.SAKE,
        "curtain": 1 << C.CURTAIN, "moon": 1 << C.MOON, "nibble_low": NIBBLE_LOW, "held": _HELD, "goals": _GOALS,
        "greedy": _pack_policy(GREEDY_POLICY),
    }  # fmt: skip
    _rollout.setup(consts, _KIND_OF, C.CARD_MONTH_MASK, _CARD_GROUPS)
    return _rollout


_ROLLOUT: Final[Any] = _load_rollout()
_c_loop_on = True


def use_c_round_loop(on: bool) -> None:
    """Whether :func:`play_round` may play its rounds in the C round loop (on by default, where it is built); off,
    every round is played by :func:`play_round_loop` (to compare the two, as ``benchmarks/search.py --loop``)."""
    global _c_loop_on
    _c_loop_on = on


_GROWTH_CODE: Final = {SetGrowth.NONE: 0, SetGrowth.GROW: 1, SetGrowth.GROW_AND_COUNT: 2}
_SCORING_CODE: Final = {KoikoiScoring.NONE: 0, KoikoiScoring.DOUBLE: 1, KoikoiScoring.ADD_THEN_MULTIPLY: 2}
_PACKED_RULES: dict[int, tuple[Rules, tuple[int, ...] | None]] = {}


def _pack_rules(rules: Rules) -> tuple[int, ...] | None:
    """The fields of ``rules`` that a round reads, in the C round loop's order (cached by object); None where that
    loop does not play them (``bright_yaku_combine``). ``end_when_broke`` is not among them: a round's end is the
    engine's ``_end_round``, and a stop in the last round ends the match whatever it says."""
    hit = _PACKED_RULES.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    r = rules
    packed: tuple[int, ...] | None = None
    if not r.bright_yaku_combine:
        packed = (
            r.rounds, int(r.capture_three is CaptureThree.CHOOSE), int(r.must_match_from_hand), r.five_brights,
            r.four_brights_dry, r.four_brights_wet, r.three_brights, r.poetry_ribbons, r.blue_ribbons,
            r.poetry_and_blue_ribbons, r.poetry_blue_bonus, _GROWTH_CODE[r.set_growth], r.boar_deer_butterfly,
            r.ribbons_min, r.ribbons_points, r.ribbons_extra, r.animals_min, r.animals_points, r.animals_extra,
            r.chaff_min, r.chaff_points, r.chaff_extra, int(r.sake_as_chaff), r.cherry_viewing,
            r.cherry_viewing_after_koikoi, r.moon_viewing, r.moon_viewing_after_koikoi,
            _SCORING_CODE[r.koikoi_scoring], r.double_from, int(r.double_after_opponent_koikoi),
            int(r.reopen is Reopen.POINTS_RISE), int(r.last_turn is LastTurn.AUTO_STOP), r.koikoi_calls_per_round,
            r.exhausted_dealer_points, int(r.transfer_points), int(r.tie_break is TieBreak.FIRST_DEALER),
        )  # fmt: skip
    if len(_PACKED_RULES) > 64:
        _PACKED_RULES.clear()
    _PACKED_RULES[id(rules)] = (rules, packed)
    return packed


def rollout_in_c(policy: Policy) -> bool:
    """Whether :func:`play_round` plays ``policy`` in the C round loop (the compiled engine, a rule it knows)."""
    return _ROLLOUT is not None and _c_loop_on and _pack_policy(policy) is not None
