"""Replays as pictures: one self-contained HTML page per match, and an index page for a folder of replays.

:func:`build_steps` reads the lines of a ``koikoi-replay/1`` file and applies its event lines one by one,
keeping a full snapshot of the table after each (hands, field, stock, capture piles, yaku, scores, the move in
words). :func:`render_html` embeds those snapshots as escaped JSON in a page whose small script only draws one
snapshot at a time. Pages load nothing from the network. Replay files are untrusted input: anything malformed
becomes a :class:`ViewerError` with a one-line message.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from dataclasses import field as _field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from referee.engine import cards as C
from referee.engine import rules_from_dict, score
from referee.engine.cards import Kind
from referee.engine.errors import EngineError
from referee.engine.rules import Rules
from referee.errors import RefereeError

REPLAY_FORMAT = "koikoi-replay/1"
MAX_STEPS = 200_000

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
    """A replay that cannot be shown: unreadable, not a ``koikoi-replay/1`` file, or inconsistent."""


def card_table() -> list[dict[str, Any]]:
    """What the page needs to draw each card (indexed by card int): id, month, colour, kind, labels."""
    out: list[dict[str, Any]] = []
    for c, cid in enumerate(C.CARD_IDS):
        flower, _, subject = cid.partition("-")
        kind = C.KINDS[c]
        ribbon = ""
        if kind is Kind.RIBBON:
            bit = 1 << c
            ribbon = "poetry" if C.POETRY & bit else "blue" if C.BLUE & bit else "red"
        label = "ribbon" if kind is Kind.RIBBON else "" if subject.startswith("chaff") else subject
        out.append({
            "id": cid, "month": C.MONTHS[c], "flower": "chrysanth." if flower == "chrysanthemum" else flower,
            "colour": MONTH_COLOURS[C.MONTHS[c] - 1], "kind": _KIND_LABELS[kind], "ribbon": ribbon,
            "label": label, "name": card_name(c),
        })  # fmt: skip
    return out


def card_name(c: int) -> str:
    """A card in words, e.g. ``Pine crane``, ``Clover ribbon``, ``Paulownia chaff 3``."""
    return C.CARD_IDS[c].replace("-", " ").capitalize()


def yaku_title(name: str) -> str:
    """A yaku name in words."""
    return _YAKU_TITLES.get(name, name.replace("_", " ").capitalize())


@dataclass
class _Table:
    """The table while the event lines are applied, with the replay's cards as ints."""

    rules: Rules
    names: list[str]
    round: int = 0
    dealer: int = 0
    hands: list[set[int]] = _field(default_factory=lambda: [set(), set()])
    field: set[int] = _field(default_factory=set)
    stock: list[int] = _field(default_factory=list)
    captured: list[set[int]] = _field(default_factory=lambda: [set(), set()])
    calls: list[int] = _field(default_factory=lambda: [0, 0])
    scores: list[int] = _field(default_factory=lambda: [0, 0])
    drawn: int | None = None

    def who(self, seat: int) -> str:
        return f"{self.names[seat]} (seat {seat + 1})"

    def snapshot(self, text: str, actor: int | None, marked: list[int]) -> dict[str, Any]:
        yaku: list[list[list[Any]]] = []
        totals: list[int] = []
        for s in (0, 1):
            sc = score(C.mask_of(self.captured[s]), self.rules, self.calls[s])
            yaku.append([[yaku_title(y.name.value), y.points] for y in sc.yaku])
            totals.append(sc.total)
        return {
            "round": self.round, "dealer": self.dealer + 1 if self.round else None,
            "hands": [sorted(self.hands[0]), sorted(self.hands[1])], "field": sorted(self.field),
            "stock": len(self.stock), "next": self.stock[0] if self.stock else None, "drawn": self.drawn,
            "captured": [sorted(self.captured[0]), sorted(self.captured[1])], "calls": list(self.calls),
            "scores": list(self.scores), "yaku": yaku, "totals": totals, "text": text,
            "actor": None if actor is None else actor + 1, "marked": marked,
        }  # fmt: skip


def _cards(value: Any, what: str) -> list[int]:
    if not isinstance(value, list):
        raise ViewerError(f"{what}: expected a list of card ids")
    return [_card(v, what) for v in value]


def _card(value: Any, what: str) -> int:
    try:
        return C.card(value)
    except EngineError:
        raise ViewerError(f"{what}: unknown card id {str(value)[:40]!r}") from None


def _seat(value: Any) -> int:
    if value not in (1, 2) or isinstance(value, bool):
        raise ViewerError(f"seat: expected 1 or 2, got {str(value)[:20]!r}")
    return int(value) - 1


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ViewerError(f"{what}: expected a whole number")
    return value


