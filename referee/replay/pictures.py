"""The pictures of a replay, step by step, built by replaying it with the engine.

:func:`build_steps` re-simulates a replay (:class:`referee.replay.replayer.Simulation`, so the strict reader and
every engine check apply) and makes one picture per engine position: the deal, then the position after each
decision. A picture is built with the one observer, :func:`referee.engine.observe`: for the full view from both
seats' views, for a seat from that seat's view only, so a seat's picture holds exactly what that seat saw. The
move of each step is told in words from the engine's events (the public ones, and for a seat the deal as that
seat saw it). Cards are named by their ids (``pine-crane``); how to draw a card comes from :func:`card_parts`,
which holds no card id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.engine import CARD_IDS, State, View, ids_of, observe
from referee.engine import cards as C
from referee.engine import events as ev
from referee.engine.cards import Kind
from referee.errors import RefereeError
from referee.replay.reader import Decision, EventLine, Header, LineError, ReplayError, Result
from referee.replay.replayer import Simulation

MAX_STEPS = 200_000
"""The most pictures a page holds."""

MONTH_COLOURS: tuple[str, ...] = (
    "#2f7d4a", "#c2456b", "#f2a7bf", "#8a6bbf", "#4a5fb5", "#d9534f",
    "#b0508f", "#c9a227", "#e8c33a", "#d2691e", "#5f7f6a", "#7a5a8c",
)  # fmt: skip
"""A background colour for each month, January first."""

_KIND_LABELS = {Kind.BRIGHT: "bright", Kind.ANIMAL: "animal", Kind.RIBBON: "ribbon", Kind.CHAFF: "chaff"}
_YAKU_TITLES = {
    "five_brights": "Five brights", "four_brights_dry": "Four brights",
    "four_brights_wet": "Rainy four brights", "three_brights": "Three brights",
    "poetry_ribbons": "Poetry ribbons", "blue_ribbons": "Blue ribbons",
    "poetry_blue_bonus": "Poetry and blue", "boar_deer_butterfly": "Boar, deer, butterfly",
    "ribbons": "Ribbons", "animals": "Animals", "chaff": "Chaff",
    "cherry_viewing": "Cherry viewing", "moon_viewing": "Moon viewing",
    "teshi": "Teshi (four of a month)", "kuttsuki": "Kuttsuki (four pairs)",
}  # fmt: skip


class ViewerError(RefereeError):
    """A replay that cannot be shown: unreadable, not a ``koikoi-replay/1`` file, or not what the engine plays."""


class NoBoard(ViewerError):
    """A replay that verifies and has a result but no deal (a bot forfeited before the first round, at its
    ``hello``): there is no board to draw, only the result. ``match``: the match facts of :func:`build_steps`;
    ``result``: the result line."""

    def __init__(self, message: str, match: dict[str, Any], result: Result) -> None:
        super().__init__(message)
        self.match = match
        self.result = result


def card_parts() -> dict[str, Any]:
    """What the page needs to draw any card from its id ``flower-subject``: the month of each flower, the kind
    of each subject, the ribbon colour of each flower, the month colours. Built from the engine's card table;
    it names flowers and subjects, never a whole card id."""
    months: dict[str, int] = {}
    kinds: dict[str, str] = {}
    ribbons: dict[str, str] = {}
    for c, cid in enumerate(CARD_IDS):
        flower, _, subject = cid.partition("-")
        kind = _KIND_LABELS[C.KINDS[c]]
        if months.setdefault(flower, C.MONTHS[c]) != C.MONTHS[c] or kinds.setdefault(subject, kind) != kind:
            raise AssertionError(f"the card ids no longer name month and kind: {cid}")
        if C.KINDS[c] is Kind.RIBBON:
            bit = 1 << c
            ribbons[flower] = "poetry" if C.POETRY & bit else "blue" if C.BLUE & bit else "red"
    return {"months": months, "kinds": kinds, "ribbons": ribbons, "colours": list(MONTH_COLOURS)}


def card_name(c: int) -> str:
    """A card in words, e.g. ``Pine crane``, ``Clover ribbon``, ``Paulownia chaff 3``."""
    return CARD_IDS[c].replace("-", " ").capitalize()


def yaku_title(name: str) -> str:
    """A yaku name in words."""
    return _YAKU_TITLES.get(name, name.replace("_", " ").capitalize())


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _list(cards: list[int]) -> str:
    return " and ".join(card_name(c) for c in cards)


@dataclass
class _Teller:
    """Tells engine events in words; none of the sentences names a hidden card (a deal is told without its
    cards), so the same words serve every picture."""

    names: list[str]
    moved: list[int] = field(default_factory=list)  # cards the told events moved, in order

    def who(self, s: int) -> str:
        return f"{self.names[s]} (seat {s + 1})"

    def tell(self, e: ev.Event) -> str:
        me = self.names[getattr(e, "seat", 0)]
        if isinstance(e, ev.RoundStart):
            return f"Round {e.round} dealt: {self.who(e.dealer)} deals, {self.who(e.leader)} plays first."
        if isinstance(e, ev.Misdeal):
            return f"Round {e.round}: misdeal ({e.reason}); the cards are dealt again."
        if isinstance(e, ev.Play | ev.Draw | ev.DrawCapture):
            took = [c for c in C.cards_of(e.captured) if c != e.card]
            self.moved += [e.card, *took]
            if isinstance(e, ev.DrawCapture):
                return f"{me} takes {_list(took)} with the drawn {card_name(e.card)}."
            verb = "plays" if isinstance(e, ev.Play) else "draws"
            if isinstance(e, ev.Draw) and e.choice:
                return f"{me} draws {card_name(e.card)}: it matches two field cards, a choice is due."
            if took:
                return f"{me} {verb} {card_name(e.card)} and captures {_list(took)}."
            if isinstance(e, ev.Play):
                return f"{me} plays {card_name(e.card)} to the field (no match)."
            return f"{me} draws {card_name(e.card)}; it stays on the field."
        if isinstance(e, ev.YakuMade):
            last = " on the last turn" if e.last_turn else ""
            return f"{me} makes {', '.join(yaku_title(y) for y in e.yaku)}{last}: {_points(e.points)}."
        if isinstance(e, ev.KoikoiDecision):
            return f"{me} calls koi-koi (call {e.calls}) and plays on." if e.koikoi else f"{me} stops."
        if isinstance(e, ev.HandYakuMade):
            return f"{me} shows a hand yaku: {yaku_title(e.name)}, {_points(e.points)}."
        if isinstance(e, ev.RoundEnd):
            if e.winner is None:
                return f"Round {e.round} ends: nobody scores ({e.reason})."
            return f"Round {e.round} ends: {self.who(e.winner)} scores {_points(e.points)} ({e.reason})."
        assert isinstance(e, ev.MatchEnd)
        a, b = e.scores
        if e.winner is None:
            return f"Match over: a draw, {a}–{b} ({e.reason})."
        return f"Match over: {self.who(e.winner)} wins, {a}–{b} ({e.reason})."


def picture(state: State, seat: int | None) -> dict[str, Any]:
    """One position as the page draws it, from the observer: both seats' views (``seat`` None) or one seat's.
    A hand the picture may not show is None (its size is in ``sizes``)."""
    views: list[View] = [observe(state, s) for s in (0, 1)] if seat is None else [observe(state, seat)]
    v = views[0]
    hands: list[list[str] | None] = [None, None]
    sizes = [0, 0]
    for view in views:
        hands[view.seat] = ids_of(view.hand)
        sizes[view.seat] = view.hand.bit_count()
        sizes[1 - view.seat] = view.opponent_hand_size
    nxt = None
    if seat is None and state.stock_left:
        nxt = CARD_IDS[state.stock[state.stock_pos]]  # the full view shows the stock's next card
    return {
        "round": v.round, "dealer": v.dealer + 1, "hands": hands, "sizes": sizes, "field": ids_of(v.field),
        "stock": v.stock_size, "next": nxt, "drawn": CARD_IDS[v.drawn] if v.drawn >= 0 else None,
        "captured": [ids_of(v.captured[0]), ids_of(v.captured[1])], "calls": list(v.koikoi_calls),
        "scores": list(v.scores), "totals": [v.yaku[0].total, v.yaku[1].total],
        "yaku": [[[yaku_title(y.name.value), y.points] for y in v.yaku[s].yaku] for s in (0, 1)],
    }  # fmt: skip


def _shown(p: dict[str, Any]) -> set[str]:
    cards = {*p["field"], *p["captured"][0], *p["captured"][1]}
    for hand in p["hands"]:
        cards.update(hand or ())
    for one in (p["drawn"], p["next"]):
        if one is not None:
            cards.add(one)
    return cards


def build_steps(
    replay: Path | str, seat: int | None = None, key: bytes | None = None, names: tuple[str, str] | None = None
) -> dict[str, Any]:
    """The page data of a replay file: match facts, how to draw cards, and one picture per engine position,
    as ``seat`` (1 or 2; None: full information) saw it. ``names`` are the seats' names to show (a
    tournament's names for its bots); by default the header's ``names`` when the match recorded them, else the
    names the bots gave in ``hello``. :class:`ViewerError`
    (one line) for a replay that is unreadable, malformed or not what the engine plays."""
    if seat not in (None, 1, 2):
        raise ValueError("seat must be 1, 2 or None")
    me = None if seat is None else seat - 1
    sim = Simulation(replay, key)

    def shown_names() -> list[str]:
        return list(names) if names is not None else sim.shown_names

    header: Header | None = None
    result: Result | None = None
    steps: list[dict[str, Any]] = []
    events: list[ev.Event] = []
    actor: int | None = None
    before: State | None = None

    def emit(state: State) -> None:
        if len(steps) >= MAX_STEPS:
            raise ViewerError(f"{replay}: more than {MAX_STEPS} steps")
        teller = _Teller(shown_names())
        text = " ".join(teller.tell(e) for e in events)
        p = picture(state, me)
        shown = _shown(p)
        p.update(text=text, actor=None if actor is None else actor + 1,
                 marked=[CARD_IDS[c] for c in teller.moved if CARD_IDS[c] in shown])  # fmt: skip
        steps.append(p)

    try:
        for step in sim.steps():
            r = step.record
            if isinstance(r, Header):
                header = r
            elif isinstance(r, EventLine):
                assert step.event is not None
                events.append(step.event)
            elif isinstance(r, Decision):
                assert before is not None
                emit(before)
                events, actor = [], r.seat
            elif isinstance(r, Result):
                result = r
            before = step.state
    except ReplayError as exc:
        raise ViewerError(f"{replay}: {exc}") from None
    except LineError as exc:
        raise ViewerError(f"{replay}: {exc}") from None
    if header is None or before is None:
        raise ViewerError(f"{replay}: not a koikoi-replay/1 replay (no header line)")
    if events:
        emit(before)
    if not steps:
        if result is None:
            raise ViewerError(f"{replay}: the replay holds no event")
        facts = _facts(header, shown_names(), result, seat)
        raise NoBoard(f"{replay}: the match ended before the first deal", facts, result)
    end = _ending(result, shown_names(), me)
    if end:
        steps.append({**steps[-1], "text": end, "actor": None, "marked": []})
    return {"match": _facts(header, shown_names(), result, seat), "cards": card_parts(), "steps": steps}


def _ending(result: Result | None, names: list[str], seat: int | None) -> str:
    if result is None:
        return "The replay ends here: it has no result line (a truncated replay)."
    f = result.forfeit
    if f is None:
        return ""
    who = f"{names[f.seat]} (seat {f.seat + 1})"
    # The detail may name the forfeiting seat's legal actions (its hand) and cards it made up: only the full
    # picture shows it.
    detail = f.detail[:300] if seat is None else ""
    tail = f" ({detail})." if detail else "."
    return f"{who} forfeits the match: {f.reason.value}{tail}"


def _facts(header: Header, names: list[str], result: Result | None, seat: int | None) -> dict[str, Any]:
    res = None
    if result is not None:
        res = {
            "winner": result.winner_number,
            "scores": list(result.scores),
            "reason": result.reason.value,
        }
    return {
        "id": header.match_id[:80],
        "names": [n[:64] for n in names],
        "rules": header.rules.name,
        "rounds": header.rules.rounds,
        # A string: JavaScript rounds integers above 2**53. A seat never learns the seed (it fixes every deal).
        "seed": str(header.seed) if seat is None else None,
        "seat": seat,
        "result": res,
    }


def result_text(match: dict[str, Any]) -> str:
    """The result of a match in words, without the scores (from :func:`build_steps`' ``match``)."""
    res = match["result"]
    if res is None:
        return "unfinished"
    if res["winner"] is None:
        return f"draw ({res['reason']})"
    return f"{match['names'][res['winner'] - 1]} wins ({res['reason']})"
