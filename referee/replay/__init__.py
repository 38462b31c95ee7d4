"""Replays ``koikoi-replay/1``: the writer, :func:`verify` (re-simulation with the engine) and :func:`show`.

A replay is JSON lines: a header, the bots' hellos, then every engine event (full information) and every
decision (written before the events it caused), and a result line. The writer flushes as the match goes, so a
referee killed mid-match leaves a valid prefix; :func:`verify` calls such a file truncated and says how long
its valid prefix is. No file content makes :func:`verify` or :func:`show` raise: problems are reported with a
line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from referee import __version__
from referee.engine import (
    Deal,
    Event,
    MatchEnd,
    State,
    apply,
    legal_actions,
    new_match,
    rules_from_dict,
    visible_event,
)
from referee.engine.views import DECISIONS
from referee.errors import RefereeError
from referee.protocol import action_json, event_json, full_event_json
from referee.text import scores_text

FORMAT = "koikoi-replay/1"
"""The format name in a replay's header."""
PROTOCOL = "koikoi/1"
FAILURES = frozenset(
    {
        "timeout",
        "crash",
        "invalid_json",
        "invalid_message",
        "illegal_action",
        "oversized_line",
        "protocol_mismatch",
        "quit",
    }
)

_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


class ReplayError(RefereeError):
    """A replay file cannot be read at all (missing, unreadable)."""


class ReplayWriter:
    """Writes one replay, line by line."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] | None = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def header(
        self,
        *,
        match_id: str,
        rules: dict[str, Any],
        seed: int,
        deals: list[dict[str, Any]],
        first_dealer: int | None,
        bots: list[dict[str, Any]],
        time: dict[str, int],
    ) -> None:
        """Write the header line (``first_dealer`` 1/2 or None)."""
        self.write({
            "type": "header", "format": FORMAT, "program": f"koikoi-referee {__version__}",
            "protocol": PROTOCOL,
            "match_id": match_id, "created": datetime.now(UTC).isoformat(timespec="seconds"), "rules": rules,
            "seed": seed, "deals": deals, "first_dealer": first_dealer, "bots": bots, "time": time,
        })  # fmt: skip
        self.flush()

    def write(self, obj: dict[str, Any]) -> None:
        """Write one line (flushed at the latest by the next :meth:`flush` or :meth:`close`)."""
        if self._file is not None:
            self._file.write(_dumps(obj) + "\n")

    def write_line(self, line: str) -> None:
        """Write one already-encoded JSON line (without its newline)."""
        if self._file is not None:
            self._file.write(line + "\n")

    def flush(self) -> None:
        """Push the lines written so far to the file."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush and close. Idempotent."""
        if self._file is not None:
            self._file.close()
            self._file = None


# ------------------------------------------------------------------------------------------------ verify


class _Mismatch(Exception):
    """The line disagrees with the engine or the format."""


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of :func:`verify`. ``lines``: the valid prefix (every line when ``ok``)."""

    path: str
    ok: bool
    lines: int
    decisions: int
    truncated: bool = False
    error_line: int | None = None
    message: str = ""
    result: dict[str, Any] | None = field(default=None, compare=False)

    def summary(self) -> str:
        """One line: ``PATH: ok ...``, ``PATH: truncated ...`` or ``PATH: line N: what differs``."""
        if self.ok:
            return f"{self.path}: ok ({self.lines} lines, {self.decisions} decisions, {self.message})"
        if self.truncated:
            head = f"{self.path}: truncated: no result line"
            return f"{head}; the first {self.lines} lines are valid{self.message}"
        where = f"line {self.error_line}: " if self.error_line else ""
        return f"{self.path}: {where}{self.message}"


def _diff(replay: Any, engine: Any, where: str = "") -> str:
    """The first difference between two JSON values, as text."""
    if isinstance(replay, dict) and isinstance(engine, dict):
        for key in list(engine) + [k for k in replay if k not in engine]:
            if key not in replay:
                return f"{where}{key}: missing (engine: {_short(engine[key])})"
            if key not in engine:
                return f"{where}{key}: unexpected field"
            if replay[key] != engine[key] or type(replay[key]) is not type(engine[key]):
                return _diff(replay[key], engine[key], f"{where}{key}.")
    where = where.rstrip(".") or "value"
    return f"{where}: replay has {_short(replay)}, engine has {_short(engine)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells true from 1."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass
class _Step:
    """One checked line: its kind, the line, and for an event the engine's event."""

    kind: str
    line: dict[str, Any]
    event: Event | None = None


