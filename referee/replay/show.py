"""``replay show``: a replay as a readable play-by-play, in full or as one seat saw it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.engine import full_event, visible_event
from referee.replay.verify import _NO_HEADER, ReplayError, VerifyReport, _Checker, _short, _Step, _steps
from referee.text import scores_text


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
            hidden = f"  opponent holds {e['opponent_hand_size']} cards; stock {e['stock_size']} cards"
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
        return [f"  {who} has yaku {', '.join(e['yaku'])}: {e['points']} points{last}"]
    if kind == "koikoi":
        return [f"  {who} calls koi-koi (call {e['calls']})" if e["koikoi"] else f"  {who} stops"]
    if kind == "hand_yaku":
        return [f"  {who} shows the hand yaku {e['name']}: {e['points']} points"]
    if kind == "round_end":
        yaku = ", ".join(f"{y['name']} {y['points']}" for y in e["yaku"])
        if e["winner"] is None:
            head = f"round {e['round']} ends: nobody scores ({e['reason']})"
        else:
            head = f"round {e['round']} ends: seat {e['winner']} scores {e['points']} ({e['reason']}"
            head += f": {yaku})" if yaku else ")"
        return [f"{head}; scores {scores_text(e['scores'])}"]
    if kind == "match_end":
        w = "a draw" if e["winner"] is None else f"seat {e['winner']} wins"
        return [f"match over after {e['rounds']} round(s) ({e['reason']}): {w}, {scores_text(e['scores'])}"]
    return [f"  {_short(e)}"]


def show(path: Path | str, seat: int | None = None) -> tuple[list[str], VerifyReport | None]:
    """A readable play-by-play of a replay, re-simulated with the engine; with ``seat`` (1 or 2), only what
    that
    seat saw (its own hand, never the opponent's hand or the stock order, built with ``visible_event``).

    Returns the text lines and, when the file does not verify (or is truncated), the report saying where.
    """
    if seat not in (None, 1, 2):
        raise ValueError("seat must be 1, 2 or None")
    path = Path(path)
    out: list[str] = []
    names = {1: "?", 2: "?"}
    checker: _Checker | None = None
    last = 0
    try:
        for n, step, error, checker in _steps(path):
            if error is not None:
                return out, VerifyReport(str(path), False, n - 1, checker.decisions, error_line=n, message=error)
            assert step is not None
            last = n
            out.extend(_render_step(step, seat, names))
    except ReplayError as exc:
        return out, VerifyReport(str(path), False, 0, 0, message=str(exc))
    if checker is None or checker.state is None:
        return out, VerifyReport(str(path), False, 0, 0, error_line=1, message=_NO_HEADER)
    if checker.result is None:
        decisions = checker.decisions
        return out, VerifyReport(str(path), False, last, decisions, truncated=True, message=f" ({decisions} decisions)")
    return out, None


def _render_step(step: _Step, seat: int | None, names: dict[int, str]) -> list[str]:
    line = step.line
    if step.kind == "header":
        rules = line["rules"]
        head = f"match {line.get('match_id')}: rules {rules.get('name')} ({rules.get('rounds')} rounds)"
        if seat is None:
            return [f"{head}, seed {line['seed']}"]
        return [f"{head}, as seat {seat} saw it"]
    if step.kind == "hello":
        names[line["seat"]] = str(line["name"])
        version = f" {line['version']}" if line.get("version") else ""
        return [f"seat {line['seat']}: {line['name']}{version}"]
    if step.kind == "event":
        assert step.event is not None
        shown = full_event(step.event) if seat is None else visible_event(step.event, seat - 1)
        return _render_event(shown, seat)
    if step.kind == "decision":
        if seat is not None and line["seat"] != seat:
            return []
        action = line["action"]
        choices = len(line["legal"])
        return [f"  seat {line['seat']} {line['decision']}: {_short(action)} (of {choices}, {line.get('ms')} ms)"]
    # result
    if line.get("reason") == "forfeit":
        f = line["forfeit"]
        return [f"result: seat {f['seat']} ({names.get(f['seat'])}) forfeits: {f['reason']}: {f.get('detail')}"]
    w = "a draw" if line.get("winner") is None else f"seat {line['winner']} ({names.get(line['winner'])}) wins"
    sc = line["scores"]
    return [f"result: {w}, {scores_text(sc)} after {line['rounds']} round(s) ({line['reason']})"]
