"""The typed records that cross layers: a match's time control, how it ended, and its result.

One owner for each: the match produces a :class:`MatchResult`, the replay writer, the tournament store, the
standings and the command-line summaries read it, and :meth:`MatchResult.to_json` / :meth:`MatchResult.from_json`
are its only serialisation (seats 0/1 inside, 1/2 on the way out). The shape follows python-chess's
``Outcome`` and ``Termination``: an enum of how a match ended, an enum of the ways a seat can fail, and a record.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

_NUMBERS = (int, float)
_STR, _INT, _DICT = frozenset({str}), frozenset({int}), frozenset({dict})  # the types JSON gives, exactly


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


TIME_BUCKET_RATIO = 2**0.25
"""The ratio of one decision-time bucket's upper edge to its lower edge (19%)."""

TIME_BUCKET_START_MS = 0.05
"""The upper edge of the first decision-time bucket; bucket ``k`` holds times up to ``START * RATIO**k``."""


def time_bucket(ms: float) -> int:
    """The decision-time bucket of ``ms`` milliseconds (a fixed log scale, so summaries merge by adding): the
    first ``k`` with ``ms <= bucket_upper_ms(k)``."""
    if ms <= _BUCKET_EDGES[-1]:
        return bisect_left(_BUCKET_EDGES, ms)
    return max(0, math.ceil(math.log(ms / TIME_BUCKET_START_MS, TIME_BUCKET_RATIO) - 1e-9))


def bucket_upper_ms(k: int) -> float:
    """The upper edge of decision-time bucket ``k`` in milliseconds."""
    return TIME_BUCKET_START_MS * TIME_BUCKET_RATIO**k


_BUCKET_EDGES = tuple(bucket_upper_ms(k) for k in range(128))  # up to about two days, looked up by bisection


@dataclass(frozen=True)
class SeatStats:
    """What one seat did in a match: its decisions, their total and longest time, the time bank it had left at
    the end (the lowest, as the bank only shrinks), a histogram of its decision times (bucket -> count, see
    :func:`time_bucket`) and the peak memory of its processes (bytes, sampled; 0 when not measured)."""

    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    bank_left_ms: float | None = None  # None: the seat has no clock (a human)
    histogram: dict[int, int] = field(default_factory=dict)
    peak_memory: int = 0

    @classmethod
    def of_times(cls, times: list[float], bank_left_ms: float | None, peak_memory: int = 0) -> SeatStats:
        """The stats of a seat's decision ``times`` (ms)."""
        hist: dict[int, int] = {}
        for t in times:
            k = time_bucket(t)
            hist[k] = hist.get(k, 0) + 1
        bank = None if bank_left_ms is None else round(bank_left_ms, 3)  # as written: a result read back is equal
        return cls(len(times), round(sum(times), 3), round(max(times, default=0.0), 3), bank, hist, peak_memory)

    def to_json(self) -> dict[str, Any]:
        """The ``results.jsonl`` form (histogram keys as strings, JSON's only key type)."""
        return {
            "decisions": self.decisions,
            "total_ms": round(self.total_ms, 3),
            "max_ms": round(self.max_ms, 3),
            "bank_left_ms": None if self.bank_left_ms is None else round(self.bank_left_ms, 3),
            "histogram": {str(k): v for k, v in sorted(self.histogram.items())},
            "peak_memory": self.peak_memory,
        }

    @classmethod
    def from_json(cls, data: Any) -> SeatStats:
        """The inverse of :meth:`to_json` (``ValueError`` for anything else)."""
        if not isinstance(data, dict):
            raise ValueError("seat stats are an object")
        hist = data.get("histogram", {})
        numbers = [data.get(k, 0) for k in ("total_ms", "max_ms")]
        bank = data.get("bank_left_ms")
        if (
            type(data.get("decisions", 0)) is not int
            or type(data.get("peak_memory", 0)) is not int
            or type(numbers[0]) not in _NUMBERS
            or type(numbers[1]) not in _NUMBERS
            or not (bank is None or type(bank) in _NUMBERS)
            or type(hist) is not dict
            or not set(map(type, hist)) <= _STR
            or not all(map(str.isdigit, hist))
            or not set(map(type, hist.values())) <= _INT
        ):
            raise ValueError("malformed seat stats")
        return cls(data.get("decisions", 0), float(numbers[0]), float(numbers[1]),
                   None if bank is None else float(bank), dict(zip(map(int, hist), hist.values(), strict=True)),
                   data.get("peak_memory", 0))  # fmt: skip


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
    seat_stats: tuple[SeatStats, ...] = field(default=(), compare=False)  # per seat; () in older results

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
            **({"seat_stats": [s.to_json() for s in self.seat_stats]} if self.seat_stats else {}),
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
            if not isinstance(round_ends, list) or not set(map(type, round_ends)) <= _DICT:
                raise ValueError("round_ends is a list of objects")
            stats = data.get("seat_stats", [])
            if not isinstance(stats, list) or len(stats) not in (0, 2):
                raise ValueError("seat_stats is a list of two objects")
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
                seat_stats=tuple(SeatStats.from_json(x) for x in stats),
            )
        except KeyError as exc:
            raise ValueError(f"missing field {exc.args[0]!r}") from None
        except (TypeError, AttributeError) as exc:
            raise ValueError(f"malformed result: {exc}") from None