class _Checker:
    """Re-simulates a replay line by line; :meth:`feed` raises :class:`_Mismatch` at the first
    disagreement."""

    def __init__(self) -> None:
        self.state: State | None = None
        self.pending: list[Event] = []
        self.hellos: set[int] = set()
        self.events_seen = 0
        self.decisions = 0
        self.result: dict[str, Any] | None = None
        self.header: dict[str, Any] = {}

    def feed(self, obj: dict[str, Any]) -> _Step:
        kind = obj.get("type")
        if self.result is not None:
            raise _Mismatch("a line after the result line")
        if self.state is None:
            if kind != "header":
                raise _Mismatch(f"expected the header line, got type {_short(kind)}")
            self._header(obj)
            return _Step("header", obj)
        if kind == "hello":
            seat = obj.get("seat")
            if self.events_seen or self.decisions:
                raise _Mismatch("a hello line after the match began")
            if seat not in (1, 2) or seat in self.hellos:
                raise _Mismatch(f"hello: bad or repeated seat {_short(seat)}")
            if not isinstance(obj.get("name"), str):
                raise _Mismatch("hello: name is not a string")
            self.hellos.add(seat)
            return _Step("hello", obj)
        if kind == "event":
            if not self.pending:
                raise _Mismatch(f"an event line where the engine has no event ({self._due()})")
            event = self.pending.pop(0)
            expected = {"type": "event", **full_event_json(event)}
            if not _same(obj, expected):
                raise _Mismatch(f"event differs from the engine: {_diff(obj, expected)}")
            self.events_seen += 1
            return _Step("event", obj, event)
        if kind == "decision":
            return self._decision(obj)
        if kind == "result":
            self._result(obj)
            return _Step("result", obj)
        raise _Mismatch(f"unknown line type {_short(kind)}")

    def _due(self) -> str:
        state = self.state
        assert state is not None
        if state.is_over:
            return "the match is over"
        return f"seat {state.to_move + 1} is to decide {DECISIONS[state.phase]}"

    def _header(self, h: dict[str, Any]) -> None:
        if h.get("format") != FORMAT:
            raise _Mismatch(f"header: format is {_short(h.get('format'))}, expected {FORMAT!r}")
        seed = h.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise _Mismatch(f"header: seed is not an integer: {_short(seed)}")
        raw_rules = h.get("rules")
        if not isinstance(raw_rules, dict):
            raise _Mismatch("header: rules is not an object")
        try:
            rules = rules_from_dict(dict(raw_rules), source="header rules")
        except Exception as exc:  # the engine's RulesError, or anything odd in the data
            raise _Mismatch(str(exc)) from None
        deals_raw = h.get("deals", [])
        if not isinstance(deals_raw, list) or not all(isinstance(d, dict) for d in deals_raw):
            raise _Mismatch("header: deals is not a list of deal objects")
        try:
            deals = [Deal.from_json(d) for d in deals_raw]
        except Exception as exc:
            raise _Mismatch(f"header: deals: {exc}") from None
        fd = h.get("first_dealer")
        if fd not in (None, 1, 2) or isinstance(fd, bool):
            raise _Mismatch(f"header: first_dealer must be 1, 2 or null, got {_short(fd)}")
        self.header = h
        self.state = new_match(rules, seed, deals, None if fd is None else fd - 1)
        self.pending = list(self.state.events)

    def _decision(self, d: dict[str, Any]) -> _Step:
        state = self.state
        assert state is not None
        if self.pending:
            raise _Mismatch(
                f"a decision line where the engine still has the event {_short(full_event_json(self.pending[0]))}"
            )
        if state.is_over:
            raise _Mismatch("a decision line after the end of the match")
        if d.get("seat") != state.to_move + 1:
            raise _Mismatch(
                f"decision: seat {_short(d.get('seat'))}, but seat {state.to_move + 1} is to move"
            )
        if d.get("decision") != DECISIONS[state.phase]:
            raise _Mismatch(
                f"decision: {_short(d.get('decision'))}, but the engine expects {DECISIONS[state.phase]}"
            )
        legal = legal_actions(state)
        wire = [action_json(a) for a in legal]
        if not _same(d.get("legal"), wire):
            raise _Mismatch(f"decision: legal actions differ from the engine: {_diff(d.get('legal'), wire)}")
        action = d.get("action")
        matches = [i for i, w in enumerate(wire) if _same(w, action)]
        if len(matches) != 1:
            raise _Mismatch(f"decision: action {_short(action)} is not one of the legal actions")
        self.state = apply(state, legal[matches[0]])
        self.pending = list(self.state.events)
        self.decisions += 1
        return _Step("decision", d)

    def _result(self, r: dict[str, Any]) -> None:
        state = self.state
        assert state is not None
        reason = r.get("reason")
        if reason == "forfeit":
            if state.is_over:
                raise _Mismatch("result: a forfeit after the end of the match")
            if self.pending and self.events_seen:
                raise _Mismatch(
                    f"result: the engine still has the event {_short(full_event_json(self.pending[0]))}"
                )
            f = r.get("forfeit")
            if not isinstance(f, dict) or f.get("seat") not in (1, 2) or f.get("reason") not in FAILURES:
                raise _Mismatch(f"result: bad forfeit {_short(f)}")
            if r.get("winner") not in (3 - f["seat"], None):
                raise _Mismatch(
                    f"result: winner {_short(r.get('winner'))} after a forfeit by seat {f['seat']}"
                )
            expected: dict[str, Any] = {"scores": list(state.scores), "rounds": state.round}
        else:
            if self.pending:
                raise _Mismatch(
                    f"result: the engine still has the event {_short(full_event_json(self.pending[0]))}"
                )
            if not state.is_over:
                raise _Mismatch(f"result line before the end of the match ({self._due()})")
            end = state.events[-1]
            assert isinstance(end, MatchEnd)
            expected = {
                "winner": None if state.winner is None else state.winner + 1, "scores": list(state.scores),
                "rounds": end.rounds, "reason": end.reason, "forfeit": None,
            }  # fmt: skip
        for key, value in expected.items():
            if not _same(r.get(key), value):
                raise _Mismatch(f"result: {key} is {_short(r.get(key))}, the engine says {_short(value)}")
        self.result = r


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        with open(path, "rb") as f:
            yield from enumerate(f, 1)
    except OSError as exc:
        raise ReplayError(f"cannot read: {exc.strerror or exc}") from None


