"""Re-simulation: a replay's records played through the engine, line by line.

:class:`Simulation` reads a file with the strict reader (:class:`referee.replay.reader.ReplayReader`), starts the
engine from the header, checks every event line against the ``full_event_json``, every decision's legal set
and action against ``legal_actions``, and the result against the final state. It yields one :class:`Step` per
line with the engine state after it, so verify, show and the HTML viewer all see the match as the engine plays
it, never as the file tells it. The first disagreement is a :class:`LineError` naming the line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.engine import Event, MatchEnd, RoundEnd, State, apply, legal_actions, new_match
from referee.engine.views import DECISIONS
from referee.protocol import action_json, event_json, full_event_json
from referee.records import MatchResult
from referee.replay.reader import Decision, EventLine, Header, Hello, Line, LineError, ReplayError, ReplayReader, Result
from referee.text import scores_text


@dataclass(frozen=True)
class Step:
    """One checked line: its number, its record, the engine event it matched (event lines), and the engine
    state after it."""

    line: int
    record: Line
    event: Event | None
    state: State


class _Mismatch(Exception):
    """The line disagrees with the engine."""


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells true from 1."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _diff(replay: Any, engine: Any, where: str = "") -> str:
    """The first difference between two JSON values, as text."""
    if isinstance(replay, dict) and isinstance(engine, dict):
        for key in list(engine) + [k for k in replay if k not in engine]:
            if key not in replay:
                return f"{where}{key}: missing (engine: {_short(engine[key])})"
            if key not in engine:
                return f"{where}{key}: unexpected field"
            if not _same(replay[key], engine[key]):
                return _diff(replay[key], engine[key], f"{where}{key}.")
    if isinstance(replay, list) and isinstance(engine, list):
        for i, (a, b) in enumerate(zip(replay, engine, strict=False)):
            if not _same(a, b):
                return _diff(a, b, f"{where.rstrip('.')}[{i}].")
        place, n = where.rstrip(".") or "value", min(len(replay), len(engine))
        first = f"first extra: {_short(replay[n])}" if len(replay) > n else f"first missing: {_short(engine[n])}"
        return f"{place}: replay has {len(replay)} items, engine {len(engine)}; {first}"
    where = where.rstrip(".") or "value"
    return f"{where}: replay has {_short(replay)}, engine has {_short(engine)}"


class Simulation:
    """A replay file re-simulated with the engine. Iterate :meth:`steps`; afterwards (or after an error) the
    attributes say how far it got: ``header``, ``state``, ``decisions``, ``lines`` (checked), ``result``, and
    ``cut_short`` (the last line was cut mid-line)."""

    def __init__(self, path: Path | str, key: bytes | None = None) -> None:
        self.path = Path(path)
        self._reader = ReplayReader(self.path, key)
        self.header: Header | None = None
        self.state: State | None = None
        self.names = ["?", "?"]
        self.decisions = 0
        self.result: Result | None = None
        self._pending: list[Event] = []
        self._hellos: set[int] = set()
        self._events_seen = 0

    @property
    def shown_names(self) -> list[str]:
        """The seats' names to show: the event's names when the header recorded them (a tournament's names for
        its bots), else :attr:`names` (the names the bots gave in ``hello``)."""
        given = self.header.extra.get("names") if self.header is not None else None
        if isinstance(given, list) and len(given) == 2 and all(isinstance(n, str) for n in given):
            return [given[0], given[1]]
        return self.names

    @property
    def lines(self) -> int:
        """The lines read and checked so far (every line of a file that verifies)."""
        return self._reader.lines

    @property
    def cut_short(self) -> bool:
        """True when the last line was cut mid-line (a referee killed while writing)."""
        return self._reader.cut_short

    def steps(self) -> Iterator[Step]:
        """The checked lines in order. Raises :class:`referee.replay.reader.ReplayError` (unreadable file) or
        :class:`LineError` (the first line that is malformed, disagrees with the engine, or fails its
        signature)."""
        for n, record in self._reader:
            try:
                event = self._feed(record)
            except _Mismatch as exc:
                raise LineError(n, str(exc)) from None
            except Exception as exc:  # never a stack trace for any file content
                raise LineError(n, f"cannot check this line: {type(exc).__name__}: {exc}") from None
            assert self.state is not None
            yield Step(n, record, event, self.state)

    def _feed(self, record: Line) -> Event | None:
        if self.result is not None:
            raise _Mismatch("a line after the result line")
        if isinstance(record, Header):
            self.header = record
            self.state = new_match(record.rules, record.seed, record.deals, record.first_dealer)
            self.names = list(record.commands)
            self._pending = list(self.state.events)
            return None
        state = self.state
        assert state is not None
        if isinstance(record, Hello):
            if self._events_seen or self.decisions:
                raise _Mismatch("a hello line after the match began")
            if record.seat in self._hellos:
                raise _Mismatch(f"hello: repeated seat {record.seat + 1}")
            self._hellos.add(record.seat)
            self.names[record.seat] = record.name
            return None
        if isinstance(record, EventLine):
            if not self._pending:
                raise _Mismatch(f"an event line where the engine has no event ({self._due()})")
            event = self._pending.pop(0)
            expected = full_event_json(event)
            if not _same(record.data, expected):
                raise _Mismatch(f"event differs from the engine: {_diff(record.data, expected)}")
            self._events_seen += 1
            return event
        if isinstance(record, Decision):
            self._decision(record)
            return None
        self._result(record)
        return None

    def _due(self) -> str:
        state = self.state
        assert state is not None
        if state.is_over:
            return "the match is over"
        return f"seat {state.to_move + 1} is to decide {DECISIONS[state.phase]}"

    def _decision(self, d: Decision) -> None:
        state = self.state
        assert state is not None
        if self._pending:
            raise _Mismatch(
                f"a decision line where the engine still has the event {_short(full_event_json(self._pending[0]))}"
            )
        if state.is_over:
            raise _Mismatch("a decision line after the end of the match")
        if d.seat != state.to_move:
            raise _Mismatch(f"decision: seat {d.seat + 1}, but seat {state.to_move + 1} is to move")
        if d.decision != DECISIONS[state.phase]:
            raise _Mismatch(f"decision: {d.decision}, but the engine expects {DECISIONS[state.phase]}")
        legal = legal_actions(state)
        wire = [action_json(a) for a in legal]
        if not _same(list(d.legal), wire):
            raise _Mismatch(f"decision: legal actions differ from the engine: {_diff(list(d.legal), wire)}")
        matches = [i for i, w in enumerate(wire) if _same(w, d.action)]
        if len(matches) != 1:
            raise _Mismatch(f"decision: action {_short(d.action)} is not one of the legal actions")
        self.state = apply(state, legal[matches[0]])
        self._pending = list(self.state.events)
        self.decisions += 1

    def _result(self, r: Result) -> None:
        state = self.state
        assert state is not None
        if r.forfeit is not None:
            if state.is_over:
                raise _Mismatch("result: a forfeit after the end of the match")
            if self._pending and self._events_seen:
                raise _Mismatch(f"result: the engine still has the event {_short(full_event_json(self._pending[0]))}")
            if r.winner not in (1 - r.forfeit.seat, None):
                raise _Mismatch(f"result: winner {r.winner + 1} after a forfeit by seat {r.forfeit.seat + 1}")
            expected: dict[str, Any] = {"scores": list(state.scores), "rounds": state.round}
            got: dict[str, Any] = {"scores": list(r.scores), "rounds": r.rounds}
        else:
            if self._pending:
                raise _Mismatch(f"result: the engine still has the event {_short(full_event_json(self._pending[0]))}")
            if not state.is_over:
                raise _Mismatch(f"result line before the end of the match ({self._due()})")
            end = state.events[-1]
            assert isinstance(end, MatchEnd)
            expected = {
                "winner": None if state.winner is None else state.winner + 1, "scores": list(state.scores),
                "rounds": end.rounds, "reason": end.reason,
            }  # fmt: skip
            got = {
                "winner": r.winner_number, "scores": list(r.scores),
                "rounds": r.rounds, "reason": r.reason.value,
            }  # fmt: skip
        for key, value in expected.items():
            if not _same(got[key], value):
                raise _Mismatch(f"result: {key} is {_short(got[key])}, the engine says {_short(value)}")
        self.result = r
        self.names = list(r.names)


def replayed_result(path: Path, key: bytes | None = None) -> tuple[Header, MatchResult] | None:
    """The result of the finished replay ``path`` as the referee recorded it (a
    :class:`~referee.records.MatchResult` without the seats' timing, which a replay does not hold) and its
    header; None unless the file re-simulates to its result line (with ``key``, every signature checking)."""
    sim = Simulation(path, key)
    round_ends: list[dict[str, Any]] = []
    try:
        for step in sim.steps():
            if isinstance(step.event, RoundEnd):
                round_ends.append(event_json(step.event))
    except (LineError, ReplayError):
        return None
    header, r = sim.header, sim.result
    if header is None or r is None:
        return None
    result = MatchResult(header.match_id, r.winner, r.scores, r.rounds, r.reason, r.forfeit, r.names, header.seed,
                         sim.decisions, tuple(round_ends))  # fmt: skip
    return header, result


def outcome_text(r: Result) -> str:
    """A result in a few words: ``seat 2 forfeits: timeout``, ``seat 1 wins 35-25``, ``draw 30-30``."""
    if r.forfeit is not None:
        return f"seat {r.forfeit.seat + 1} forfeits: {r.forfeit.reason.value}"
    if r.winner is None:
        return f"draw {scores_text(r.scores)}"
    return f"seat {r.winner + 1} wins {scores_text(r.scores)}"
