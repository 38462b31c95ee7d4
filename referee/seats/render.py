"""Cards, positions and events as readable terminal text for a person playing one seat.

Everything here is built from what that seat receives: the ``view`` of a request and the ``event`` messages
(``visible_event``), both in wire form. Cards get short names (``Pine★crane``, ``Iris▬red``, ``Plum·chaff``)
with a kind marker and a colour per month; without colour the names alone still say month and kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text

from referee.engine import Kind, card
from referee.engine.cards import BLUE, KINDS, POETRY
from referee.text import plural, yaku_text

MONTH_COLOURS: tuple[str, ...] = (
    "green", "deep_pink3", "pink1", "medium_purple", "dodger_blue2", "red",
    "orchid", "light_goldenrod2", "yellow", "dark_orange", "cyan", "slate_blue1",
)  # fmt: skip
"""A colour for each month (1..12 at index 0..11)."""

MARKERS: dict[Kind, str] = {Kind.BRIGHT: "★", Kind.ANIMAL: "◆", Kind.RIBBON: "▬", Kind.CHAFF: "·"}
"""The marker between month and name, per kind."""
ASCII_MARKERS: dict[Kind, str] = {Kind.BRIGHT: "*", Kind.ANIMAL: "+", Kind.RIBBON: "=", Kind.CHAFF: "."}
"""Markers for a terminal that cannot show the others."""
KIND_NAMES: dict[Kind, str] = {Kind.BRIGHT: "brights", Kind.ANIMAL: "animals", Kind.RIBBON: "ribbons",
                               Kind.CHAFF: "chaff"}  # fmt: skip
"""Plural names of the kinds, for capture piles."""


def card_name(card_id: str, *, ascii_only: bool = False) -> str:
    """The short readable name of a card id: ``pine-crane`` → ``Pine★crane``, ``iris-ribbon`` → ``Iris▬red``."""
    c = card(card_id)
    kind = KINDS[c]
    month, _, rest = card_id.partition("-")
    if kind is Kind.RIBBON:
        rest = "poem" if (POETRY >> c) & 1 else "blue" if (BLUE >> c) & 1 else "red"
    elif kind is Kind.CHAFF and rest.startswith("chaff"):
        rest = "chaff"
    marker = (ASCII_MARKERS if ascii_only else MARKERS)[kind]
    return f"{month.capitalize()}{marker}{rest}"


def card_text(card_id: str, *, ascii_only: bool = False) -> Text:
    """A card's name in its month's colour (bold for brights)."""
    c = card(card_id)
    style = MONTH_COLOURS[c // 4] + (" bold" if KINDS[c] is Kind.BRIGHT else "")
    return Text(card_name(card_id, ascii_only=ascii_only), style=style)


def kind_of(card_id: str) -> Kind:
    """The kind of a card id."""
    return KINDS[card(card_id)]


def flow(cells: Sequence[Text], width: int, indent: int = 0, first: Text | None = None, gap: int = 2) -> list[Text]:
    """Lay ``cells`` out left to right, ``gap`` spaces apart, in lines of at most ``width`` columns.

    ``first`` starts the first line (a label); later lines are indented by ``indent`` spaces. A cell is never
    split across lines."""
    lines: list[Text] = []
    line = first.copy() if first is not None else Text(" " * indent)
    used = line.cell_len
    start = used
    for cell in cells:
        space = 0 if used == start else gap
        if used + space + cell.cell_len > width and used > start:
            lines.append(line)
            line = Text(" " * indent)
            used = start = indent
            space = 0
        line.append(" " * space)
        line.append_text(cell)
        used += space + cell.cell_len
    lines.append(line)
    return lines


def wrap(text: Text, width: int, indent: int = 2) -> list[Text]:
    """A sentence in lines of at most ``width`` columns, broken at spaces; later lines indented."""
    return flow([w for w in text.split(" ") if w.plain], width, indent, Text(""), gap=1)


def yaku_words(yaku: dict[str, Any]) -> str:
    """``{"yaku": [...], "total": N}`` as ``cherry viewing 5, chaff 1 = 6``, or ``no yaku yet``."""
    items = yaku.get("yaku") or []
    if not items:
        return "no yaku yet"
    parts = ", ".join(f"{y['name'].replace('_', ' ')} {y['points']}" for y in items)
    total = yaku.get("total", 0)
    return f"{parts} = {total} pts" + (" with koi-koi" if total != sum(y["points"] for y in items) else "")


class Renderer:
    """Builds the lines a person sees, as seat ``seat`` (1 or 2)."""

    def __init__(self, seat: int, *, width: int = 80, ascii_only: bool = False) -> None:
        self.seat = seat
        self.width = max(40, width)
        self.ascii_only = ascii_only

    def card(self, card_id: str) -> Text:
        """One card."""
        return card_text(card_id, ascii_only=self.ascii_only)

    def name(self, card_id: str) -> str:
        """One card's plain name."""
        return card_name(card_id, ascii_only=self.ascii_only)

    def cards(self, ids: Iterable[str]) -> Text:
        """Cards joined by commas (for sentences)."""
        out = Text()
        for k, cid in enumerate(ids):
            if k:
                out.append(", ")
            out.append_text(self.card(cid))
        return out

    def who(self, seat: int) -> str:
        """``You`` or ``Opponent``."""
        return "You" if seat == self.seat else "Opponent"

    def _verb(self, seat: int, base: str, third: str) -> str:
        return f"{self.who(seat)} {base if seat == self.seat else third}"

    # --- the position -------------------------------------------------------------------------------------

    def board(self, view: dict[str, Any], legal: Sequence[dict[str, Any]] = ()) -> list[Text]:
        """The whole position of a request's view: header, field, both capture piles, the hand (numbered;
        with ``legal``, the cards that cannot be played now are marked)."""
        me, opp = self.seat - 1, 2 - self.seat
        scores = view["scores"]
        dealer = "you" if view["dealer"] == self.seat else "opponent"
        head = (
            f"Round {view['round']}/{view['rounds']} · turn {view['turn']} · dealer: {dealer} · "
            f"scores: you {scores[me]}, opponent {scores[opp]}"
        )
        bar = "─" if not self.ascii_only else "-"
        lines = [Text("")]
        if len(head) + 4 <= self.width:
            lines.append(Text(f"{bar * 2} {head} ", style="bold").append(bar * (self.width - len(head) - 4)))
        else:
            lines += wrap(Text(head, style="bold"), self.width)
        calls = view["koikoi_calls"]
        held, stock = plural(view["opponent_hand_size"], "card"), plural(view["stock_size"], "card")
        info = f"Opponent holds {held} · stock {stock}"
        if calls[0] or calls[1]:
            info += f" · koi-koi calls: you {calls[me]}, opponent {calls[opp]}"
        lines += wrap(Text(info), self.width)
        field = view["field"]
        lines += flow([self.card(c) for c in field], self.width, 2, Text(f"Field ({len(field)}): ", style="bold"))
        lines += self.pile("Opponent", view["captured"][opp], view["yaku"][opp])
        lines += self.pile("You", view["captured"][me], view["yaku"][me])
        lines += self.hand(view, legal)
        return lines

    def pile(self, who: str, ids: list[str], yaku: dict[str, Any]) -> list[Text]:
        """A capture pile grouped by kind, with its yaku."""
        head = Text(f"{who} took {len(ids)}: ", style="bold")
        head.append(yaku_words(yaku), style="bold green" if yaku.get("yaku") else "")
        out = wrap(head, self.width)
        for kind in Kind:
            group = [c for c in ids if kind_of(c) is kind]
            if group:
                label = f"  {KIND_NAMES[kind]} {len(group)}:".ljust(13)
                out += flow([self.card(c) for c in group], self.width, 13, Text(label))
        return out

    def hand(self, view: dict[str, Any], legal: Sequence[dict[str, Any]] = ()) -> list[Text]:
        """The hand, numbered from 1; cards that cannot be played now are dimmed (and marked ``x``)."""
        hand: list[str] = view["hand"]
        playable = {a["play"] for a in legal if "play" in a}
        cells: list[Text] = []
        for k, cid in enumerate(hand, 1):
            cell = Text(f"{k} ", style="bold")
            cell.append_text(self.card(cid))
            if view.get("decision") == "play" and playable and cid not in playable:
                cell = Text(f"{k} {self.name(cid)} x", style="dim")
            cells.append(cell)
        if not cells:
            return [Text("Your hand: empty", style="bold")]
        return flow(cells, self.width, 2, Text("Your hand: ", style="bold"))

    # --- events -------------------------------------------------------------------------------------------

    def event(self, e: dict[str, Any]) -> list[Text]:
        """What an ``event`` message says, in words (an empty list for nothing worth showing)."""
        kind = e.get("event")
        seat = e.get("seat", 0)
        if kind == "round_start":
            dealer = "you deal" if e["dealer"] == self.seat else "the opponent deals"
            lead = "you play first" if e["leader"] == self.seat else "the opponent plays first"
            out = [Text(""), Text(f"Round {e['round']}: {dealer}, {lead}.", style="bold")]
            if e["leader"] != self.seat and "field" in e:  # the deal, before the opponent's first move changes it
                out += flow([self.card(c) for c in e["field"]], self.width, 2, Text("Field dealt: "))
                out += flow([self.card(c) for c in e.get("hand", [])], self.width, 2, Text("Your hand: "))
            return out
        if kind == "misdeal":
            return [Text(f"Round {e['round']}: misdeal ({e['reason'].replace('_', ' ')}); dealt again.")]
        if kind in ("play", "draw"):
            taken = [c for c in e["captured"] if c != e["card"]]
            verb = self._verb(seat, "play", "plays") if kind == "play" else self._verb(seat, "draw", "draws")
            line = Text(f"{verb} ").append_text(self.card(e["card"]))
            if e.get("choice"):
                line.append(": it matches two field cards")
            elif taken:
                line.append(" and takes " if seat != self.seat else " and take ").append_text(self.cards(taken))
            else:
                line.append(": no match, it stays on the field")
            return [line.append(".")]
        if kind == "draw_capture":
            taken = [c for c in e["captured"] if c != e["card"]]
            line = Text(f"{self._verb(seat, 'take', 'takes')} ").append_text(self.cards(taken))
            return [line.append(" with ").append_text(self.card(e["card"])).append(".")]
        if kind == "yaku":
            names = ", ".join(y.replace("_", " ") for y in e["yaku"])
            has = self._verb(seat, "have", "has")
            return [Text(f"{has} yaku: {names} ({plural(e['points'], 'pt')}).", style="bold green")]
        if kind == "koikoi":
            if e["koikoi"]:
                return [Text(f"{self._verb(seat, 'call', 'calls')} koi-koi! (call {e['calls']})", style="bold")]
            return [Text(f"{self._verb(seat, 'stop', 'stops')}.", style="bold")]
        if kind == "hand_yaku":
            show = self._verb(seat, "show", "shows")
            return [Text(f"{show} a hand yaku: {e['name']} ({plural(e['points'], 'pt')}).", style="bold green")]
        if kind == "round_end":
            return [self._round_end(e)]
        if kind == "match_end":
            me, opp = self.seat - 1, 2 - self.seat
            sc = e["scores"]
            text = "you win" if e["winner"] == self.seat else "the opponent wins"
            if e["winner"] is None:
                text = "a draw"
            return [Text(""), Text(f"Match over after {plural(e['rounds'], 'round')}: {text}, "
                                   f"you {sc[me]}, opponent {sc[opp]}.", style="bold")]  # fmt: skip
        return []

    def _round_end(self, e: dict[str, Any]) -> Text:
        me, opp = self.seat - 1, 2 - self.seat
        sc = e["scores"]
        reason = e["reason"].replace("_", " ")
        if e["winner"] is None:
            text = f"Round {e['round']} ends: nobody scores ({reason})."
        else:
            yaku = yaku_text(e, (("you", me), ("opponent", opp)), spaced=True)
            who = "you score" if e["winner"] == self.seat else "the opponent scores"
            text = f"Round {e['round']} ends: {who} {e['points']} ({reason}{': ' + yaku if yaku else ''})."
        return Text(f"{text} Scores: you {sc[me]}, opponent {sc[opp]}.", style="bold")