def _steps(path: Path) -> Iterator[tuple[int, _Step | None, str | None, _Checker]]:
    """Checked lines: (line number, step or None, error or None, checker). A partial last line is
    truncation."""
    checker = _Checker()
    for n, raw in _lines(path):
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            if not raw.endswith(b"\n"):
                return  # a partial last line: the writer was stopped mid-line
            yield n, None, f"not a JSON line: {exc}", checker
            return
        if not isinstance(obj, dict):
            yield n, None, f"not a JSON object: {_short(obj)}", checker
            return
        try:
            step = checker.feed(obj)
        except _Mismatch as exc:
            yield n, None, str(exc), checker
            return
        except Exception as exc:  # never a stack trace for any file content
            yield n, None, f"cannot check this line: {type(exc).__name__}: {exc}", checker
            return
        yield n, step, None, checker


_NO_HEADER = "no header line (an empty file, or its first line is cut short)"


def verify(path: Path | str) -> VerifyReport:
    """Re-simulate a replay with the engine from its header and check every line.

    Checks each decision's legal set and action, each event line against the engine's ``full_event``, and the
    result. Reports the first disagreeing line; a file without a result line is truncated (with its valid
    prefix).
    """
    path = Path(path)
    checker: _Checker | None = None
    last = 0
    try:
        for n, step, error, checker in _steps(path):
            if error is not None:
                return VerifyReport(str(path), False, n - 1, checker.decisions, error_line=n, message=error)
            last = n
            del step
    except ReplayError as exc:
        return VerifyReport(str(path), False, 0, 0, message=str(exc))
    if checker is None or checker.state is None:
        return VerifyReport(str(path), False, 0, 0, error_line=1, message=_NO_HEADER)
    if checker.result is None:
        return VerifyReport(str(path), False, last, checker.decisions, truncated=True,
                            message=f" ({checker.decisions} decisions)")  # fmt: skip
    r = checker.result
    if r.get("reason") == "forfeit":
        f = r["forfeit"]
        text = f"seat {f['seat']} forfeits: {f['reason']}"
    elif r.get("winner") is None:
        text = f"draw {scores_text(r['scores'])}"
    else:
        text = f"seat {r['winner']} wins {scores_text(r['scores'])}"
    return VerifyReport(str(path), True, last, checker.decisions, message=text, result=r)


# -------------------------------------------------------------------------------------------------- show


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
        return [
            f"match over after {e['rounds']} round(s) ({e['reason']}): {w}, {scores_text(e['scores'])}"
        ]
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
                return out, VerifyReport(
                    str(path), False, n - 1, checker.decisions, error_line=n, message=error
                )
            assert step is not None
            last = n
            out.extend(_render_step(step, seat, names))
    except ReplayError as exc:
        return out, VerifyReport(str(path), False, 0, 0, message=str(exc))
    if checker is None or checker.state is None:
        return out, VerifyReport(str(path), False, 0, 0, error_line=1, message=_NO_HEADER)
    if checker.result is None:
        decisions = checker.decisions
        return out, VerifyReport(
            str(path), False, last, decisions, truncated=True, message=f" ({decisions} decisions)"
        )
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
        shown = full_event_json(step.event) if seat is None else event_json(visible_event(step.event, seat - 1))
        return _render_event(shown, seat)
    if step.kind == "decision":
        if seat is not None and line["seat"] != seat:
            return []
        action = line["action"]
        choices = len(line["legal"])
        return [
            f"  seat {line['seat']} {line['decision']}: {_short(action)} (of {choices}, {line.get('ms')} ms)"
        ]
    # result
    if line.get("reason") == "forfeit":
        f = line["forfeit"]
        return [
            f"result: seat {f['seat']} ({names.get(f['seat'])}) forfeits: {f['reason']}: {f.get('detail')}"
        ]
    w = (
        "a draw"
        if line.get("winner") is None
        else f"seat {line['winner']} ({names.get(line['winner'])}) wins"
    )
    sc = line["scores"]
    return [f"result: {w}, {scores_text(sc)} after {line['rounds']} round(s) ({line['reason']})"]