def _pair(value: Any) -> list[int]:
    if not isinstance(value, list) or len(value) != 2:
        raise ViewerError("scores: expected two numbers")
    return [_int(value[0], "scores"), _int(value[1], "scores")]


def _take(t: _Table, seat: int, played: int, captured: list[int], source: set[int] | None) -> None:
    """Move ``played`` (from ``source``, or the drawn card) and the field cards it captured."""
    if source is not None:
        if played not in source:
            raise ViewerError(f"{C.CARD_IDS[played]} is not in the hand of seat {seat + 1}")
        source.discard(played)
    if not captured:
        t.field.add(played)
        return
    taken = [c for c in captured if c != played]
    if played not in captured or any(c not in t.field for c in taken):
        raise ViewerError(f"the capture {', '.join(C.CARD_IDS[c] for c in captured)} does not fit the field")
    t.field.difference_update(taken)
    t.captured[seat].update(captured)


def _apply(t: _Table, e: dict[str, Any]) -> tuple[str, int | None, list[int]]:
    """Apply one event line to the table; returns the move in words, the acting seat and the cards moved."""
    kind = e.get("event")
    if kind in ("round_start", "misdeal"):
        t.round = _int(e["round"], "round")
        hands = e["hands"]
        if not isinstance(hands, list) or len(hands) != 2:
            raise ViewerError("hands: expected two lists of card ids")
        t.hands = [set(_cards(hands[0], "hands")), set(_cards(hands[1], "hands"))]
        t.field = set(_cards(e["field"], "field"))
        t.stock = _cards(e["stock"], "stock")
        t.captured, t.calls, t.drawn = [set(), set()], [0, 0], None
        if kind == "misdeal":
            return f"Round {t.round}: misdeal ({str(e['reason'])[:40]}); the cards are dealt again.", None, []
        t.dealer = _seat(e["dealer"])
        lead = _seat(e["leader"])
        return f"Round {t.round} dealt: {t.who(t.dealer)} deals, {t.who(lead)} plays first.", None, []
    if kind == "match_end":
        t.scores = _pair(e["scores"])
        w = e["winner"]
        a, b = t.scores
        if w is None:
            return f"Match over: a draw, {a}–{b} ({str(e['reason'])[:20]}).", None, []
        return f"Match over: {t.who(_seat(w))} wins, {a}–{b} ({str(e['reason'])[:20]}).", _seat(w), []
    if kind == "round_end":
        t.scores = _pair(e["scores"])
        w, pts, why = e["winner"], _int(e["points"], "points"), str(e["reason"])[:20]
        if w is None:
            return f"Round {t.round} ends: nobody scores ({why}).", None, []
        return f"Round {t.round} ends: {t.who(_seat(w))} scores {_points(pts)} ({why}).", _seat(w), []
    seat = _seat(e["seat"])
    me = t.names[seat]
    if kind == "play":
        c, took = _card(e["card"], "card"), _cards(e["captured"], "captured")
        _take(t, seat, c, took, t.hands[seat])
        rest = [x for x in took if x != c]
        if rest:
            return f"{me} plays {card_name(c)} and captures {_list(rest)}.", seat, [c, *rest]
        return f"{me} plays {card_name(c)} to the field (no match).", seat, [c]
    if kind == "draw":
        if not t.stock:
            raise ViewerError("a draw from an empty stock")
        c, took = _card(e["card"], "card"), _cards(e["captured"], "captured")
        if t.stock[0] != c:
            raise ViewerError(f"drew {C.CARD_IDS[c]} but the stock's next card is {C.CARD_IDS[t.stock[0]]}")
        t.stock.pop(0)
        if e.get("choice") is True:
            t.drawn = c
            return f"{me} draws {card_name(c)}: it matches two field cards, a choice is due.", seat, [c]
        _take(t, seat, c, took, None)
        rest = [x for x in took if x != c]
        if rest:
            return f"{me} draws {card_name(c)} and captures {_list(rest)}.", seat, [c, *rest]
        return f"{me} draws {card_name(c)}; it stays on the field.", seat, [c]
    if kind == "draw_capture":
        c, took = _card(e["card"], "card"), _cards(e["captured"], "captured")
        if t.drawn != c:
            raise ViewerError(f"a capture choice for {C.CARD_IDS[c]}, which is not the drawn card")
        t.drawn = None
        _take(t, seat, c, took, None)
        rest = [x for x in took if x != c]
        return f"{me} takes {_list(rest)} with the drawn {card_name(c)}.", seat, [c, *rest]
    if kind == "yaku":
        names = ", ".join(yaku_title(str(n)[:40]) for n in e["yaku"])
        last = " on the last turn" if e.get("last_turn") else ""
        return f"{me} makes {names}{last}: {_points(e['points'])}.", seat, []
    if kind == "koikoi":
        if e["koikoi"] is True:
            t.calls[seat] = _int(e["calls"], "calls")
            return f"{me} calls koi-koi (call {t.calls[seat]}) and plays on.", seat, []
        return f"{me} stops.", seat, []
    if kind == "hand_yaku":
        name = yaku_title(str(e["name"])[:40])
        return f"{me} shows a hand yaku: {name}, {_points(e['points'])}.", seat, []
    raise ViewerError(f"unknown event {str(kind)[:40]!r}")


