"""Determinization: complete what one seat saw into a full engine state, sampling the cards it has not seen.

A search bot knows its own hand, the field, every card played, drawn and captured, and the match's scores; it does
not know the opponent's hand or the order of the stock. :class:`Record` collects what one seat saw of the current
match, event by event, in the koikoi/1 wire form (the bot's ``event`` lines of PROTOCOL.md, decoded to dicts).
:func:`determinize` then deals every round of the match again: the seat's own hand and the field as seen, the
opponent's hand made of the cards it played plus cards drawn uniformly at random from the unseen ones, the stock
made of the cards drawn so far, in order, plus the other unseen cards in random order. It replays the match's
actions through :func:`apply`, so everything of the match that is public (scores, dealer, round, koi-koi calls,
captures) comes out exact, and returns the state at the current decision point, whose :func:`observe` for the seat
equals the seat's real view.

The samples are uniform among the deals consistent with what the seat saw and with the rules (no misdeal, the hand
yaku announced and no other, and under ``must_match_from_hand`` no unseen card of a month the opponent could have
matched when it discarded); they are not weighted by how likely the opponent's own choices were, except through
a model of the opponent: ``captures=True`` assumes it never discarded while it held a card that could capture, and
``model=policy`` keeps only hands with which ``policy`` would have played each card the opponent played this round
(rejection sampling, dropped for a decision when no hand agrees). Earlier rounds matter only through their public
results, which the replay reproduces whatever the sample.

Standard library only, no I/O.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from referee.engine.cards import CARD_MONTH_MASK, MONTH_MASKS, Card, Mask, mask_of
from referee.engine.errors import EngineError
from referee.engine.events import (
    Draw,
    DrawCapture,
    HandYakuMade,
    KoikoiDecision,
    MatchEnd,
    Play,
    RoundEnd,
    SeatEvent,
    SeatRoundStart,
)
from referee.engine.policies import PlayCheck, Valuation
from referee.engine.rules import CaptureThree, Rules
from referee.engine.state import (
    KOIKOI,
    STOP,
    Action,
    ActionKind,
    Deal,
    Phase,
    State,
    apply,
    hand_yaku,
    legal_actions,
    new_match,
    redeal,
)

_ALL: Mask = (1 << 48) - 1
_PLAY: Final = Phase.PLAY
_TRIES = 10_000  # rejection-sampling attempts before giving up on a deal


class DeterminizeError(EngineError):
    """The events cannot come from any deal (an inconsistent record), or no state is due to be rebuilt."""


@dataclass
class RoundRecord:
    """One dealt round as a seat saw it: the deal's public part, the actions taken, the cards revealed."""

    dealer: int
    leader: int
    hand: Mask  # the seat's own opening hand
    field: Mask  # the opening field
    actions: list[Action] = dataclasses.field(default_factory=list)
    opponent_played: Mask = 0  # hand cards the opponent played
    drawn: list[Card] = dataclasses.field(default_factory=list)  # cards turned over from the stock, in order
    forbidden: Mask = 0  # months the opponent's unplayed cards cannot be in (must_match_from_hand discards)
    declined: Mask = 0  # months on the field when the opponent discarded (it could have captured with them)
    hand_yaku: tuple[int, str] | None = None  # (seat, name) when an opening hand scored at once
    over: bool = False
    table: Mask = 0  # the field now (tracked to tell which plays named a capture)
    pools: _Pools | None = dataclasses.field(default=None, compare=False, repr=False)  # determinize's last draw pools


