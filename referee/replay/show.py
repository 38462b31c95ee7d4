"""``replay show``: a replay as a readable play-by-play, in full or as one seat saw it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from referee.engine import visible_event
from referee.protocol import event_json, full_event_json
from referee.replay.reader import Decision, EventLine, Header, Hello, LineError, ReplayError, Result
from referee.replay.replayer import Simulation, Step
from referee.replay.safe import printable
from referee.replay.verify import VerifyReport, report_of
from referee.text import plural, scores_text, yaku_text


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def _cards(ids: list[str]) -> str:
    return " ".join(ids) if ids else "-"


def _render_event(e: dict[str, Any], seat: int | None) -> list[str]:
    kind = e.get("event")
    who = f"seat {e.get('seat')}"
    if kind == "round_start":
        out = [f"round {e['round']}: dealer seat {e['dealer']}, leader seat {e['leader']}"]
        if seat is None:
            out += [f"  hand 1: {_cards(e['hands'][0])}", f"  hand 2: {_cards(e['hands'][1])}",
                    f"  field:  {_cards(e['field'])}", f"  stock:  {_cards(e['stock'])}"]  # fmt: skip
        else:
            held, stock = plural(e["opponent_hand_size"], "card"), plural(e["stock_size"], "card")
            hidden = f"  opponent holds {held}; stock {stock}"
            out += [
                f"  your hand (seat {seat}): {_cards(e['hand'])}",
                f"  field: {_cards(e['field'])}",
                hidden,
            ]
        return out
    if kind == "misdeal":
        return [f"round {e['round']}: misdeal ({e['reason']}), field {_cards(e['field'])}; dealt again"]
    if kind == "play":
        tail = f"captures {_cards(e['captured'])}" if e["captured"] else "to the field"
        return [f"  {who} plays {e['card']}, {tail}"]
    if kind == "draw":
        if e["choice"]:
            tail = "matches two field cards: a choice"
        else:
            tail = f"captures {_cards(e['captured'])}" if e["captured"] else "to the field"
        return [f"  {who} draws {e['card']}, {tail}"]
    if kind == "draw_capture":
        return [f"  {who} takes {_cards(e['captured'])}"]
    if kind == "yaku":
        last = " (last turn)" if e["last_turn"] else ""
        return [f"  {who} has yaku {', '.join(e['yaku'])}: {plural(e['points'], 'point')}{last}"]
    if kind == "koikoi":
        return [f"  {who} calls koi-koi (call {e['calls']})" if e["koikoi"] else f"  {who} stops"]
    if kind == "hand_yaku":
        return [f"  {who} shows the hand yaku {e['name']}: {plural(e['points'], 'point')}"]
    if kind == "round_end":
        yaku = yaku_text(e)
        if e["winner"] is None:
            head = f"round {e['round']} ends: nobody scores ({e['reason']})"
        else:
            head = f"round {e['round']} ends: seat {e['winner']} scores {e['points']} ({e['reason']}"
            head += f": {yaku})" if yaku else ")"
        return [f"{head}; scores {scores_text(e['scores'])}"]
    if kind == "match_end":
        w = "a draw" if e["winner"] is None else f"seat {e['winner']} wins"
        return [f"match over after {plural(e['rounds'], 'round')} ({e['reason']}): {w}, {scores_text(e['scores'])}"]
    return [f"  {_short(e)}"]


def show(path: Path | str, seat: int | None = None, key: bytes | None = None) -> tuple[list[str], VerifyReport | None]:
    """A readable play-by-play of a replay, re-simulated with the engine; with ``seat`` (1 or 2), only what that
    seat saw (its own hand, never the opponent's hand, the stock order or the seed, built with ``visible_event``).

    Every line is :func:`printable`: nothing from the file (a bot name, a forfeit detail, a rules name) can send
    an escape sequence or a control character to the terminal. Returns the text lines and, when the file does
    not verify (or is truncated), the report saying where.
    """
    if seat not in (None, 1, 2):
        raise ValueError("seat must be 1, 2 or None")
    sim = Simulation(path, key)
    out: list[str] = []
    error: LineError | ReplayError | None = None
    greeted: set[int] = set()  # the seats whose hello line was shown, after the header's line
    try:
        for step in sim.steps():
            r = step.record
            if isinstance(r, Hello):
                greeted.add(r.seat)
            elif isinstance(r, Result):  # a seat that never said hello (a forfeit at hello) keeps its seat line
                for s in (0, 1):
                    if s not in greeted:
                        out.insert(1 + s, printable(f"seat {s + 1}: {sim.shown_names[s]} (no hello)"))
            out.extend(printable(line) for line in _render_step(step, seat, sim.shown_names))
    except (LineError, ReplayError) as exc:
        error = exc
    report = report_of(sim, error, key is not None)
    return out, None if report.ok else report


def _render_step(step: Step, seat: int | None, names: list[str]) -> list[str]:
    r = step.record
    if isinstance(r, Header):
        head = f"match {r.match_id}: rules {r.rules.name} ({plural(r.rules.rounds, 'round')})"
        if seat is None:
            return [f"{head}, seed {r.seed}"]
        return [f"{head}, as seat {seat} saw it"]
    if isinstance(r, Hello):
        version = f" {r.version}" if r.version else ""
        if names[r.seat] != r.name:  # a tournament's name for the bot first, then what it said in hello
            return [f"seat {r.seat + 1}: {names[r.seat]} (hello: {r.name}{version})"]
        return [f"seat {r.seat + 1}: {r.name}{version}"]
    if isinstance(r, EventLine):
        assert step.event is not None
        shown = full_event_json(step.event) if seat is None else event_json(visible_event(step.event, seat - 1))
        return _render_event(shown, seat)
    if isinstance(r, Decision):
        if seat is not None and r.seat != seat - 1:
            return []
        return [f"  seat {r.seat + 1} {r.decision}: {_short(r.action)} (of {len(r.legal)}, {r.ms:g} ms)"]
    f = r.forfeit
    if f is not None:  # a seat's view leaves the detail out: it may name the forfeiting seat's cards (as the pages)
        detail = "" if seat is not None else f": {f.detail}"
        return [f"result: seat {f.seat + 1} ({names[f.seat]}) forfeits: {f.reason.value}{detail}"]
    w = "a draw" if r.winner is None else f"seat {r.winner + 1} ({names[r.winner]}) wins"
    return [f"result: {w}, {scores_text(r.scores)} after {plural(r.rounds, 'round')} ({r.reason.value})"]
