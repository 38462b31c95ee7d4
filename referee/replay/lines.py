"""The records of a replay's lines: what :class:`~referee.replay.reader.ReplayReader` gives and, for the
header, the handshakes and the result, what :class:`~referee.replay.writer.ReplayWriter` takes (``to_json`` is
the line as written). Seats are engine seats 0/1 here, 1/2 in the lines. A decision line is written from its
parts (:meth:`~referee.replay.writer.ReplayWriter.decision`, off the hot path's encoding)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from referee import PROTOCOL, __version__
from referee.engine import Deal, Rules
from referee.records import Forfeit, MatchResult, Termination, TimeControl

FORMAT = "koikoi-replay/1"
"""The format name in a replay's header."""


@dataclass(frozen=True)
class HeaderBot:
    """A seat's entry in the header: its command, its own time control when the seats' differ (a handicap), and
    ``extra`` fields as written (how a bot process was held: ``sandbox``, ``limits``, ``freezer``, ``filter``)."""

    command: str
    time: TimeControl | None = None  # None: the header's time control
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self, seat: int) -> dict[str, Any]:
        """The entry as written for engine seat ``seat`` (written 1/2)."""
        out: dict[str, Any] = {"seat": seat + 1, "command": self.command, **self.extra}
        if self.time is not None:
            out["time"] = self.time.to_json()
        return out


@dataclass(frozen=True)
class Header:
    """The first line: what decides the match (rules, seed, deals, first dealer) and how it was played.

    :meth:`new` makes the header of a match about to be played (created now, by this program)."""

    match_id: str
    created: str
    program: str
    protocol: str
    rules: Rules
    seed: int
    deals: tuple[Deal, ...]
    first_dealer: int | None  # engine seat 0/1, None: the rules decide
    bots: tuple[HeaderBot, HeaderBot]
    time: TimeControl
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # fields this version does not know

    @classmethod
    def new(
        cls, match_id: str, rules: Rules, seed: int, deals: tuple[Deal, ...], first_dealer: int | None,
        bots: tuple[HeaderBot, HeaderBot], time: TimeControl, extra: dict[str, Any] | None = None,
    ) -> Header:  # fmt: skip
        """The header of a match played now by this program (``first_dealer`` engine seat 0/1 or None).
        ``extra``: further fields (the seats' names in an event); readers keep those they do not know."""
        created = datetime.now(UTC).isoformat(timespec="seconds")
        return cls(match_id, created, f"koikoi-referee {__version__}", PROTOCOL, rules, seed, deals, first_dealer,
                   bots, time, extra or {})  # fmt: skip

    @property
    def commands(self) -> tuple[str, str]:
        """Each seat's command."""
        return self.bots[0].command, self.bots[1].command

    def to_json(self) -> dict[str, Any]:
        """The line as written (``extra`` fields first, seats 1/2)."""
        return {
            **self.extra,
            "type": "header", "format": FORMAT, "program": self.program, "protocol": self.protocol,
            "match_id": self.match_id, "created": self.created, "rules": self.rules.to_dict(), "seed": self.seed,
            "deals": [d.to_json() for d in self.deals],
            "first_dealer": None if self.first_dealer is None else self.first_dealer + 1,
            "bots": [b.to_json(i) for i, b in enumerate(self.bots)], "time": self.time.to_json(),
        }  # fmt: skip


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

    @property
    def winner_number(self) -> int | None:
        """The winner as seat 1 or 2 (as the line says it); None: a draw."""
        return None if self.winner is None else self.winner + 1

    def to_json(self) -> dict[str, Any]:
        """The line as written (seats 1/2)."""
        return {
            "type": "result", "winner": self.winner_number,
            "scores": list(self.scores), "rounds": self.rounds, "reason": self.reason.value,
            "forfeit": None if self.forfeit is None else self.forfeit.to_json(),
            "bots": [{"seat": i + 1, "name": n} for i, n in enumerate(self.names)],
        }  # fmt: skip


Line = Header | Hello | EventLine | Decision | Result
"""Any replay line."""