class Record:
    """What one seat has seen of the current match; feed it every event with :meth:`add`.

    ``seat`` is 0 or 1 (engine numbering), like the seats of the events it is given.
    """

    def __init__(self, rules: Rules, seat: int) -> None:
        if seat not in (0, 1):
            raise ValueError("seat must be 0 or 1")
        self.rules = rules
        self.seat = seat
        self.rounds: list[RoundRecord] = []
        self.first_dealer: int | None = None
        self.over = False
        self.start: State | None = None
        """The start of the round being played (or of an earlier one: its ``round`` tells) on some deal: the earlier
        rounds replayed once, for :func:`determinize` to deal the round again."""
        self.agreed = True
        """Whether the last :func:`determinize` of this record found a deal on which its model made the opponent's
        plays (true when it was given no model)."""
        self.trail: _Trail | None = None
        """The current round replayed once up to its last action seen (on some deal), for :func:`determinize` to
        put each new sample's hidden cards into, instead of replaying the round for every sample."""

    @property
    def current(self) -> RoundRecord | None:
        """The round being played, if one is."""
        if self.rounds and not self.rounds[-1].over:
            return self.rounds[-1]
        return None

    def add(self, event: SeatEvent) -> None:
        """Take in one event as the seat saw it (:func:`referee.engine.visible_event`; a bot reads it from its
        event line with :func:`referee.protocol.seat_event_from_json`). Events a record does not need are ignored."""
        if isinstance(event, SeatRoundStart):
            if self.first_dealer is None:
                self.first_dealer = event.dealer
            self.rounds.append(RoundRecord(event.dealer, event.leader, event.hand, event.field, table=event.field))
            return
        if isinstance(event, MatchEnd):
            self.over = True
            return
        r = self.current
        if r is None:
            return  # a misdeal, or an event between rounds: nothing to rebuild from
        if isinstance(event, Play):
            c, took = event.card, event.captured
            mates = r.table & CARD_MONTH_MASK[c]
            n = mates.bit_count()
            target = -1
            if took and (n == 2 or (n == 3 and self.rules.capture_three is CaptureThree.CHOOSE)):
                target = (took & ~(1 << c)).bit_length() - 1
            r.actions.append(Action(ActionKind.PLAY, c, target))
            if event.seat != self.seat:
                r.opponent_played |= 1 << c
                if not took:
                    r.declined |= _months(r.table)
                    if self.rules.must_match_from_hand:
                        r.forbidden |= _months(r.table)
            r.table = r.table & ~took if took else r.table | 1 << c
        elif isinstance(event, Draw):
            c = event.card
            r.drawn.append(c)
            if not event.choice:
                took = event.captured
                r.table = r.table & ~took if took else r.table | 1 << c
        elif isinstance(event, DrawCapture):
            c, took = event.card, event.captured
            r.actions.append(Action(ActionKind.CHOOSE, c, (took & ~(1 << c)).bit_length() - 1))
            r.table &= ~took
        elif isinstance(event, KoikoiDecision):
            r.actions.append(KOIKOI if event.koikoi else STOP)
        elif isinstance(event, HandYakuMade):
            r.hand_yaku = (event.seat, event.name)
        elif isinstance(event, RoundEnd):
            r.over = True


def _months(mask: Mask) -> Mask:
    out = 0
    for m in MONTH_MASKS:
        if mask & m:
            out |= m
    return out


def _bits(mask: Mask) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _shuffle(items: list[Card], rng: random.Random) -> None:
    """Shuffle ``items`` in place (Fisher-Yates on ``rng.random()``: a compiled loop, several times faster than
    ``random.shuffle``; the bias of a 53-bit float times at most 48 is far below anything a search can see)."""
    i = len(items) - 1
    while i > 0:
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]
        i -= 1


def _sample(pool: list[Card], k: int, rng: random.Random) -> list[Card]:
    """``k`` distinct cards of ``pool`` drawn uniformly (a partial Fisher-Yates on a copy, as :func:`_shuffle`)."""
    items = list(pool)
    n = len(items)
    for i in range(k):
        j = i + int(rng.random() * (n - i))
        items[i], items[j] = items[j], items[i]
    return items[:k]


def _full_month(mask: Mask) -> bool:
    return any(mask & m == m for m in MONTH_MASKS)


def _hand_ok(hand: Mask, mine: Mask, want: tuple[int, str] | None, seat: int, rules: Rules) -> bool:
    """Whether the opponent's opening ``hand`` deals the round that was seen (no misdeal, the right hand yaku)."""
    if rules.misdeal_hand_four and _full_month(hand):
        return False
    if not (rules.teshi_points or rules.kuttsuki_points):
        return True
    hy = hand_yaku(hand, rules)
    if want is not None and want[0] != seat:  # the opponent's hand scored: it must be that yaku
        return hy is not None and hy[0].value == want[1]
    return hy is None  # otherwise a hand yaku of its own would have ended (or misdealt) the round


