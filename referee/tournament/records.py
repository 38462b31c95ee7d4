"""The tournament's typed records and their one serialisation.

A :class:`Record` is one finished match as ``results.jsonl`` keeps it: its schedule entry
(:class:`~referee.tournament.schedule.MatchSpec`) and the match's :class:`~referee.records.MatchResult`. A
:class:`Redeal` line says that a deal pair was interrupted and is dealt afresh. :class:`BotRow`,
:class:`PairingRow` and :class:`PairRow` are the rows of the standings. Every JSON and CSV form of these
records is written here and nowhere else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from referee.records import Failure, MatchResult
from referee.tournament.schedule import MatchSpec
from referee.tournament.stats import Estimate, estimate, pentanomial


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
class Record:
    """One finished match: its schedule entry and its result (engine seats 0/1 inside)."""

    spec: MatchSpec
    result: MatchResult

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
        line["result"] = self.result.to_json()
        return line

    @staticmethod
    def from_json(obj: Any, by_id: dict[str, MatchSpec]) -> Record:
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
        return Record(spec, result)

    def csv_row(self) -> dict[str, Any]:
        """The ``matches.csv`` row."""
        spec, res = self.spec, self.result
        off = self.offender
        forfeit = res.forfeit
        return {
            "match_id": spec.match_id,
            "seat1": spec.seats[0],
            "seat2": spec.seats[1],
            "seed": spec.seed,
            "first_dealer": spec.first_dealer + 1,
            "winner": self.winner_name or "",
            "score1": res.scores[0],
            "score2": res.scores[1],
            "rounds": res.rounds,
            "reason": res.reason.value,
            "forfeit_bot": off[0] if off else "",
            "forfeit_reason": forfeit.reason.value if forfeit else "",
            "forfeit_detail": forfeit.detail if forfeit else "",
        }


MATCH_FIELDS = [
    "match_id", "seat1", "seat2", "seed", "first_dealer", "winner", "score1", "score2", "rounds", "reason",
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


def _num(x: float, digits: int = 1) -> float | None:
    """A finite float rounded, or None (JSON has no infinity)."""
    return round(x, digits) if math.isfinite(x) else None


@dataclass
class BotRow:
    """One line of the standings table."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    failures: dict[Column, int] = field(default_factory=lambda: dict.fromkeys(Column, 0))
    pair_scores: list[float] = field(default_factory=list)

    @property
    def points(self) -> float:
        """Wins plus half the draws."""
        return self.wins + self.draws / 2

    @property
    def estimate(self) -> Estimate | None:
        """Score rate and Elo difference against its opponents, from its pair scores."""
        return estimate(self.pair_scores)

    def to_json(self) -> dict[str, Any]:
        """The standings entry (also the ``standings.csv`` row)."""
        est = self.estimate
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
            "elo": _num(est.elo) if est else None,
            "elo_error": _num(est.elo_error) if est else None,
            **{c.value: self.failures[c] for c in Column},
        }


@dataclass
class PairingRow:
    """One pairing's head-to-head result from its first bot's side, per match and per pair."""

    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    pair_points: list[float] = field(default_factory=list)  # first bot's points in each complete pair (0..2)

    @property
    def pentanomial(self) -> list[int]:
        """Counts of complete pairs by the first bot's pair points 0, 1/2, 1, 3/2, 2."""
        return pentanomial(self.pair_points)

    def to_json(self) -> dict[str, Any]:
        """The ``pairings`` entry of ``standings.json``."""
        return {
            "first": self.first,
            "second": self.second,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "pairs": len(self.pair_points),
            "pentanomial": self.pentanomial,
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
            "games": {
                g: {
                    "match_id": rec.spec.match_id,
                    "seats": list(rec.spec.seats),
                    "winner": None if rec.result.winner is None else rec.result.winner + 1,
                    "scores": list(rec.result.scores),
                    "reason": rec.result.reason.value,
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
            "match_a": a.spec.match_id if a else "",
            "match_b": b.spec.match_id if b else "",
        }


PAIR_FIELDS = [
    "pairing", "pair", "first", "second", "first_points", "second_points", "complete", "match_a", "match_b",
]  # fmt: skip
"""The columns of ``pairs.csv``."""
