"""The tournament report: a standings table for the terminal, and the same as JSON and CSV files.

``standings.json`` holds everything (bots, head-to-head pairings with pentanomial counts, every pair, the
SPRT); ``standings.csv`` one row per bot, ``pairs.csv`` one row per deal pair, ``matches.csv`` one row per
match.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from referee.tournament.standings import BotRow, Record, Standings
from referee.tournament.store import write_atomic


def _num(x: float, digits: int = 1) -> float | None:
    """A finite float rounded, or None (JSON has no infinity)."""
    return round(x, digits) if math.isfinite(x) else None


def bot_json(row: BotRow) -> dict[str, Any]:
    """One bot's standings entry."""
    est = row.estimate
    return {
        "name": row.name,
        "games": row.games,
        "wins": row.wins,
        "draws": row.draws,
        "losses": row.losses,
        "points": row.points,
        "score": round(est.score, 4) if est else None,
        "score_low": round(est.low, 4) if est else None,
        "score_high": round(est.high, 4) if est else None,
        "elo": _num(est.elo) if est else None,
        "elo_error": _num(est.elo_error) if est else None,
        "crashes": row.crashes,
        "timeouts": row.timeouts,
        "illegal": row.illegal,
    }


def to_json(st: Standings, meta: dict[str, Any]) -> dict[str, Any]:
    """The whole report as one JSON document; ``meta`` (fingerprint, seed, complete, ...) goes first."""
    return {
        **meta,
        "matches": st.matches,
        "standings": [bot_json(b) for b in st.bots],
        "pairings": [
            {
                "first": p.first,
                "second": p.second,
                "wins": p.wins,
                "draws": p.draws,
                "losses": p.losses,
                "pairs": len(p.pair_points),
                "pentanomial": p.pentanomial,
            }
            for p in st.pairings
        ],
        "sprt": st.sprt.to_json() if st.sprt else None,
        "pairs": st.pairs,
    }


def _elo_text(row: BotRow) -> str:
    est = row.estimate
    if est is None:
        return "-"
    elo, err = est.elo, est.elo_error
    if not math.isfinite(elo):
        return "+inf" if elo > 0 else "-inf"
    return f"{elo:+.0f} ± {err:.0f}" if math.isfinite(err) else f"{elo:+.0f} ± inf"


def table(st: Standings) -> str:
    """The standings as a plain-text table (one bot a line, best first)."""
    head = ["#", "bot", "games", "W", "D", "L", "points", "score (95%)", "Elo", "crash", "timeout", "illegal"]
    rows = []
    for i, b in enumerate(st.bots, 1):
        est = b.estimate
        score = f"{est.score * 100:.1f}% [{est.low * 100:.1f}, {est.high * 100:.1f}]" if est else "-"
        rows.append(
            [
                str(i),
                b.name,
                str(b.games),
                str(b.wins),
                str(b.draws),
                str(b.losses),
                f"{b.points:g}",
                score,
                _elo_text(b),
                str(b.crashes),
                str(b.timeouts),
                str(b.illegal),
            ]
        )
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    left = {1}
    lines = [
        "  ".join(cell.ljust(widths[c]) if c in left else cell.rjust(widths[c]) for c, cell in enumerate(r)).rstrip()
        for r in [head, *rows]
    ]
    out = "\n".join(lines)
    for p in st.pairings:
        if p.wins + p.draws + p.losses:
            ptn = " ".join(str(c) for c in p.pentanomial)
            out += (
                f"\n{p.first} vs {p.second}: +{p.wins} ={p.draws} -{p.losses}"
                f"  pairs {len(p.pair_points)}, pentanomial [{ptn}]"
            )
    if st.sprt:
        s = st.sprt
        out += f"\nSPRT: LLR {s.llr:.2f} ({s.lower:.2f}, {s.upper:.2f}) after {s.pairs} pairs: {s.state.value}"
    return out


def _csv(rows: list[dict[str, Any]], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fields, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def write_report(root: Path, st: Standings, records: list[Record], meta: dict[str, Any]) -> None:
    """Write standings.json, standings.csv, pairs.csv and matches.csv into ``root``."""
    doc = to_json(st, meta)
    write_atomic(root / "standings.json", json.dumps(doc, indent=1) + "\n")
    bots = doc["standings"]
    write_atomic(root / "standings.csv", _csv(bots, list(bots[0]) if bots else ["name"]))
    pair_rows = [
        {
            "pairing": p["pairing"],
            "pair": p["pair"],
            "first": p["first"],
            "second": p["second"],
            "first_points": p["first_points"],
            "second_points": p["second_points"],
            "complete": p["complete"],
            "match_a": p["games"].get("a", {}).get("match_id", ""),
            "match_b": p["games"].get("b", {}).get("match_id", ""),
        }
        for p in doc["pairs"]
    ]
    write_atomic(
        root / "pairs.csv",
        _csv(
            pair_rows,
            [
                "pairing",
                "pair",
                "first",
                "second",
                "first_points",
                "second_points",
                "complete",
                "match_a",
                "match_b",
            ],
        ),
    )
    match_rows = []
    for r in sorted(records, key=lambda r: r.spec.index):
        res = r.result
        forfeit = res.get("forfeit") or {}
        winner = res.get("winner")
        scores = res.get("scores") or [None, None]
        match_rows.append(
            {
                "match_id": r.spec.match_id,
                "seat1": r.spec.seats[0],
                "seat2": r.spec.seats[1],
                "seed": r.spec.seed,
                "first_dealer": r.spec.first_dealer + 1,
                "winner": r.spec.seats[int(winner) - 1] if winner else "",
                "score1": scores[0],
                "score2": scores[1],
                "rounds": res.get("rounds"),
                "reason": res.get("reason"),
                "forfeit_bot": r.spec.seats[int(forfeit["seat"]) - 1] if forfeit else "",
                "forfeit_reason": forfeit.get("reason", ""),
                "forfeit_detail": forfeit.get("detail", ""),
            }
        )
    fields = [
        "match_id",
        "seat1",
        "seat2",
        "seed",
        "first_dealer",
        "winner",
        "score1",
        "score2",
        "rounds",
        "reason",
        "forfeit_bot",
        "forfeit_reason",
        "forfeit_detail",
    ]
    write_atomic(root / "matches.csv", _csv(match_rows, fields))