class _Pools:
    """What :func:`_sample_deal` draws from, for one state of a round's record and one model: the unseen cards, the
    number the opponent still holds, and the pools its hand is drawn from (the model's first). Kept by the record
    while the round's record and the model stay the same: every sample of a decision draws from the same pools."""

    __slots__ = ("allowed", "key", "need", "pools", "unseen")

    def __init__(self, key: tuple[object, ...], unseen: list[Card], need: int, pools: list[list[Card]],
                 allowed: list[Card]) -> None:  # fmt: skip
        self.key, self.unseen, self.need, self.pools, self.allowed = key, unseen, need, pools, allowed


def _pools(r: RoundRecord, captures: bool, exclude: Mask) -> _Pools:
    """The pools of :func:`_sample_deal` for ``r`` as it is now (kept in ``r`` until it changes)."""
    key = (len(r.actions), len(r.drawn), r.opponent_played, r.forbidden, r.declined, r.hand_yaku, captures, exclude)
    kept = r.pools
    if kept is not None and kept.key == key:
        return kept
    seen = r.hand | r.field | r.opponent_played | mask_of(r.drawn)
    unseen = _bits(_ALL & ~seen)
    need = 8 - r.opponent_played.bit_count()
    allowed = [c for c in unseen if not r.forbidden >> c & 1]
    if need < 0 or len(unseen) != need + 24 - len(r.drawn) or len(allowed) < need:
        raise DeterminizeError("no deal agrees with the events of this round")
    pools = [allowed]
    avoid = (r.declined if captures else 0) | exclude
    if avoid & ~r.forbidden:
        keen = [c for c in allowed if not avoid >> c & 1]
        if len(keen) >= need:
            pools.insert(0, keen)  # the model first; when no hand agrees with it, the rules alone
    kept = r.pools = _Pools(key, unseen, need, pools, allowed)
    return kept


def _sample_deal(rules: Rules, seat: int, r: RoundRecord, rng: random.Random, captures: bool, exclude: Mask = 0,
                 ) -> Deal:  # fmt: skip
    """A deal consistent with ``r``: the opponent's unplayed cards and the undrawn stock sampled uniformly (first
    without the cards a model of the opponent rules out of its hand: ``captures`` and ``exclude``)."""
    kept = _pools(r, captures, exclude)
    unseen, need, pools, allowed = kept.unseen, kept.need, kept.pools, kept.allowed
    want = r.hand_yaku
    constructive = want is not None and want[0] != seat and need == 8
    for pool in pools:
        for _ in range(_TRIES if pool is allowed else 200):
            if constructive:
                assert want is not None
                chosen = _hand_with_yaku(want[1], pool, rng)
                if chosen is None:
                    break
            else:
                chosen = _sample(pool, need, rng)
            hand = r.opponent_played | mask_of(chosen)
            if _hand_ok(hand, r.hand, want, seat, rules):
                rest = [c for c in unseen if not hand >> c & 1]
                _shuffle(rest, rng)
                hands = (r.hand, hand) if seat == 0 else (hand, r.hand)
                return Deal(hands, r.field, (*r.drawn, *rest))
    raise DeterminizeError("no opponent hand agrees with the events of this round")


