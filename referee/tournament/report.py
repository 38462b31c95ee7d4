"""The tournament report: a standings table for the terminal, and the same as JSON and CSV files.

``standings.json`` holds everything (bots, head-to-head pairings with pentanomial counts, every pair, the
SPRT); ``standings.csv`` one row per bot, ``pairs.csv`` one row per deal pair, ``matches.csv`` one row per
match. The rows' JSON and CSV forms are those of :mod:`referee.tournament.records`.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from referee.tournament.config import TournamentConfig
from referee.tournament.records import MATCH_FIELDS, PAIR_FIELDS, BotRow, Column, Record
from referee.tournament.standings import Standings
from referee.tournament.store import FORMAT, write_atomic

COLUMN_TITLES = {Column.CRASHES: "crash", Column.TIMEOUTS: "timeout", Column.INVALID: "invalid",
                 Column.ILLEGAL: "illegal"}  # fmt: skip
"""The terminal table's heading of each forfeit column."""


def report_meta(config: TournamentConfig, shard: tuple[int, int], scheduled: int, complete: bool) -> dict[str, Any]:
    """What ``standings.json`` says of the folder before the standings (the seed as a string: JavaScript readers
    round integers above 2**53)."""
    return {
        "format": FORMAT,
        "fingerprint": config.fingerprint(),
        "seed": str(config.seed),
        "sandbox": config.sandbox,
        "shard": list(shard),
        "scheduled": scheduled,
        "complete": complete,
    }


def to_json(st: Standings, meta: dict[str, Any]) -> dict[str, Any]:
    """The whole report as one JSON document; ``meta`` (fingerprint, seed, complete, ...) goes first."""
    return {
        **meta,
        "matches": st.matches,
        "standings": [b.to_json() for b in st.bots],
        "pairings": [p.to_json() for p in st.pairings],
        "sprt": st.sprt.to_json() if st.sprt else None,
        "pairs": [p.to_json() for p in st.pairs],
    }


def _elo_text(row: BotRow) -> str:
    est = row.estimate
    if est is None:
        return "-"
    elo, err = est.elo, est.elo_error
    if not math.isfinite(elo):
        return "+inf" if elo > 0 else "-inf"
    return f"{elo:+.0f} ± {err:.0f}" if math.isfinite(err) else f"{elo:+.0f} ± inf"


UNSANDBOXED = "the bots ran without a sandbox (--sandbox none): they could read and signal anything the referee can"


def table(st: Standings, sandbox: str = "bwrap") -> str:
    """The standings as a plain-text table (one bot a line, best first), with a last line when the bots ran
    without a sandbox."""
    head = ["#", "bot", "games", "W", "D", "L", "points", "score (95%)", "Elo", *COLUMN_TITLES.values()]
    rows = []
    for i, b in enumerate(st.bots, 1):
        est = b.estimate
        score = f"{est.score * 100:.1f}% [{est.low * 100:.1f}, {est.high * 100:.1f}]" if est else "-"
        counts = [str(b.failures[c]) for c in COLUMN_TITLES]
        rows.append([str(i), b.name, str(b.games), str(b.wins), str(b.draws), str(b.losses), f"{b.points:g}",
                     score, _elo_text(b), *counts])  # fmt: skip
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
    if sandbox == "none":
        out += f"\n{UNSANDBOXED}"
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
    write_atomic(root / "pairs.csv", _csv([p.csv_row() for p in st.pairs], PAIR_FIELDS))
    ordered = sorted(records, key=lambda r: r.spec.index)
    write_atomic(root / "matches.csv", _csv([r.csv_row() for r in ordered], MATCH_FIELDS))
