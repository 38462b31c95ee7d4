"""The standings' columns as text cells, shared by the terminal table and the home page: the leaderboard
(rank, name, games, W/D/L, score rate and Elo with 95% intervals, likelihood of superiority over the next bot)
and the per-bot statistics.
"""

from __future__ import annotations

from referee.tournament.ratings import TOO_FEW
from referee.tournament.records import BotRow


def _score_text(row: BotRow) -> str:
    est = row.estimate
    return f"{est.score * 100:.1f}% [{est.low * 100:.1f}, {est.high * 100:.1f}]" if est else "-"


def _rating_text(row: BotRow) -> str:
    return row.rating.text() if row.rating is not None else TOO_FEW


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def leaderboard_cells(rank: str, b: BotRow) -> list[str]:
    """One leaderboard line as text cells: rank (``2=`` for a shared one), name, games, W, D, L, score (95%),
    Elo (95%), LOS over the next bot."""
    los = "-" if b.los is None else f"{b.los * 100:.1f}%"
    return [rank, b.name, str(b.games), str(b.wins), str(b.draws), str(b.losses), _score_text(b),
            _rating_text(b), los]  # fmt: skip


LEADERBOARD_HEAD = ["#", "bot", "games", "W", "D", "L", "score (95%)", "Elo (95%)", "LOS next"]
"""The leaderboard's column headings (terminal and HTML)."""

STATS_HEAD = ["bot", "decisions", "mean ms", "p95 ms", "max ms", "min bank ms", "peak MiB", "forfeits"]
"""The per-bot statistics' column headings (terminal and HTML)."""


def stats_cells(b: BotRow) -> list[str]:
    """One per-bot statistics line as text cells (see :data:`STATS_HEAD`)."""
    s = b.stats
    forfeits = ", ".join(f"{f.value} {n}" for f, n in sorted(s.forfeits.items())) or "-"
    bank = "-" if s.bank_left_ms is None else f"{s.bank_left_ms:.0f}"
    peak = f"{s.peak_memory / (1 << 20):.1f}" if s.peak_memory else "-"
    return [b.name, str(s.decisions), _ms(s.mean_ms), _ms(s.p95_ms), _ms(s.max_ms if s.decisions else None),
            bank, peak, forfeits]  # fmt: skip