def _hand_with_yaku(name: str, allowed: list[Card], rng: random.Random) -> list[Card] | None:
    """Eight cards from ``allowed`` holding the hand yaku ``name`` (teshi: a full month; kuttsuki: four pairs)."""
    by_month: dict[int, list[Card]] = {}
    for c in allowed:
        by_month.setdefault(c // 4, []).append(c)
    if name == "teshi":
        full = [m for m, cs in by_month.items() if len(cs) == 4]
        if not full:
            return None
        m = rng.choice(full)
        others = [c for c in allowed if c // 4 != m]
        return by_month[m] + rng.sample(others, 4)
    pairs = [m for m, cs in by_month.items() if len(cs) >= 2]
    if len(pairs) < 4:
        return None
    return [c for m in rng.sample(pairs, 4) for c in rng.sample(by_month[m], 2)]


class _Trail:
    """The current round replayed from ``start`` (the record's round start, dealt again) through its first ``n``
    actions: the states at the opponent's decisions, each with its action, the cards the opponent had played from its
    hand before it and whether it is a play from the hand (``decisions``), and the state after the last action
    (``end``). Every other deal of the round that agrees with the record reaches the same states but for the hidden
    cards: the opponent's hand, the stock and the round's entry in the deal list. A plain class: a compiled build is
    slow to build dataclasses."""

    __slots__ = ("checked", "checks", "decisions", "end", "last", "n", "start")

    def __init__(self, start: State, n: int, decisions: list[tuple[State, Action, Mask, bool]], end: State) -> None:
        self.start, self.n, self.decisions, self.end = start, n, decisions, end
        self.checks: dict[Valuation, list[tuple[PlayCheck, Mask]]] = {}
        self.last: Valuation | None = None
        self.checked: list[tuple[PlayCheck, Mask]] = []

    def plays(self, valuation: Valuation) -> list[tuple[PlayCheck, Mask]]:
        """The opponent's plays from its hand, each as a :class:`PlayCheck` of ``valuation`` with the cards it had
        played before it (built once a trail and valuation; the last valuation asked is found without hashing)."""
        if valuation is self.last:
            return self.checked
        out = self.checks.get(valuation)
        if out is None:
            out = self.checks[valuation] = [
                (PlayCheck(valuation, state, action), before) for state, action, before, play in self.decisions if play
            ]
        self.last, self.checked = valuation, out
        return out


def _trail(record: Record, start: State, deal: Deal) -> _Trail:
    """The current round of ``record`` replayed from its start ``start`` dealt again from ``deal`` (any deal that
    agrees with the record)."""
    opponent = 1 - record.seat
    r = record.rounds[-1]
    decisions: list[tuple[State, Action, Mask, bool]] = []
    played = 0
    state = redeal(start, deal)
    for action in r.actions:
        if state.to_move == opponent:
            play = state.phase is _PLAY
            decisions.append((state, action, played, play))
            if play:
                played |= 1 << action.card
        try:
            state = apply(state, action, record=False)
        except EngineError as exc:
            raise DeterminizeError(f"the events do not replay: {exc}") from None
    return _Trail(start, len(r.actions), decisions, state)


def _resampled(state: State, opponent: int, hand: Mask, deal: Deal) -> State:
    """``state`` (of a trail) with the hidden cards of ``deal``: the opponent holding ``hand``, the stock and the
    round's deal those of ``deal``; what the replay on ``deal`` would have reached."""
    s = state._copy()
    s.hands = (s.hands[0], hand) if opponent == 1 else (hand, s.hands[1])
    s.stock = deal.stock
    i = s.deal_index - 1
    s.deals = (*s.deals[:i], deal, *s.deals[i + 1 :])
    return s


def _agrees(
    trail: _Trail,
    opponent: int,
    deal: Deal,
    model: Callable[[State], Action] | Valuation | None,
    observer: Callable[[State, Action], None] | None,
) -> bool:
    """Whether ``model`` makes each of the opponent's plays from its hand in the trail's round when dealt ``deal``
    (true without a model), showing ``observer`` each of the opponent's decisions up to the first it does not."""
    hand = deal.hands[opponent]
    if isinstance(model, Valuation):
        if observer is None:  # no state to show: the valuation's plays are checked on the hand alone
            return all(check.explains(hand & ~before) for check, before in trail.plays(model))
        choice: Callable[[State], Action] | None = _choice(model)
    else:
        choice = model
    for state, action, before, play in trail.decisions:
        if observer is None and (choice is None or not play):
            continue
        here = _resampled(state, opponent, hand & ~before, deal)
        if observer is not None:
            observer(here, action)
        if choice is not None and play and choice(here) != action:
            return False
    return True


def _choice(valuation: Valuation) -> Callable[[State], Action]:
    """The play ``valuation`` chooses at a state (as a model of the opponent)."""
    return lambda state: valuation.choose(state, legal_actions(state))


def determinize(
    record: Record,
    rng: random.Random,
    *,
    captures: bool = False,
    model: Callable[[State], Action] | Valuation | None = None,
    tries: int = 64,
    observer: Callable[[State, Action], None] | None = None,
    exclude: Mask = 0,
) -> State:
    """A full state at the seat's current point of the match, the unseen cards sampled with ``rng``.

    ``captures``: also assume that the opponent never discarded while it held a card that could capture (a model
    of the opponent, not a rule: it is dropped for a round where no hand would agree with it).

    ``model``: a policy the opponent is assumed to follow (it gets the full state and returns an action). The
    current round's deal is sampled again, up to ``tries`` times, until each card the opponent chose to play this
    round is the model's choice at the rebuilt state; when no sample agrees, a sample without the model is returned
    (the model is dropped for this decision) and ``record.agreed`` is set false (true otherwise). Only the opponent's
    plays from its hand are checked: its other choices depend on nothing hidden. The samples that agree are
    uniform among the deals that agree. A :class:`~referee.engine.policies.Valuation` as ``model`` stands for its
    card play (the plays of any policy with that valuation): the same samples, each play checked on the hand alone
    (:class:`~referee.engine.policies.PlayCheck`), without rebuilding the states.

    ``exclude``: cards a model of the opponent rules out of its hand this round (for example those
    :meth:`~referee.engine.policies.Valuation.excluded` finds from its plays); the current round's hand is drawn
    without them, as with ``captures``, while enough cards are left, so that fewer samples are rejected by
    ``model``.

    ``observer``: called with the rebuilt state and the action taken at each decision of the opponent in the
    current round, as the replay reaches it (to weigh models of the opponent by how well they explain its choices;
    with ``model``, also during the replays the model rejects).

    The earlier rounds are replayed once a round (on deals sampled then; the replay reproduces their public results
    whatever the deal) and kept in ``record``: later calls in the same round only deal the current round again. So
    the rounds after the current one are shuffled from a seed drawn from ``rng`` at the round's first call. The
    current round is replayed once while no new action is seen (on the first deal drawn; kept in ``record``): every
    deal that agrees with the record reaches the same states but for the hidden cards, so each sample, and each state
    the model or the observer is shown, is a replayed state with the sample's hidden cards put in.

    Raises :class:`DeterminizeError` when no round is being played or the events cannot come from any deal.
    """
    if record.current is None or record.first_dealer is None:
        raise DeterminizeError("no round is being played")
    rules, seat = record.rules, record.seat
    last = record.rounds[-1]
    if record.start is not None and record.start.round == len(record.rounds):
        deal = _sample_deal(rules, seat, last, rng, captures, exclude)
    else:
        deals = [_sample_deal(rules, seat, r, rng, captures, exclude if r is last else 0) for r in record.rounds]
        record.start = _replay_before_last(record, deals, rng.getrandbits(62))
        deal = deals[-1]
    begun = record.start
    assert begun is not None
    trail = record.trail
    if trail is None or trail.start is not begun or trail.n != len(last.actions):
        trail = record.trail = _trail(record, begun, deal)
    opponent = 1 - seat
    agreed = True
    attempt = 1
    while not _agrees(trail, opponent, deal, model, observer):
        if attempt >= tries:
            agreed = False
            _agrees(trail, opponent, deal, None, observer)  # the observer sees the whole round of the sample kept
            break
        deal = _sample_deal(rules, seat, last, rng, captures, exclude)
        attempt += 1
    end = trail.end
    if end.round != len(record.rounds) or end.is_over:
        raise DeterminizeError("the replay does not reach the current round")
    record.agreed = agreed
    return _resampled(end, opponent, deal.hands[opponent] & ~last.opponent_played, deal)


def _replay_before_last(record: Record, deals: list[Deal], seed: int) -> State:
    """The match replayed on ``deals`` (no events built) up to the start of the current round, the last one."""
    assert record.first_dealer is not None
    state = new_match(record.rules, seed=seed, deals=deals, first_dealer=record.first_dealer)
    for r in record.rounds[:-1]:
        for action in r.actions:
            try:
                state = apply(state, action, record=False)
            except EngineError as exc:
                raise DeterminizeError(f"the events do not replay: {exc}") from None
    if state.round != len(record.rounds) or state.phase is not Phase.PLAY or state.turn != 1:
        raise DeterminizeError("the replay does not reach the current round")
    return state
