"""The records of a replay's lines: what :class:`~referee.replay.reader.ReplayReader` gives and, for the
handshake and the result, what :class:`~referee.replay.writer.ReplayWriter` takes (``to_json`` is the line as
written). Seats are engine seats 0/1 here, 1/2 in the lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referee.engine import Deal, Rules
from referee.records import Forfeit, MatchResult, Termination, TimeControl


@dataclass(frozen=True)
class Header:
    """The first line: what decides the match (rules, seed, deals, first dealer) and how it was played."""

    match_id: str
    created: str
    program: str
    protocol: str
    rules: Rules
    seed: int
    deals: tuple[Deal, ...]
    first_dealer: int | None  # engine seat 0/1, None: the rules decide
    commands: tuple[str, str]
    time: TimeControl
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # fields this version does not know


@dataclass(frozen=True)
class Hello:
    """A bot's handshake."""

    seat: int  # engine seat 0/1
    name: str
    version: str | None

    def to_json(self) -> dict[str, Any]:
        """The line as written (seat 1/2)."""
        return {"type": "hello", "seat": self.seat + 1, "name": self.name, "version": self.version}


@dataclass(frozen=True)
class EventLine:
    """An engine event with full information, as written (``data`` without ``type``): the re-simulation
    compares it with the engine's."""

    event: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Decision:
    """A decision: the legal actions offered and the one taken (wire forms), and how long the seat took."""

    seat: int
    id: int
    decision: str
    legal: tuple[Any, ...]
    action: Any
    ms: float


@dataclass(frozen=True)
class Result:
    """The last line: how the match ended."""

    winner: int | None
    scores: tuple[int, int]
    rounds: int
    reason: Termination
    forfeit: Forfeit | None
    names: tuple[str, str]

    @classmethod
    def of(cls, result: MatchResult) -> Result:
        """The result line of a match's result."""
        return cls(result.winner, result.scores, result.rounds, result.reason, result.forfeit, result.names)

    def to_json(self) -> dict[str, Any]:
        """The line as written (seats 1/2)."""
        return {
            "type": "result", "winner": None if self.winner is None else self.winner + 1,
            "scores": list(self.scores), "rounds": self.rounds, "reason": self.reason.value,
            "forfeit": None if self.forfeit is None else self.forfeit.to_json(),
            "bots": [{"seat": i + 1, "name": n} for i, n in enumerate(self.names)],
        }  # fmt: skip


Line = Header | Hello | EventLine | Decision | Result
"""Any replay line."""
