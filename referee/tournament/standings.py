"""Standings from finished matches: per bot, per pairing and per deal pair.

A :class:`Record` is one finished match as the progress log keeps it (the match result in its JSON form, seats
1/2, plus the schedule fields). Everything here is a pure function of a set of records, so a resumed, sharded
or merged tournament computes exactly the same standings as one uninterrupted run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from referee.tournament.config import Sprt, TournamentConfig
from referee.tournament.schedule import MatchSpec, pairings
from referee.tournament.stats import Estimate, SprtResult, estimate, pentanomial, sprt

CRASH_REASONS = frozenset({"crash"})
TIMEOUT_REASONS = frozenset({"timeout"})
"""Every other forfeit reason (illegal_action, invalid_json, invalid_message, oversized_line,
protocol_mismatch) counts as ``illegal``."""


@dataclass(frozen=True)
class Record:
    """One finished match: its schedule entry and the match result's JSON (seats 1/2)."""

    spec: MatchSpec
    result: dict[str, Any]

    def points_of(self, name: str) -> float:
        """1, 1/2 or 0 for the bot ``name`` (one of the two seats)."""
        winner = self.result.get("winner")
        if winner is None:
            return 0.5
        return 1.0 if self.spec.seats[int(winner) - 1] == name else 0.0

    @property
    def offender(self) -> tuple[str, str] | None:
        """(bot name, reason) of a forfeit, or None."""
        forfeit = self.result.get("forfeit")
        if not forfeit:
            return None
        return self.spec.seats[int(forfeit["seat"]) - 1], str(forfeit["reason"])


@dataclass
class BotRow:
    """One line of the standings table."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    crashes: int = 0
    timeouts: int = 0
    illegal: int = 0
    pair_scores: list[float] = field(default_factory=list)

    @property
    def points(self) -> float:
        """Wins plus half the draws."""
        return self.wins + self.draws / 2

    @property
    def estimate(self) -> Estimate | None:
        """Score rate and Elo difference against its opponents, from its pair scores."""
        return estimate(self.pair_scores)


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


@dataclass
class Standings:
    """The whole summary of a set of records."""

    bots: list[BotRow]
    pairings: list[PairingRow]
    pairs: list[dict[str, Any]]  # every complete or partial pair: its games and pair score
    matches: int
    sprt: SprtResult | None = None


def _group_pairs(records: Iterable[Record]) -> dict[tuple[int, int], dict[str, Record]]:
    groups: dict[tuple[int, int], dict[str, Record]] = {}
    for r in records:
        groups.setdefault((r.spec.pairing, r.spec.pair), {})[r.spec.game] = r
    return dict(sorted(groups.items()))


def _tally(row: BotRow | PairingRow, points: float) -> None:
    """Count one game's points (1, 0.5 or 0) as a win, a draw or a loss of ``row``."""
    if points == 1.0:
        row.wins += 1
    elif points == 0.5:
        row.draws += 1
    else:
        row.losses += 1


def compute(config: TournamentConfig, records: Iterable[Record], sprt_params: Sprt | None = None) -> Standings:
    """Standings, head-to-head rows, pair list and (for two bots) the SPRT of the first pairing."""
    recs = sorted(records, key=lambda r: r.spec.index)
    rows = {b.name: BotRow(b.name) for b in config.bots}
    plist = pairings(config)
    prow = [PairingRow(p.first, p.second) for p in plist]
    for r in recs:
        for name in r.spec.seats:
            row = rows[name]
            row.games += 1
            _tally(row, r.points_of(name))
        off = r.offender
        if off:
            who, reason = off
            if reason in CRASH_REASONS:
                rows[who].crashes += 1
            elif reason in TIMEOUT_REASONS:
                rows[who].timeouts += 1
            else:
                rows[who].illegal += 1
        pr = prow[r.spec.pairing]
        _tally(pr, r.points_of(pr.first))
    pair_list: list[dict[str, Any]] = []
    for (pairing, pair), games in _group_pairs(recs).items():
        p = plist[pairing]
        first_pts = sum(g.points_of(p.first) for g in games.values())
        n = len(games)
        rows[p.first].pair_scores.append(first_pts / n)
        rows[p.second].pair_scores.append(1 - first_pts / n)
        if n == 2:
            prow[pairing].pair_points.append(first_pts)
        pair_list.append(
            {
                "pairing": p.key,
                "pair": pair,
                "first": p.first,
                "second": p.second,
                "complete": n == 2,
                "first_points": first_pts,
                "second_points": n - first_pts,
                "games": {
                    g: {
                        "match_id": rec.spec.match_id,
                        "seats": list(rec.spec.seats),
                        "winner": rec.result.get("winner"),
                        "scores": rec.result.get("scores"),
                        "reason": rec.result.get("reason"),
                    }
                    for g, rec in sorted(games.items())
                },
            }
        )
    ordered = sorted(rows.values(), key=lambda b: (-_score(b), -b.points, b.name))
    result = Standings(ordered, prow, pair_list, len(recs))
    if sprt_params is not None and prow:
        s = sprt_params
        result.sprt = sprt(prow[0].pentanomial, s.elo0, s.elo1, s.alpha, s.beta)
    return result


def _score(row: BotRow) -> float:
    est = row.estimate
    return est.score if est else 0.0
