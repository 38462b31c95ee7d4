"""The match and round state machine: :func:`new_match`, :func:`legal_actions` and :func:`apply` are the whole game.

A :class:`State` is never changed in place: :func:`apply` returns a new one, so any state can be kept, compared or
replayed. Seats are 0 and 1 inside the engine (seat 1 and seat 2 at the edges).
"""

from __future__ import annotations

import operator
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, SupportsIndex, cast

from referee.engine import cards as C
from referee.engine import events as ev
from referee.engine.actions import CHOOSE_ACTIONS, MONTH_PLAYS, NIBBLE_LOW
from referee.engine.actions import KOIKOI as KOIKOI
from referee.engine.actions import STOP as STOP
from referee.engine.actions import Action as Action
from referee.engine.actions import ActionKind as ActionKind
from referee.engine.actions import Phase as Phase
from referee.engine.actions import months_of as months_of
from referee.engine.cards import CARD_MONTH_MASK, Card, Mask
from referee.engine.deal import Deal as Deal
from referee.engine.deal import Dealt, misdeal_reason, shuffled_parts
from referee.engine.deal import deals_from_lines as deals_from_lines
from referee.engine.deal import hand_yaku as hand_yaku
from referee.engine.deal import shuffled_deal as shuffled_deal
from referee.engine.errors import IllegalActionError
from referee.engine.events import Draw, DrawCapture, Event, KoikoiDecision, Play, YakuMade
from referee.engine.rules import (
    CaptureThree,
    FirstDealer,
    LastTurn,
    Leader,
    NextDealer,
    Reopen,
    Rules,
    TieBreak,
)
from referee.engine.yaku import HandYaku, evaluate, stop_total, yaku_names, yaku_points

