"""The tournament's typed records and their one serialisation.

A :class:`Record` is one finished match as ``results.jsonl`` keeps it: its schedule entry
(:class:`~referee.tournament.schedule.MatchSpec`), the match's :class:`~referee.records.MatchResult`, whether it
was its pair's first- or second-played game, and where and when it was played (:class:`Played`). A
:class:`Redeal` line says that a deal pair was interrupted and is dealt afresh. :class:`BotRow`,
:class:`PairingRow` and :class:`PairRow` are the rows of the standings. Every JSON and CSV form of these
records is written here and nowhere else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from referee.records import Failure, MatchResult, SeatStats, bucket_upper_ms
from referee.tournament.asymmetry import Asymmetry, Differences
from referee.tournament.ratings import TOO_FEW, Rating
from referee.tournament.schedule import MatchSpec
from referee.tournament.stats import Estimate, estimate_of_sums, pentanomial


class Column(StrEnum):
    """The standings column that counts a forfeit."""

    CRASHES = "crashes"
    """The process exited, closed its output or could not start (or a human quit)."""
    TIMEOUTS = "timeouts"
    """No answer in time."""
    INVALID = "invalid"
    """A malformed answer: not JSON, not a well-formed message, an oversized line, another protocol."""
    ILLEGAL = "illegal"
    """A well-formed action that is not one of the legal ones."""


COLUMN_OF: dict[Failure, Column] = {
    Failure.CRASH: Column.CRASHES,
    Failure.QUIT: Column.CRASHES,
    Failure.TIMEOUT: Column.TIMEOUTS,
    Failure.INVALID_JSON: Column.INVALID,
    Failure.INVALID_MESSAGE: Column.INVALID,
    Failure.OVERSIZED_LINE: Column.INVALID,
    Failure.PROTOCOL_MISMATCH: Column.INVALID,
    Failure.ILLEGAL_ACTION: Column.ILLEGAL,
}
"""Where each failure is counted."""


@dataclass(frozen=True)
class Played:
    """Where and when a match was played: the worker (``host/pid``, see
    :func:`referee.tournament.runner.worker_name`), the worker's running count of matches (1 for its first), and
    the wall-clock start and end (seconds since the epoch)."""

    worker: str
    seq: int
    start: float
    end: float

    def to_json(self) -> dict[str, Any]:
        """The ``played`` object of a ``results.jsonl`` line (times to the millisecond)."""
        return {"worker": self.worker, "seq": self.seq, "start": round(self.start, 3), "end": round(self.end, 3)}

    @staticmethod
    def from_json(obj: Any) -> Played:
        """The inverse of :meth:`to_json` (``ValueError`` otherwise)."""
        if not isinstance(obj, dict):
            raise ValueError("played is an object")
        worker, seq, start, end = (obj.get(k) for k in ("worker", "seq", "start", "end"))
        times = [t for t in (start, end) if isinstance(t, int | float) and not isinstance(t, bool)]
        if not isinstance(worker, str) or type(seq) is not int or len(times) != 2:
            raise ValueError("played has a worker name, a whole seq and start and end times")
        return Played(worker, seq, float(times[0]), float(times[1]))


class Schedule(Protocol):
    """What a record is read against: the schedule entry of a match id as dealt now (a dict of them, or a
    :class:`~referee.tournament.ledger.Ledger`)."""

    def get(self, match_id: str, /) -> MatchSpec | None:
        """The entry of ``match_id`` (None: not scheduled)."""


@dataclass(frozen=True)
class Record:
    """One finished match: its schedule entry and its result (engine seats 0/1 inside), whether it was the first
    (1) or second (2) game of its pair to be played (None: not recorded, a folder of an older version), and where
    and when it was played (None: not recorded)."""

    spec: MatchSpec
    result: MatchResult
    played: Played | None = None
    order: int | None = None

    @staticmethod
    def of(spec: MatchSpec, result: MatchResult, played: Played) -> Record:
        """The record of a match just played as ``spec`` schedules it (in its pair's order)."""
        return Record(spec, result, played, spec.order)

    def margin_of(self, name: str) -> int:
        """The point margin of bot ``name`` (one of the two seats): its match score minus its opponent's."""
        i = self.spec.seats.index(name)
        return self.result.scores[i] - self.result.scores[1 - i]

    def points_of(self, name: str) -> float:
        """1, 1/2 or 0 for the bot ``name`` (one of the two seats)."""
        winner = self.result.winner
        if winner is None:
            return 0.5
        return 1.0 if self.spec.seats[winner] == name else 0.0

    @property
    def winner_name(self) -> str | None:
        """The winning bot, None for a draw."""
        return None if self.result.winner is None else self.spec.seats[self.result.winner]

    @property
    def offender(self) -> tuple[str, Failure] | None:
        """(bot name, failure) of a forfeit, or None."""
        forfeit = self.result.forfeit
        if forfeit is None:
            return None
        return self.spec.seats[forfeit.seat], forfeit.reason

    def to_json(self) -> dict[str, Any]:
        """The ``results.jsonl`` line (before its MAC)."""
        spec = self.spec
        line: dict[str, Any] = {"match_id": spec.match_id, "index": spec.index, "seats": list(spec.seats)}
        if spec.deal:
            line["deal"] = spec.deal
        if self.order is not None:
            line["order"] = self.order
        if self.played is not None:
            line["played"] = self.played.to_json()
        line["result"] = self.result.to_json()
        return line

    @staticmethod
    def from_json(obj: Any, by_id: Schedule) -> Record:
        """A ``results.jsonl`` line against the schedule ``by_id`` (match id to the entry as dealt now);
        ``ValueError`` naming what is wrong."""
        if not isinstance(obj, dict):
            raise ValueError("a result line is a JSON object")
        match_id = obj.get("match_id")
        spec = by_id.get(match_id) if isinstance(match_id, str) else None
        if spec is None:
            raise ValueError(f"match {match_id!r} is not in this folder's schedule")
        index = obj.get("index")
        if type(index) is not int or index != spec.index or obj.get("seats") != list(spec.seats):
            raise ValueError(f"match {match_id}: index or seats differ from the schedule")
        result_json = obj.get("result")
        if not isinstance(result_json, dict):
            raise ValueError(f"match {match_id}: no result object")
        result = MatchResult.from_json(result_json)
        if result.match_id != spec.match_id or result.seed != spec.seed:
            raise ValueError(f"match {match_id}: the result is of another match or deal")
        order = obj.get("order")
        if order is not None and (type(order) is not int or order not in (1, 2)):
            raise ValueError(f"match {match_id}: order is 1 or 2")
        played = Played.from_json(obj["played"]) if "played" in obj else None
        return Record(spec, result, played, order)

    def csv_row(self, twin_played: bool = True) -> dict[str, Any]:
        """The ``matches.csv`` row. Without ``twin_played`` (the other game of its pair still to be played, on
        the same deal) the row says nothing of the deal: no seed, first dealer or forfeit detail (which may name
        cards)."""
        spec, res = self.spec, self.result
        off = self.offender
        forfeit = res.forfeit
        return {
            "match_id": spec.match_id,
            "seat1": spec.seats[0],
            "seat2": spec.seats[1],
            "seed": spec.seed if twin_played else "",
            "first_dealer": spec.first_dealer + 1 if twin_played else "",
            "order": self.order or "",
            "winner": self.winner_name or "",
            "score1": res.scores[0],
            "score2": res.scores[1],
            "rounds": res.rounds,
            "reason": res.reason.value,
            "forfeit_bot": off[0] if off else "",
            "forfeit_reason": forfeit.reason.value if forfeit else "",
            "forfeit_detail": forfeit.detail if forfeit and twin_played else "",
        }


MATCH_FIELDS = [
    "match_id", "seat1", "seat2", "seed", "first_dealer", "order", "winner", "score1", "score2", "rounds", "reason",
    "forfeit_bot", "forfeit_reason", "forfeit_detail",
]  # fmt: skip
"""The columns of ``matches.csv``."""


@dataclass(frozen=True)
class Redeal:
    """A ``results.jsonl`` line: deal pair ``pair`` of pairing ``pairing`` was interrupted and is dealt again
    as deal number ``deal`` (1 for the first new deal); results of its earlier deals no longer count."""

    pairing: int
    pair: int
    deal: int

    def to_json(self) -> dict[str, Any]:
        """The line (before its MAC)."""
        return {"redeal": {"pairing": self.pairing, "pair": self.pair, "deal": self.deal}}

    @staticmethod
    def from_json(obj: Any) -> Redeal:
        """The inverse of :meth:`to_json` (``ValueError`` otherwise)."""
        body = obj.get("redeal") if isinstance(obj, dict) else None
        values = [body.get(k) for k in ("pairing", "pair", "deal")] if isinstance(body, dict) else []
        numbers = [v for v in values if type(v) is int and v >= 0]
        if len(numbers) != 3 or numbers[2] < 1:
            raise ValueError("a redeal line has whole numbers pairing, pair and deal (from 1)")
        return Redeal(*numbers)


@dataclass(frozen=True)
class Extend:
    """A ``results.jsonl`` line: pair ``pair`` of pairing ``pairing`` joins the schedule (``--until-separated``),
    its two games at schedule positions ``index`` and ``index + 1``."""

    pairing: int
    pair: int
    index: int

    def to_json(self) -> dict[str, Any]:
        """The line (before its MAC)."""
        return {"extend": {"pairing": self.pairing, "pair": self.pair, "index": self.index}}

    @staticmethod
    def from_json(obj: Any) -> Extend:
        """The inverse of :meth:`to_json` (``ValueError`` otherwise)."""
        body = obj.get("extend") if isinstance(obj, dict) else None
        values = [body.get(k) for k in ("pairing", "pair", "index")] if isinstance(body, dict) else []
        numbers = [v for v in values if type(v) is int and v >= 0]
        if len(numbers) != 3:
            raise ValueError("an extend line has whole numbers pairing, pair and index")
        return Extend(*numbers)


def _num(x: float, digits: int = 1) -> float | None:
    """A finite float rounded, or None (JSON has no infinity)."""
    return round(x, digits) if math.isfinite(x) else None


@dataclass
class BotStats:
    """Running per-bot statistics over its matches: decisions, decision times (a fixed log-scale histogram
    for the 95th percentile, so memory stays bounded), the lowest time bank left, peak memory, forfeits."""

    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    bank_left_ms: float | None = None  # the lowest at the end of a match; None: never measured
    histogram: dict[int, int] = field(default_factory=dict)
    peak_memory: int = 0  # bytes
    forfeits: dict[Failure, int] = field(default_factory=dict)

    def add(self, seat: SeatStats) -> None:
        """Fold in one match's stats of this bot's seat."""
        self.decisions += seat.decisions
        self.total_ms += seat.total_ms
        self.max_ms = max(self.max_ms, seat.max_ms)
        if seat.bank_left_ms is not None:
            low = self.bank_left_ms
            self.bank_left_ms = seat.bank_left_ms if low is None else min(low, seat.bank_left_ms)
        for k, v in seat.histogram.items():
            self.histogram[k] = self.histogram.get(k, 0) + v
        self.peak_memory = max(self.peak_memory, seat.peak_memory)

    @property
    def mean_ms(self) -> float | None:
        """The mean decision time."""
        return self.total_ms / self.decisions if self.decisions else None

    @property
    def p95_ms(self) -> float | None:
        """The 95th percentile of decision times: the upper edge of its histogram bucket (at most 19% above
        the true figure), never above the longest time."""
        n = sum(self.histogram.values())
        if n == 0:
            return None
        seen = 0
        for k in sorted(self.histogram):
            seen += self.histogram[k]
            if seen >= 0.95 * n:
                return min(bucket_upper_ms(k), self.max_ms)
        return self.max_ms  # pragma: no cover - the loop always reaches n

    def to_json(self) -> dict[str, Any]:
        """The statistics columns of a standings entry."""
        mean, p95 = self.mean_ms, self.p95_ms
        return {
            "decisions": self.decisions,
            "mean_ms": None if mean is None else round(mean, 2),
            "p95_ms": None if p95 is None else round(p95, 2),
            "max_ms": round(self.max_ms, 2),
            "min_bank_ms": None if self.bank_left_ms is None else round(self.bank_left_ms),
            "peak_memory_mb": round(self.peak_memory / (1 << 20), 1),
            "forfeits": {f.value: n for f, n in sorted(self.forfeits.items())},
        }


@dataclass
class BotRow:
    """One line of the standings table: results, pair scores (as running sums), the joint rating, the
    likelihood of superiority over the next bot, the statistics of its play, and the asymmetry test of its
    second-played against its first-played games (:mod:`referee.tournament.asymmetry`)."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    failures: dict[Column, int] = field(default_factory=lambda: dict.fromkeys(Column, 0))
    pairs: int = 0  # pair scores counted (complete pairs only)
    pair_sum: float = 0.0
    pair_squares: float = 0.0
    stats: BotStats = field(default_factory=BotStats)
    rating: Rating | None = None
    los: float | None = None  # likelihood of superiority over the next bot in the standings
    order_diffs: Differences = field(default_factory=Differences)  # second-played minus first-played margins
    asymmetry: Asymmetry | None = None  # the test on order_diffs, set with the standings

    @property
    def points(self) -> float:
        """Wins plus half the draws."""
        return self.wins + self.draws / 2

    def add_pair_score(self, score: float) -> None:
        """Count one pair score (the mean of this bot's points in the pair's games)."""
        self.pairs += 1
        self.pair_sum += score
        self.pair_squares += score * score

    @property
    def estimate(self) -> Estimate | None:
        """Score rate against its opponents, with its 95% interval, from its pair scores."""
        return estimate_of_sums(self.pairs, self.pair_sum, self.pair_squares)

    def to_json(self) -> dict[str, Any]:
        """The standings entry (``standings.csv`` flattens it, see :meth:`csv_row`)."""
        est = self.estimate
        r = self.rating
        enough = r is not None and r.enough
        return {
            "name": self.name,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "points": self.points,
            "score": round(est.score, 4) if est else None,
            "score_low": round(est.low, 4) if est else None,
            "score_high": round(est.high, 4) if est else None,
            "elo": _num(r.elo) if r and enough else None,
            "elo_error": _num(r.error) if r and enough else None,
            "elo_note": None if enough else TOO_FEW,
            "los": None if self.los is None else round(self.los, 4),
            **(self.asymmetry or self.order_diffs.test()).to_json(),
            **self.stats.to_json(),
            **{c.value: self.failures[c] for c in Column},
        }

    def csv_row(self) -> dict[str, Any]:
        """The ``standings.csv`` row: the entry with its forfeits by reason as ``reason:count`` words."""
        row = self.to_json()
        row["forfeits"] = " ".join(f"{k}:{v}" for k, v in row["forfeits"].items())
        return row


@dataclass
class PairingRow:
    """One pairing's head-to-head result from its first bot's side, per match and per complete pair."""

    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    pentanomial: list[int] = field(default_factory=lambda: [0] * 5)  # complete pairs by first's points 0..2

    def add_pair(self, points: float) -> None:
        """Count one complete pair in which the first bot made ``points`` (0 to 2)."""
        self.pentanomial[pentanomial([points]).index(1)] += 1

    @property
    def pairs(self) -> int:
        """Complete pairs counted."""
        return sum(self.pentanomial)

    @property
    def games(self) -> int:
        """Games played."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float | None:
        """The first bot's score rate over the games (None before any)."""
        return (self.wins + self.draws / 2) / self.games if self.games else None

    def to_json(self) -> dict[str, Any]:
        """The ``pairings`` entry of ``standings.json``."""
        return {
            "first": self.first,
            "second": self.second,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "pairs": self.pairs,
            "pentanomial": list(self.pentanomial),
        }


@dataclass(frozen=True)
class PairRow:
    """One deal pair, complete or not: its games and the points of each side."""

    pairing: str  # the pairing's key, first-vs-second
    pair: int
    first: str
    second: str
    games: dict[str, Record]  # by game letter

    @property
    def complete(self) -> bool:
        """Both games are played."""
        return len(self.games) == 2

    @property
    def first_points(self) -> float:
        """The first bot's points over the played games."""
        return sum(g.points_of(self.first) for g in self.games.values())

    @property
    def played_first(self) -> str | None:
        """The letter of the game played first, when its results say (None: older results without the order)."""
        return next((g for g, rec in sorted(self.games.items()) if rec.order == 1), None)

    def to_json(self) -> dict[str, Any]:
        """The ``pairs`` entry of ``standings.json``."""
        return {
            "pairing": self.pairing,
            "pair": self.pair,
            "first": self.first,
            "second": self.second,
            "complete": self.complete,
            "first_points": self.first_points,
            "second_points": len(self.games) - self.first_points,
            "played_first": self.played_first,
            "games": {
                g: {
                    "match_id": rec.spec.match_id,
                    "seats": list(rec.spec.seats),
                    "winner": rec.result.winner_number,
                    "scores": list(rec.result.scores),
                    "reason": rec.result.reason.value,
                    "order": rec.order,
                }
                for g, rec in sorted(self.games.items())
            },
        }

    def csv_row(self) -> dict[str, Any]:
        """The ``pairs.csv`` row."""
        a, b = self.games.get("a"), self.games.get("b")
        return {
            "pairing": self.pairing,
            "pair": self.pair,
            "first": self.first,
            "second": self.second,
            "first_points": self.first_points,
            "second_points": len(self.games) - self.first_points,
            "complete": self.complete,
            "played_first": self.played_first or "",
            "match_a": a.spec.match_id if a else "",
            "match_b": b.spec.match_id if b else "",
        }


PAIR_FIELDS = [
    "pairing", "pair", "first", "second", "first_points", "second_points", "complete", "played_first", "match_a",
    "match_b",
]  # fmt: skip
"""The columns of ``pairs.csv``."""