def _points(value: Any) -> str:
    n = _int(value, "points")
    return f"{n} point" if n == 1 else f"{n} points"


def _list(cards: list[int]) -> str:
    return " and ".join(card_name(c) for c in cards)


def _names(lines: list[dict[str, Any]]) -> list[str]:
    names = ["seat 1", "seat 2"]
    header = lines[0]
    for line in lines:
        if line.get("type") in ("hello", "result"):
            entries = line.get("bots", []) if line.get("type") == "result" else [line]
            for b in entries if isinstance(entries, list) else []:
                if isinstance(b, dict) and b.get("seat") in (1, 2) and isinstance(b.get("name"), str):
                    names[b["seat"] - 1] = b["name"][:64] or names[b["seat"] - 1]
    if names == ["seat 1", "seat 2"] and isinstance(header.get("bots"), list):
        for b in header["bots"]:
            if isinstance(b, dict) and b.get("seat") in (1, 2) and isinstance(b.get("command"), str):
                names[b["seat"] - 1] = b["command"][:64]
    return names


def read_replay(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a replay file; :class:`ViewerError` if it is not a ``koikoi-replay/1`` file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ViewerError(f"{path}: cannot read: {exc}") from None
    lines: list[dict[str, Any]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            raise ViewerError(f"{path}:{n}: not a JSON line") from None
        if not isinstance(obj, dict):
            raise ViewerError(f"{path}:{n}: expected a JSON object")
        lines.append(obj)
    if not lines or lines[0].get("type") != "header" or lines[0].get("format") != REPLAY_FORMAT:
        raise ViewerError(f"{path}: not a {REPLAY_FORMAT} replay (the first line must be its header)")
    return lines


def build_steps(lines: list[dict[str, Any]], source: str = "replay") -> dict[str, Any]:
    """The page data of a replay's lines: match facts, the card table, one table snapshot per event line."""
    header = lines[0]
    if not isinstance(header.get("rules"), dict):
        raise ViewerError(f"{source}: header: no rules")
    try:
        rules = rules_from_dict(header["rules"], source="rules")
    except EngineError as exc:
        raise ViewerError(f"{source}: header: {exc}") from None
    names = _names(lines)
    t = _Table(rules, names, scores=[rules.starting_points, rules.starting_points])
    steps: list[dict[str, Any]] = []
    result: dict[str, Any] | None = None
    for n, line in enumerate(lines[1:], 2):
        kind = line.get("type")
        if kind == "result":
            result = line
            continue
        if kind != "event":
            continue
        if len(steps) >= MAX_STEPS:
            raise ViewerError(f"{source}: more than {MAX_STEPS} events")
        try:
            text, actor, marked = _apply(t, line)
        except ViewerError as exc:
            raise ViewerError(f"{source}: line {n}: {exc}") from None
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            what = str(line.get("event"))[:20]
            raise ViewerError(f"{source}: line {n}: malformed {what} event ({exc!r:.60})") from None
        steps.append(t.snapshot(text, actor, marked))
    if not steps:
        raise ViewerError(f"{source}: the replay holds no event")
    end = _ending(result, t)
    if end:
        steps.append(t.snapshot(end, None, []))
    return {
        "match": _match_facts(header, names, result, rules),
        "cards": card_table(),
        "steps": steps,
    }


def _ending(result: dict[str, Any] | None, t: _Table) -> str:
    if result is None:
        return "The replay ends here: it has no result line (a truncated replay)."
    forfeit = result.get("forfeit")
    if isinstance(forfeit, dict) and forfeit.get("seat") in (1, 2):
        why = str(forfeit.get("reason"))[:40]
        detail = str(forfeit.get("detail") or "")[:120]
        tail = f" ({detail})." if detail else "."
        return f"{t.who(forfeit['seat'] - 1)} forfeits the match: {why}{tail}"
    return ""


def _match_facts(
    header: dict[str, Any], names: list[str], result: dict[str, Any] | None, rules: Rules
) -> dict[str, Any]:
    res: dict[str, Any] | None = None
    if result is not None:
        scores = result.get("scores")
        winner = result.get("winner")
        res = {
            "winner": winner if winner in (1, 2) and not isinstance(winner, bool) else None,
            "scores": [s for s in scores[:2] if isinstance(s, int)] if isinstance(scores, list) else [],
            "reason": str(result.get("reason"))[:40],
        }
    return {
        "id": str(header.get("match_id", ""))[:80],
        "names": names,
        "rules": rules.name,
        "rounds": rules.rounds,
        "seed": header.get("seed") if isinstance(header.get("seed"), int) else None,
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


_JSON_ESCAPES = (
    ("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"),
)  # fmt: skip


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>``, ``&`` or line separator appears raw."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, esc in _JSON_ESCAPES:
        text = text.replace(raw, esc)
    return text


def _asset(name: str) -> str:
    return resources.files("referee").joinpath("replay", "assets", name).read_text(encoding="utf-8")


def _fill(template: str, values: dict[str, str]) -> str:
    """Replace ``@@NAME@@`` markers in one pass, so a value is never searched for further markers."""
    return re.sub(r"@@([A-Z]+)@@", lambda m: values[m.group(1)], template)


def render_html(data: dict[str, Any], *, seat: int | None = None) -> str:
    """The viewer page of :func:`build_steps` data; ``seat`` (1 or 2) opens it from that seat's side."""
    match = data["match"]
    title = f"{match['names'][0]} vs {match['names'][1]} — {match['id']}"
    return _fill(_asset("page.html"), {
        "TITLE": html.escape(title),
        "CSS": _asset("viewer.css"),
        "JS": _asset("viewer.js"),
        "DATA": embed_json(data),
        "SEAT": "all" if seat is None else str(seat),
    })  # fmt: skip


def write_html(replay: Path, out: Path, *, seat: int | None = None) -> dict[str, Any]:
    """Write the viewer page of the replay file ``replay`` to ``out``; returns the match facts."""
    data = build_steps(read_replay(replay), source=str(replay))
    try:
        out.write_text(render_html(data, seat=seat), encoding="utf-8")
    except OSError as exc:
        raise ViewerError(f"{out}: cannot write: {exc}") from None
    facts: dict[str, Any] = data["match"]
    return facts


def find_replays(folder: Path) -> list[Path]:
    """The replay files under ``folder`` (``*.jsonl`` whose first line is a replay header), sorted by path."""
    found: list[Path] = []
    for path in sorted(folder.rglob("*.jsonl")):
        try:
            with path.open("rb") as f:
                first = f.readline(1 << 20)
        except OSError:
            continue
        if b'"header"' in first and REPLAY_FORMAT.encode() in first:
            found.append(path)
    return found


def _row(cells: list[str], attrs: str) -> str:
    """A table row: ``cells[0]`` is the link target of ``cells[1]`` (none when empty); all text is escaped."""
    href, first, *rest = cells
    link = f'<a href="{html.escape(href)}">{html.escape(first)}</a>' if href else html.escape(first)
    return f"<tr {attrs}><td>{link}</td>" + "".join(f"<td>{html.escape(c)}</td>" for c in rest) + "</tr>"


def write_index(folder: Path) -> Path:
    """Write a page per replay under ``folder`` (next to it, as ``.html``) and ``folder/index.html``
    linking them.

    A replay that cannot be shown is listed with its error instead of a link.
    """
    if not folder.is_dir():
        raise ViewerError(f"{folder}: not a folder")
    rows: list[str] = []
    for replay in find_replays(folder):
        rel = replay.relative_to(folder).as_posix()
        page = replay.with_suffix(".html")
        try:
            m = write_html(replay, page)
        except ViewerError as exc:
            rows.append(_row(["", rel, "", "", f"cannot show: {exc}", "", ""], 'class="bad"'))
            continue
        res = m["result"]
        scores = "–".join(str(s) for s in res["scores"]) if res else ""
        href = quote(page.relative_to(folder).as_posix())
        cells = [href, m["id"] or rel, m["names"][0], m["names"][1], result_text(m), scores, m["rules"]]
        rows.append(_row(cells, f'data-match="{html.escape(m["id"])}"'))
    body = "\n".join(rows) or '<tr><td colspan="6">No replays found.</td></tr>'
    index = folder / "index.html"
    page_html = _fill(_asset("index.html"), {"TITLE": html.escape(f"Replays in {folder.name}"), "ROWS": body,
                                              "CSS": _asset("viewer.css")})  # fmt: skip
    try:
        index.write_text(page_html, encoding="utf-8")
    except OSError as exc:
        raise ViewerError(f"{index}: cannot write: {exc}") from None
    return index