# Module-level aliases of enum members: enum attribute lookups are slow on the hot path. Final: a compiled build
# reads these (and the tables below) as C constants, not from the module's dict.
_AK_PLAY: Final = ActionKind.PLAY
_AK_CHOOSE: Final = ActionKind.CHOOSE
_AK_STOP: Final = ActionKind.STOP
_AK_KOIKOI: Final = ActionKind.KOIKOI
_PH_PLAY: Final = Phase.PLAY
_PH_DRAW_CHOICE: Final = Phase.DRAW_CHOICE
_PH_KOIKOI: Final = Phase.KOIKOI
_PH_MATCH_OVER: Final = Phase.MATCH_OVER
_CHOOSE3: Final = CaptureThree.CHOOSE
_RISE: Final = Reopen.POINTS_RISE
_AUTO_STOP: Final = LastTurn.AUTO_STOP
# The action tables of the hot path, bound here as Final like the aliases above.
_CHOOSE: Final = CHOOSE_ACTIONS
_LEGAL: Final = MONTH_PLAYS
_NIBBLE_LOW: Final = NIBBLE_LOW


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One finished round."""

    round: int
    dealer: int
    winner: int | None
    points: int
    reason: str

    def __reduce__(self) -> tuple[type[RoundResult], tuple[Any, ...]]:
        """Pickle and copy by the fields (a compiled build cannot set a frozen record's fields one by one)."""
        return RoundResult, (self.round, self.dealer, self.winner, self.points, self.reason)


class State:
    """A match position. Treat as read-only; :func:`apply` returns a new state.

    Hidden cards (``hands``, ``stock``) are attributes here for the engine and the replay writer; what a player may
    know comes only from :func:`referee.engine.views.observe`.
    """

    __slots__ = (
        "captured", "deal_index", "dealer", "deals", "events", "field", "first_dealer", "hands", "history",
        "koikoi", "last_names", "last_points", "leader", "pending", "phase", "round", "rules", "scores", "seed",
        "stock", "stock_pos", "to_move", "turn", "winner",
    )  # fmt: skip

    rules: Rules
    seed: int
    deals: tuple[Deal, ...]
    deal_index: int
    round: int
    first_dealer: int
    dealer: int
    leader: int
    scores: tuple[int, int]
    phase: Phase
    to_move: int
    hands: tuple[Mask, Mask]
    field: Mask
    stock: tuple[Card, ...]
    stock_pos: int
    captured: tuple[Mask, Mask]
    koikoi: tuple[int, int]
    last_points: tuple[int, int]
    last_names: tuple[int, int]
    pending: Card
    turn: int
    history: tuple[RoundResult, ...]
    winner: int | None
    events: tuple[Event, ...]

    def _copy(self) -> State:
        new = State.__new__(State)
        new.captured = self.captured
        new.deal_index = self.deal_index
        new.dealer = self.dealer
        new.deals = self.deals
        new.events = self.events
        new.field = self.field
        new.first_dealer = self.first_dealer
        new.hands = self.hands
        new.history = self.history
        new.koikoi = self.koikoi
        new.last_names = self.last_names
        new.last_points = self.last_points
        new.leader = self.leader
        new.pending = self.pending
        new.phase = self.phase
        new.round = self.round
        new.rules = self.rules
        new.scores = self.scores
        new.seed = self.seed
        new.stock = self.stock
        new.stock_pos = self.stock_pos
        new.to_move = self.to_move
        new.turn = self.turn
        new.winner = self.winner
        return new

    @property
    def is_over(self) -> bool:
        """True when the match has ended."""
        return self.phase is _PH_MATCH_OVER

    @property
    def stock_left(self) -> int:
        """Cards left in the stock."""
        return len(self.stock) - self.stock_pos

    def __repr__(self) -> str:
        return (
            f"State(round={self.round}, phase={self.phase.name}, to_move={self.to_move}, scores={self.scores}, "
            f"turn={self.turn})"
        )


def new_match(
    rules: Rules,
    seed: SupportsIndex = 0,
    deals: Sequence[Deal] = (),
    first_dealer: int | None = None,
) -> State:
    """The start of a match: the first round dealt (redealt as the rules say) and the first decision due.

    ``seed``: an integer (numpy's too; ``TypeError`` for anything else, in either build). ``deals`` are used in
    order, one per deal made (a misdeal takes the next one); when they run out the seeded shuffle takes over.
    ``first_dealer`` (0 or 1) overrides the rules' choice.
    """
    seed = operator.index(seed)
    s = State.__new__(State)
    s.rules, s.seed, s.deals, s.deal_index = rules, seed, tuple(deals), 0
    if first_dealer is None:
        if rules.first_dealer is FirstDealer.RANDOM:
            first_dealer = random.Random(f"koikoi/{seed}/first-dealer").randrange(2)
        else:
            first_dealer = 0 if rules.first_dealer is FirstDealer.SEAT1 else 1
    if first_dealer not in (0, 1):
        raise ValueError("first_dealer must be 0 or 1")
    s.first_dealer = s.dealer = s.leader = s.to_move = first_dealer
    s.round = 1
    s.scores = (rules.starting_points, rules.starting_points)
    s.phase = _PH_PLAY
    s.hands, s.field, s.stock, s.stock_pos = (0, 0), 0, (), 0
    s.captured, s.koikoi, s.last_points, s.last_names = (0, 0), (0, 0), (0, 0), (0, 0)
    s.pending, s.turn, s.history, s.winner = -1, 0, (), None
    events: list[Event] = []
    _begin_round(s, events)
    s.events = tuple(events)
    return s


def _can_match(hand: Mask, field: Mask) -> bool:
    return bool(field & months_of(hand))


def legal_actions(state: State) -> list[Action]:
    """The legal actions, sorted; empty only when the match is over."""
    phase = state.phase
    if phase is _PH_PLAY:
        hand, field = state.hands[state.to_move], state.field
        rules = state.rules
        table = _LEGAL[rules.capture_three is _CHOOSE3]
        out: list[Action] = []
        months = (hand | hand >> 1 | hand >> 2 | hand >> 3) & _NIBBLE_LOW
        while months:
            low = months & -months
            months ^= low
            shift = low.bit_length() - 1
            out += table[shift << 6 | (hand >> shift & 15) << 4 | (field >> shift & 15)]
        if rules.must_match_from_hand and field & months_of(hand):
            return [a for a in out if field & CARD_MONTH_MASK[a.card]]
        return out
    if phase is _PH_DRAW_CHOICE:
        m = state.field & CARD_MONTH_MASK[state.pending]
        row = _CHOOSE[state.pending]
        return [row[t] for t in C.cards_of(m)]
    if phase is _PH_KOIKOI:
        return [STOP, KOIKOI]
    return []


def _fields(action: object) -> tuple[object, object, object] | None:
    """The fields of an :class:`Action` as plain objects: a compiled build would check their types on access."""
    exact = type(action) is Action or isinstance(action, Action)  # kept apart from the cast: no narrowing
    return cast(tuple[object, object, object], action) if exact else None


def is_legal(state: State, action: object) -> bool:
    """Whether ``action`` is legal in ``state`` (without building the whole list)."""
    fields = _fields(action)
    if fields is None:
        return False
    kind, c, t = fields
    phase = state.phase
    if phase is _PH_PLAY and kind == _AK_PLAY:
        if not (isinstance(c, int) and 0 <= c < 48 and state.hands[state.to_move] >> c & 1):
            return False
        m = state.field & CARD_MONTH_MASK[c]
        n = m.bit_count()
        if n == 0:
            return t == -1 and not (
                state.rules.must_match_from_hand and _can_match(state.hands[state.to_move], state.field)
            )
        if n == 2 or (n == 3 and state.rules.capture_three is _CHOOSE3):
            return isinstance(t, int) and 0 <= t < 48 and bool(m >> t & 1)
        return t == -1
    if phase is _PH_DRAW_CHOICE and kind == _AK_CHOOSE:
        return (
            c == state.pending
            and isinstance(t, int)
            and 0 <= t < 48
            and bool((state.field & CARD_MONTH_MASK[state.pending]) >> t & 1)
        )
    if phase is _PH_KOIKOI:
        return action in (STOP, KOIKOI)
    return False


def _illegal(state: State, action: object) -> IllegalActionError:
    if state.phase is _PH_MATCH_OVER:
        return IllegalActionError(f"the match is over; no action is possible (got {action!r})")
    return IllegalActionError(f"illegal action in phase {state.phase.name}: {action!r}")


def _normal(action: object) -> Action | None:
    """``action`` with plain ints (or int enums) as its fields made exact; None if it is no action at all."""
    fields = _fields(action) if type(action) is Action else None
    if fields is None:
        return None
    kind, card, target = fields
    if type(kind) is ActionKind and type(card) is int and type(target) is int:
        return Action(kind, card, target)
    if any(type(x) is bool or not isinstance(x, int) for x in fields):
        return None
    try:
        return Action(ActionKind(int(cast(int, kind))), int(cast(int, card)), int(cast(int, target)))
    except ValueError:
        return None


def apply(state: State, action: object, record: bool = True, deal: bool = True) -> State:
    """The state after the :class:`Action` ``action``. Raises :class:`IllegalActionError` (and changes nothing) if it
    is not legal, or no action at all: ``object``, as a compiled build checks an argument's type at the boundary.

    ``record=False`` (for simulations) builds no event: the new state's ``events`` is empty, the rest is the same.
    ``deal=False`` (for a rollout, which stops at its round's end) does not deal the next round when ``action`` ends
    the round: the new state's ``scores``, ``history``, ``dealer``, ``round`` (the next one's number), ``winner``
    and ``is_over`` are those of the match between the two rounds, its hands, field and stock are empty, and it is
    not a position (no action can follow). Dealing a round is most of the cost of a rollout's last step.
    """
    given = action
    exact = type(given) is Action  # a flag, not a narrowing: a compiled build would check the fields' types
    if exact and state.phase is _PH_PLAY:
        fields: tuple[object, object, object] = given  # type: ignore[assignment]  # (no call: the hot path)
        kind, c, t = fields
        if kind is _AK_PLAY and type(c) is int and type(t) is int:
            return _apply_play(state, c, t, given, record, deal)
    normal = _normal(given)
    if normal is None or not is_legal(state, normal):
        raise _illegal(state, given)
    if normal.kind is _AK_PLAY:
        return _apply_play(state, normal.card, normal.target, normal, record, deal)
    s = state._copy()
    events: list[Event] | None = [] if record else None
    p = s.to_move
    kind = normal.kind
    if kind is _AK_CHOOSE:
        took = (1 << s.pending) | (1 << normal.target)
        s.field &= ~took
        s.captured = (s.captured[0] | took, s.captured[1]) if p == 0 else (s.captured[0], s.captured[1] | took)
        if events is not None:
            events.append(DrawCapture(p, s.pending, took))
        s.pending = -1
        _end_turn(s, p, events, deal)
    elif kind is _AK_KOIKOI:
        calls = s.koikoi[p] + 1
        s.koikoi = (calls, s.koikoi[1]) if p == 0 else (s.koikoi[0], calls)
        pts = evaluate(s.captured[p], s.rules, calls)[0]
        s.last_points = (pts, s.last_points[1]) if p == 0 else (s.last_points[0], pts)
        if events is not None:
            events.append(KoikoiDecision(p, True, calls))
        _next_turn(s, p, events, deal)
    else:
        if events is not None:
            events.append(KoikoiDecision(p, False, s.koikoi[p]))
        _stop(s, p, "stop", events, deal)
    s.events = tuple(events) if events is not None else ()
    return s


def _apply_play(state: State, c: int, t: int, action: object, record: bool, deal: bool) -> State:
    """The hand step and the draw step of a turn (the hot path: validation inline)."""
    p = state.to_move
    hand = state.hands[p]
    if not 0 <= c < 48 or not hand >> c & 1:
        raise _illegal(state, action)
    field = state.field
    rules = state.rules
    bit = 1 << c
    m = field & CARD_MONTH_MASK[c]
    if m:
        n = m.bit_count()
        if n == 2 or (n == 3 and rules.capture_three is _CHOOSE3):
            if not 0 <= t < 48 or not m >> t & 1:
                raise _illegal(state, action)
            took = bit | 1 << t
        elif t != -1:
            raise _illegal(state, action)
        else:
            took = bit | m
        field &= ~took
    else:
        if t != -1 or (rules.must_match_from_hand and field & months_of(hand)):
            raise _illegal(state, action)
        took = 0
        field |= bit
    s = state._copy()
    s.hands = (hand & ~bit, s.hands[1]) if p == 0 else (s.hands[0], hand & ~bit)
    # the draw step
    d = s.stock[s.stock_pos]
    s.stock_pos += 1
    dbit = 1 << d
    m = field & CARD_MONTH_MASK[d]
    if not m:
        s.field = field | dbit
        drew = 0
    else:
        n = m.bit_count()
        if n == 2 or (n == 3 and rules.capture_three is _CHOOSE3):
            s.field = field
            if took:
                s.captured = (s.captured[0] | took, s.captured[1]) if p == 0 else (s.captured[0], s.captured[1] | took)
            s.pending = d
            s.phase = _PH_DRAW_CHOICE
            s.events = (Play(p, c, took), Draw(p, d, 0, True)) if record else ()
            return s
        s.field = field & ~m
        drew = dbit | m
    events: list[Event] | None = [Play(p, c, took), Draw(p, d, drew)] if record else None
    took |= drew
    if took:
        s.captured = (s.captured[0] | took, s.captured[1]) if p == 0 else (s.captured[0], s.captured[1] | took)
        _end_turn(s, p, events, deal)
    else:  # nothing captured this turn: the yaku cannot have changed
        _next_turn(s, p, events, deal)
    s.events = tuple(events) if events is not None else ()
    return s


def _end_turn(s: State, p: int, events: list[Event] | None, deal: bool) -> None:
    rules = s.rules
    base, names = evaluate(s.captured[p], rules, s.koikoi[p])
    rise = base > s.last_points[p] if rules.reopen is _RISE else bool(names & ~s.last_names[p])
    s.last_points = (base, s.last_points[1]) if p == 0 else (s.last_points[0], base)
    s.last_names = (names, s.last_names[1]) if p == 0 else (s.last_names[0], names)
    if rise:
        last = s.hands[p] == 0
        if events is not None:
            events.append(YakuMade(p, base, tuple(y.value for y in yaku_names(names)), last))
        if last and rules.last_turn is _AUTO_STOP:
            _stop(s, p, "auto_stop", events, deal)
            return
        limit = rules.koikoi_calls_per_round
        if limit and s.koikoi[0] + s.koikoi[1] >= limit:  # no koi-koi call left this round: the yaku ends it
            _stop(s, p, "auto_stop", events, deal)
            return
        s.phase = _PH_KOIKOI
        s.to_move = p
        return
    _next_turn(s, p, events, deal)


def _next_turn(s: State, p: int, events: list[Event] | None, deal: bool) -> None:
    if not s.hands[0] and not s.hands[1]:
        pts = s.rules.exhausted_dealer_points
        _end_round(s, s.dealer if pts else None, pts, "exhausted", (), events, deal)
        return
    s.turn += 1
    s.to_move = 1 - p
    s.phase = _PH_PLAY


def _stop(s: State, p: int, reason: str, events: list[Event] | None, deal: bool) -> None:
    captured, calls, rules = s.captured[p], s.koikoi[p], s.rules
    base = evaluate(captured, rules, calls)[0]
    total = stop_total(base, calls, s.koikoi[1 - p], rules)  # as score(...).total
    yaku: tuple[tuple[str, int], ...] = ()
    if base and events is not None:  # the breakdown only for the event
        yaku = tuple((name.value, points) for name, points in yaku_points(captured, rules, calls))
    _end_round(s, p, total, reason, yaku, events, deal)


def settle(
    rules: Rules, scores: tuple[int, int], dealer: int, first_dealer: int, round_no: int, winner: int | None,
    points: int, reason: str,
) -> tuple[tuple[int, int], bool, int | None, int]:  # fmt: skip
    """What the end of round ``round_no`` does to the match: the scores after it, whether the match is over, the
    match's winner then (None: a draw, or not over) and who deals next (the dealer of the match's end when over).
    ``winner`` (None: nobody) took ``points`` for ``reason`` ("stop", "auto_stop" or "exhausted")."""
    if winner is not None and points:
        a, b = scores
        loss = points if rules.transfer_points else 0
        scores = (a + points, b - loss) if winner == 0 else (a - loss, b + points)
    if _broke(rules, scores) or round_no >= rules.rounds:
        a, b = scores
        if a != b:
            return scores, True, 0 if a > b else 1, dealer
        return scores, True, first_dealer if rules.tie_break is TieBreak.FIRST_DEALER else None, dealer
    if winner is not None and reason != "exhausted":
        nd = rules.next_dealer
        if nd is NextDealer.WINNER_DEALS:
            dealer = winner
        elif nd is NextDealer.WINNER_LEADS:
            dealer = winner if rules.leader is Leader.DEALER else 1 - winner
        else:
            dealer = 1 - dealer
    elif winner is None and rules.pass_deal_when_nobody_wins:
        dealer = 1 - dealer
    return scores, False, None, dealer


def _broke(rules: Rules, scores: tuple[int, int]) -> bool:
    """Whether ``scores`` end the match under ``end_when_broke`` (a player with no points left)."""
    return rules.end_when_broke and min(scores) <= 0


def _end_round(
    s: State,
    winner: int | None,
    points: int,
    reason: str,
    yaku: tuple[tuple[str, int], ...],
    events: list[Event] | None,
    deal: bool,
) -> None:
    rules = s.rules
    scores, over, match_winner, dealer = settle(rules, s.scores, s.dealer, s.first_dealer, s.round, winner, points,
                                                reason)  # fmt: skip
    s.scores = scores
    s.history = (*s.history, RoundResult(s.round, s.dealer, winner, points, reason))
    if events is not None:
        events.append(ev.RoundEnd(s.round, winner, points, reason, yaku, s.koikoi, s.scores))
    if over:
        s.winner = match_winner
        s.phase = _PH_MATCH_OVER
        s.pending = -1
        if events is not None:
            events.append(ev.MatchEnd(s.winner, s.scores, s.round, "broke" if _broke(rules, s.scores) else "rounds"))
        return
    s.dealer = dealer
    s.round += 1
    if not deal:  # a rollout's end (``apply(..., deal=False)``): the match between rounds, nothing dealt
        s.hands, s.field, s.stock, s.stock_pos, s.captured, s.pending = (0, 0), 0, (), 0, (0, 0), -1
        return
    _begin_round(s, events)


def _next_deal(s: State) -> Dealt:
    i = s.deal_index
    s.deal_index = i + 1
    if i < len(s.deals):
        deal = s.deals[i]
        return deal.hands, deal.field, deal.stock
    return shuffled_parts(s.seed, i)


def _begin_round(s: State, events: list[Event] | None) -> None:
    """Deal the round in ``s.round`` (redealing as needed); hand yaku end it at once."""
    rules = s.rules
    while True:
        hands, field, stock = _next_deal(s)
        reason = misdeal_reason(rules, hands, field)
        found: list[tuple[int, HandYaku, int]] = []
        if reason is None and (rules.teshi_points or rules.kuttsuki_points):
            for seat in (0, 1):
                hy = hand_yaku(hands[seat], rules)
                if hy is not None:
                    found.append((seat, hy[0], hy[1]))
            if len(found) == 2:
                reason = "hand_yaku_both"
        if reason is not None:
            if events is not None:
                events.append(ev.Misdeal(s.round, reason, hands, field, stock))
            continue
        s.leader = s.dealer if rules.leader is Leader.DEALER else 1 - s.dealer
        s.hands, s.field, s.stock, s.stock_pos = hands, field, stock, 0
        s.captured, s.koikoi, s.last_points, s.last_names = (0, 0), (0, 0), (0, 0), (0, 0)
        s.pending, s.turn, s.to_move, s.phase = -1, 1, s.leader, _PH_PLAY
        if events is not None:
            events.append(ev.RoundStart(s.round, s.dealer, s.leader, hands, field, stock))
        if found:
            seat, name, pts = found[0]
            if events is not None:
                events.append(ev.HandYakuMade(seat, name.value, pts))
            _end_round(s, seat, pts, name.value, ((name.value, pts),), events, True)
        return


def redeal(state: State, deal: Deal) -> State:
    """``state``, at the start of its round, with the round dealt from ``deal`` instead (redealt as the rules say).

    For a search that samples the current round's deal many times: replaying the match's earlier rounds once and
    redealing costs one round start instead of the whole match. ``state`` must be a round's first decision, the
    round dealt from its own deal list (as :func:`new_match` with ``deals`` and :func:`apply` make it)."""
    if state.phase is not _PH_PLAY or state.stock_pos or state.captured != (0, 0) or state.deal_index < 1:
        raise ValueError("redeal needs the first decision of a round")
    s = state._copy()
    i = state.deal_index - 1
    s.deals = (*state.deals[:i], deal, *state.deals[i + 1 :])
    s.deal_index = i
    s.events = ()
    _begin_round(s, None)
    return s
