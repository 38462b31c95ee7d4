"""The scripted deals of ``koikoi-referee check``: deals that force an event on a bot whatever it plays.

Each deal is found by a seeded search (so it is the same on every run) and kept only when :func:`forced` proves,
by trying every answer the bot could give against an opponent that always takes the first legal action, that
the event comes within the bot's first few turns. The koi-koi deal is built: the bot's first three draws take
the butterfly, the boar and the deer (or, where the rules do not score them, the sake cup and the moon).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from referee.engine import (
    Deal,
    Event,
    HandYakuMade,
    Misdeal,
    Phase,
    Rules,
    State,
    YakuMade,
    apply,
    card,
    legal_actions,
    mask_of,
    new_match,
)
from referee.engine.cards import cards_of

Want = Callable[[State, Event, int], bool]
"""Whether an event (of the state after a step, for the bot's engine seat) is the one looked for."""


@dataclass(frozen=True)
class Scripted:
    """The deals of one checklist match and the engine seat that deals first (the bot is seat 0)."""

    deals: tuple[Deal, ...]
    first_dealer: int


def _leader(rules: Rules, first_dealer: int) -> int:
    return new_match(rules, 0, (), first_dealer).leader


def _dealer_for_bot_lead(rules: Rules) -> int:
    """The first dealer that makes the bot (engine seat 0) lead the first round."""
    return 0 if _leader(rules, 0) == 0 else 1


def forced(rules: Rules, deals: tuple[Deal, ...], first_dealer: int, want: Want, bot_turns: int = 3) -> bool:
    """True when every way the bot (engine seat 0) can play its first ``bot_turns`` turns, against an
    opponent taking the first legal action, meets an event ``want`` accepts (also one of the deal itself)."""
    start = new_match(rules, 0, deals, first_dealer)
    if any(want(start, e, 0) for e in start.events):
        return True

    def walk(state: State, turns: int, depth: int) -> bool:
        if state.is_over or depth > 200:
            return False
        actions = legal_actions(state)
        if state.to_move != 0:
            actions = actions[:1]
        elif state.phase is Phase.PLAY:
            turns += 1
            if turns > bot_turns:
                return False
        for action in actions:
            after = apply(state, action)
            if any(want(after, e, 0) for e in after.events):
                continue
            if state.round != after.round or not walk(after, turns, depth + 1):
                return False
        return True

    return walk(start, 0, 0)


def _search(rules: Rules, want: Want, first_dealer: int, seed: str, accept: Callable[[Deal], bool]) -> Deal | None:
    rng = random.Random(seed)
    for _ in range(4000):
        cards = list(range(48))
        rng.shuffle(cards)
        deal = Deal((mask_of(cards[:8]), mask_of(cards[8:16])), mask_of(cards[16:24]), tuple(cards[24:]))
        if accept(deal) and forced(rules, (deal,), first_dealer, want, 1):
            return deal
    return None


def _months(mask: int) -> list[int]:
    return [c // 4 for c in cards_of(mask)]


def _plain(rules: Rules, deal: Deal) -> bool:
    """No misdeal, no hand yaku: the round is played."""
    start = new_match(rules, 0, (deal,), 0)
    return start.deal_index == 1 and not any(isinstance(e, (Misdeal, HandYakuMade)) for e in start.events)


def capture_on_play(rules: Rules) -> Scripted | None:
    """A deal whose first request to the bot offers a choice of capture (two field cards of a month in its
    hand): the bot leads, so the first request is its own."""
    fd = _dealer_for_bot_lead(rules)
    rng = random.Random("check/capture-on-play")
    for _ in range(4000):
        cards = list(range(48))
        rng.shuffle(cards)
        deal = Deal((mask_of(cards[:8]), mask_of(cards[8:16])), mask_of(cards[16:24]), tuple(cards[24:]))
        field = _months(deal.field)
        if _plain(rules, deal) and any(field.count(m) == 2 for m in _months(deal.hands[0])):
            return Scripted((deal,), fd)
    return None


def _draw_choice(state: State, event: Event, bot: int) -> bool:
    return state.phase is Phase.DRAW_CHOICE and state.to_move == bot


def capture_on_draw(rules: Rules, seed: str = "check/capture-on-draw") -> Scripted | None:
    """A deal whose bot draws, on its first turn, a card matching two field cards whatever it played (``seed``:
    the search's, another for another such deal)."""
    fd = _dealer_for_bot_lead(rules)
    deal = _search(rules, _draw_choice, fd, seed, lambda d: _plain(rules, d))
    return None if deal is None else Scripted((deal,), fd)


def misdeal(rules: Rules) -> Scripted | None:
    """A misdeal (four cards of a month on the field) and the redeal after it, where the rules redeal."""
    if not rules.misdeal_field_four:
        return None
    fd = _dealer_for_bot_lead(rules)
    again = capture_on_draw(rules, "check/misdeal-redeal")  # not the capture item's deal: a process plays both
    if again is None:
        return None
    month = [card(x) for x in ("pine-crane", "pine-ribbon", "pine-chaff-1", "pine-chaff-2")]
    rest = [c for c in range(48) if c not in month]
    random.Random("check/misdeal").shuffle(rest)
    field = month + rest[:4]
    deal = Deal((mask_of(rest[4:12]), mask_of(rest[12:20])), mask_of(field), tuple(rest[20:]))
    return Scripted((deal, again.deals[0]), fd)


def hand_yaku(rules: Rules) -> Scripted | None:
    """An opening hand of four cards of one month (teshi), where the rules score it."""
    if not rules.teshi_points or rules.misdeal_hand_four:
        return None
    fd = _dealer_for_bot_lead(rules)
    month = [card(x) for x in ("cherry-curtain", "cherry-ribbon", "cherry-chaff-1", "cherry-chaff-2")]
    rest = [c for c in range(48) if c not in month]
    rng = random.Random("check/hand-yaku")
    for _ in range(1000):
        rng.shuffle(rest)
        deal = Deal((mask_of(month + rest[:4]), mask_of(rest[4:12])), mask_of(rest[12:20]), tuple(rest[20:]))
        start = new_match(rules, 0, (deal,), fd)
        kinds = [type(e) for e in start.events]
        # dealt as scripted (no misdeal first); the hand yaku may end the round at once (then the next is dealt)
        if HandYakuMade in kinds and Misdeal not in kinds[: kinds.index(HandYakuMade)]:
            return Scripted((deal,), fd)
    return None


def koikoi(rules: Rules) -> Scripted | None:
    """A deal whose bot makes a yaku within its first three turns whatever it plays: a koi-koi decision."""
    fd = _dealer_for_bot_lead(rules)
    if rules.boar_deer_butterfly:
        wanted = ["peony-butterfly", "clover-boar", "maple-deer"]
        months: tuple[str, ...] = ("peony", "clover", "maple")
    elif rules.moon_viewing:
        wanted = ["chrysanthemum-sake", "pampas-moon"]
        months = ("chrysanthemum", "pampas")
    else:
        return None
    from referee.engine import CARD_IDS

    held = [c for c in range(48) if CARD_IDS[c].split("-")[0] in months and CARD_IDS[c] not in wanted]
    on_field = [next(c for c in held if CARD_IDS[c].startswith(m)) for m in months]  # one of each month
    later = [c for c in held if c not in on_field]

    def want(state: State, event: Event, bot: int) -> bool:
        return isinstance(event, YakuMade) and event.seat == bot

    rng = random.Random("check/koikoi")
    others = [c for c in range(48) if c not in held and CARD_IDS[c] not in wanted]
    for _ in range(4000):
        rng.shuffle(others)
        hands = (others[:8], others[8:16])
        field = on_field + others[16:16 + 8 - len(on_field)]
        spare = others[16 + 8 - len(on_field):]
        head: list[int] = []
        for k, w in enumerate(wanted):  # the bot's draws: the 1st, 3rd, 5th of the stock; the opponent's between
            head.append(card(w))
            if k < len(wanted) - 1:
                head.append(spare[k])
        stock = head + [c for c in spare if c not in head] + later
        if len(stock) != 24:
            continue
        deal = Deal((mask_of(hands[0]), mask_of(hands[1])), mask_of(field), tuple(stock))
        if _plain(rules, deal) and forced(rules, (deal,), fd, want, len(wanted)):
            return Scripted((deal,), fd)
    return None
