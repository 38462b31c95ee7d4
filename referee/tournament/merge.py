"""Merging shard folders of one tournament into one set of standings.

Every folder must describe the same tournament (equal fingerprints) and the same number of shards. A match
recorded in two folders is an error (the shards overlap); scheduled matches recorded nowhere are reported as
missing.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from referee.tournament.config import RunOptions, TournamentError
from referee.tournament.report import table, write_report
from referee.tournament.schedule import MatchSpec, build_schedule
from referee.tournament.standings import Record, Standings, compute
from referee.tournament.store import DESCRIPTION, FORMAT, Store, write_atomic


@dataclass
class MergeResult:
    """The merged standings and what is missing."""

    standings: Standings
    table: str
    missing: list[str] = field(default_factory=list)  # match ids scheduled but recorded in no folder
    shards_seen: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # CI gates (the shards' --min-score, --fail-if-worse)


def merge(dirs: list[Path], out: Path | None = None) -> MergeResult:
    """Combine shard folders; with ``out``, write the merged report, results and replays there."""
    if not dirs:
        raise TournamentError("merge needs at least one tournament folder")
    stores: list[Store] = []
    for d in dirs:
        store = Store.open_readonly(d)
        stores.append(store)
    base = stores[0]
    fp = base.config.fingerprint()
    n = base.options.shard[1]
    for d, s in zip(dirs, stores, strict=True):
        if s.config.fingerprint() != fp:
            raise TournamentError(
                f"{d} is a different tournament (bots, rules, pairs, seed or time differ) from {dirs[0]}"
            )
        if s.options.shard[1] != n:
            raise TournamentError(f"{d} is shard {s.options.shard[0]}/{s.options.shard[1]}, expected one of N={n}")
    seen: dict[int, Path] = {}
    for d, s in zip(dirs, stores, strict=True):
        k = s.options.shard[0]
        if k in seen and n > 1:
            raise TournamentError(f"{d} and {seen[k]} are both shard {k}/{n}")
        seen[k] = d
    records: dict[str, Record] = {}
    origin: dict[str, Path] = {}
    warnings: list[str] = []
    for d, s in zip(dirs, stores, strict=True):
        for mid, rec in s.records.items():
            if mid in records:
                raise TournamentError(f"match {mid} is recorded in both {origin[mid]} and {d}")
            records[mid] = rec
            origin[mid] = d
        warnings.extend(s.warnings)
    schedule = build_schedule(base.config)
    missing = [m.match_id for m in schedule if m.match_id not in records]
    st = compute(base.config, list(records.values()), base.options.sprt)
    from referee.tournament.session import judge

    result = MergeResult(st, table(st), missing, sorted(seen), warnings, judge(base.config, base.options, st))
    if out is not None:
        _write(out, base, schedule, records, origin, st, not missing)
    return result


def _write(
    out: Path,
    base: Store,
    schedule: list[MatchSpec],
    records: dict[str, Record],
    origin: dict[str, Path],
    st: Standings,
    complete: bool,
) -> None:
    if (out / DESCRIPTION).exists():
        raise TournamentError(f"{out} already holds a tournament; choose another -o")
    (out / "replays").mkdir(parents=True, exist_ok=True)
    options = RunOptions(1, (1, 1), base.options.sprt, base.options.fail_if_worse, base.options.min_score)
    doc = {
        "format": FORMAT,
        "fingerprint": base.config.fingerprint(),
        "config": base.config.to_json(),
        "options": options.to_json(),
        "schedule": [m.to_json() for m in schedule],
    }
    write_atomic(out / DESCRIPTION, json.dumps(doc, indent=1) + "\n")
    ordered = sorted(records.values(), key=lambda r: r.spec.index)
    lines = [
        json.dumps(
            {
                "match_id": r.spec.match_id,
                "index": r.spec.index,
                "seats": list(r.spec.seats),
                "result": r.result,
            },
            separators=(",", ":"),
        )
        for r in ordered
    ]
    write_atomic(out / "results.jsonl", "".join(line + "\n" for line in lines))
    for r in ordered:
        src = origin[r.spec.match_id] / "replays" / f"{r.spec.match_id}.jsonl"
        if src.is_file():
            shutil.copyfile(src, out / "replays" / src.name)
    meta = {
        "format": FORMAT,
        "fingerprint": base.config.fingerprint(),
        "seed": base.config.seed,
        "shard": [1, 1],
        "scheduled": len(schedule),
        "complete": complete,
    }
    write_report(out, st, ordered, meta)
