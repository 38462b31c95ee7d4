"""The typed records that cross layers: a match's time control, how it ended, and its result.

One owner for each: the match produces a :class:`MatchResult`, the replay writer, the tournament store, the
standings and the command-line summaries read it, and :meth:`MatchResult.to_json` / :meth:`MatchResult.from_json`
are its only serialisation (seats 0/1 inside, 1/2 on the way out). The shape follows python-chess's
``Outcome`` and ``Termination``: an enum of how a match ended, an enum of the ways a seat can fail, and a record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Termination(StrEnum):
    """How a match ended."""

    ROUNDS = "rounds"
    """Every round was played."""
    BROKE = "broke"
    """A player ran out of points (rules with a starting stake)."""
    FORFEIT = "forfeit"
    """A seat broke the rules of the match (see :class:`Failure`)."""


class Failure(StrEnum):
    """The ways a seat can forfeit a match. Each is recorded in the result, the replay and the standings."""

    TIMEOUT = "timeout"
    """No answer within the move time plus the bank (or no hello within the start-up time)."""
    CRASH = "crash"
    """The process exited, closed its stdout, or could not be started."""
    INVALID_JSON = "invalid_json"
    """A line that is not JSON (or not UTF-8)."""
    INVALID_MESSAGE = "invalid_message"
    """JSON that is not a well-formed message answering the request (wrong shape, type or id)."""
    ILLEGAL_ACTION = "illegal_action"
    """A well-formed action that is not one of the legal ones."""
    OVERSIZED_LINE = "oversized_line"
    """A line over the cap."""
    PROTOCOL_MISMATCH = "protocol_mismatch"
    """The bot speaks another protocol version."""
    QUIT = "quit"
    """A human left the table."""


@dataclass(frozen=True)
class TimeControl:
    """The time control of a match, in milliseconds: start-up (the handshake), per move, and a bank per match
    from which time beyond ``move_ms`` is taken."""

    startup_ms: int = 10_000
    move_ms: int = 1_000
    bank_ms: int = 30_000

    def to_json(self) -> dict[str, int]:
        """The wire and replay form."""
        return {"startup_ms": self.startup_ms, "move_ms": self.move_ms, "bank_ms": self.bank_ms}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TimeControl:
        """The inverse of :meth:`to_json` (``ValueError`` for anything else)."""
        try:
            values = {k: data[k] for k in ("startup_ms", "move_ms", "bank_ms")}
        except (KeyError, TypeError):
            raise ValueError("a time control has startup_ms, move_ms and bank_ms") from None
        if any(type(v) is not int or v < 0 for v in values.values()):
            raise ValueError("time-control values are whole milliseconds, 0 or more")
        return cls(**values)


@dataclass(frozen=True)
class Forfeit:
    """A seat lost the match by breaking its rules. ``seat`` is the engine seat 0/1."""

    seat: int
    reason: Failure
    detail: str

    @property
    def seat_number(self) -> int:
        """The seat as users see it everywhere outside Python records: 1 or 2."""
        return self.seat + 1

    def to_json(self) -> dict[str, Any]:
        """The replay form (seat 1/2)."""
        return {"seat": self.seat_number, "reason": self.reason.value, "detail": self.detail}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Forfeit:
        """The inverse of :meth:`to_json` (``ValueError`` for anything else)."""
        seat, reason, detail = data.get("seat"), data.get("reason"), data.get("detail")
        if type(seat) is not int or seat not in (1, 2) or not isinstance(detail, str):
            raise ValueError("a forfeit has a seat 1 or 2 and a detail")
        try:
            failure = Failure(str(reason))
        except ValueError:
            raise ValueError(f"unknown forfeit reason {reason!r}") from None
        return cls(seat - 1, failure, detail)


@dataclass(frozen=True)
class MatchResult:
    """How a match ended. ``winner`` (like every seat of a Python record) is the engine seat 0/1, an index into
    ``names`` and ``scores``; :attr:`winner_number` is the same seat as 1/2, the numbering of :meth:`to_json`,
    replays, the protocol and the command line. ``round_ends`` holds the public ``round_end`` events in their
    JSON form, so their ``winner`` is 1/2."""

    match_id: str
    winner: int | None  # engine seat 0/1, None: draw (or both seats failed)
    scores: tuple[int, int]
    rounds: int
    reason: Termination
    forfeit: Forfeit | None
    names: tuple[str, str]
    seed: int
    decisions: int
    round_ends: tuple[dict[str, Any], ...] = field(default=(), compare=False)  # public round_end events

    @property
    def winner_number(self) -> int | None:
        """The winner as seat 1 or 2 (as JSON, replays and the command line say it); None: a draw."""
        return None if self.winner is None else self.winner + 1

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form with seats numbered 1 and 2 and the seed as a string (JavaScript readers round
        integers above 2**53)."""
        return {
            "match_id": self.match_id,
            "winner": self.winner_number,
            "scores": list(self.scores),
            "rounds": self.rounds,
            "reason": self.reason.value,
            "forfeit": None if self.forfeit is None else self.forfeit.to_json(),
            "names": list(self.names),
            "seed": str(self.seed),
            "decisions": self.decisions,
            "round_ends": list(self.round_ends),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchResult:
        """The inverse of :meth:`to_json` (``ValueError`` naming what is wrong for anything else). A seed given as
        an int is accepted too."""
        try:
            winner = data["winner"]
            scores = data["scores"]
            names = data["names"]
            seed = data["seed"]
            if winner is not None and (type(winner) is not int or winner not in (1, 2)):
                raise ValueError(f"bad winner {winner!r}")
            if not (isinstance(scores, list) and len(scores) == 2 and all(type(s) is int for s in scores)):
                raise ValueError("scores are two integers")
            if not (isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names)):
                raise ValueError("names are two strings")
            if isinstance(seed, str) and seed.isdigit():
                seed = int(seed)
            if type(seed) is not int:
                raise ValueError(f"bad seed {seed!r}")
            rounds, decisions, match_id = data["rounds"], data.get("decisions", 0), data["match_id"]
            if type(rounds) is not int or type(decisions) is not int or not isinstance(match_id, str):
                raise ValueError("match_id is a string, rounds and decisions are integers")
            forfeit = data.get("forfeit")
            round_ends = data.get("round_ends", [])
            if not isinstance(round_ends, list) or not all(isinstance(e, dict) for e in round_ends):
                raise ValueError("round_ends is a list of objects")
            return cls(
                match_id=match_id,
                winner=None if winner is None else winner - 1,
                scores=(scores[0], scores[1]),
                rounds=rounds,
                reason=Termination(data["reason"]),
                forfeit=None if forfeit is None else Forfeit.from_json(forfeit),
                names=(names[0], names[1]),
                seed=seed,
                decisions=decisions,
                round_ends=tuple(round_ends),
            )
        except KeyError as exc:
            raise ValueError(f"missing field {exc.args[0]!r}") from None
        except (TypeError, AttributeError) as exc:
            raise ValueError(f"malformed result: {exc}") from None
