"""Merging shard folders of one tournament into one set of standings.

Every folder must describe the same tournament (equal fingerprints) and the same number of shards. A match
recorded in two folders is an error (the shards overlap); so is a shard without a folder, or a scheduled match
recorded nowhere (an unfinished shard: resume it first), unless a partial merge is asked for, which reports them
as missing. Each folder's results are checked against the key when there is one. The merged folder is written in
the store's own formats (:func:`~referee.tournament.folder.write_description`,
:func:`~referee.tournament.store.write_results`) and its report by
:func:`~referee.tournament.report.write_report`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from referee.tournament.config import RunOptions, TournamentError
from referee.tournament.folder import DESCRIPTION, existing_replay, write_description
from referee.tournament.gates import judge
from referee.tournament.records import Record
from referee.tournament.report import report_meta, table, write_report
from referee.tournament.schedule import MatchSpec, build_schedule
from referee.tournament.standings import Standings, compute, sprt_stop_point
from referee.tournament.store import Store, write_results


@dataclass
class MergeResult:
    """The merged standings and what is missing."""

    standings: Standings
    table: str
    missing: list[str] = field(default_factory=list)  # match ids scheduled but recorded in no folder
    shards_seen: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # CI gates (the shards' --min-score, --fail-if-worse)


def merge(dirs: list[Path], out: Path | None = None, key: bytes | None = None, *, partial: bool = False) -> MergeResult:
    """Combine shard folders, checking their results against ``key`` (None: unchecked); with ``out``, write the
    merged description, results (signed under ``key``), replays, bot logs and report there. Missing shards or
    matches are a :class:`TournamentError` unless ``partial``."""
    if not dirs:
        raise TournamentError("merge needs at least one tournament folder")
    stores = [Store.open_readonly(d, key) for d in dirs]
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
        for mid, rec in s.load_records().items():
            if mid in records:
                raise TournamentError(f"match {mid} is recorded in both {origin[mid]} and {d}")
            records[mid] = rec
            origin[mid] = d
        warnings.extend(w for w in s.warnings if w not in warnings)
    schedule = build_schedule(base.config)
    missing = [m.match_id for m in schedule if m.match_id not in records]
    absent = [k for k in range(1, n + 1) if k not in seen]
    if absent and not partial:
        shown = ", ".join(f"{k}/{n}" for k in absent)
        raise TournamentError(f"shard(s) {shown} missing: give every shard's folder (or --partial to merge anyway)")
    if missing and not partial:
        raise TournamentError(
            f"{len(missing)} scheduled match(es) are in no folder (first: {missing[0]}): finish the shards with "
            "--resume (or --partial to merge anyway)"
        )
    st = compute(base.config, list(records.values()), base.options.sprt)
    gates = judge(base.config, base.options, st)
    result = MergeResult(st, table(st, base.config.sandbox, base.config.ponder), missing, sorted(seen), warnings, gates)
    if out is not None:
        _write(out, base, schedule, records, origin, st, not missing, key)
    return result


def _write(
    out: Path,
    base: Store,
    schedule: list[MatchSpec],
    records: dict[str, Record],
    origin: dict[str, Path],
    st: Standings,
    complete: bool,
    key: bytes | None,
) -> None:
    if (out / DESCRIPTION).exists():
        raise TournamentError(f"{out} already holds a tournament; choose another -o")
    options = RunOptions(
        1, (1, 1), base.options.sprt, base.options.fail_if_worse, base.options.min_score, compress=base.options.compress
    )
    ordered = sorted(records.values(), key=lambda r: r.spec.index)
    try:
        (out / "replays").mkdir(parents=True, exist_ok=True)
        write_description(out, base.config, options, schedule, key)
        write_results(out, ordered, key)
        for r in ordered:
            src = existing_replay(origin[r.spec.match_id], r.spec.match_id)
            if src is not None:
                shutil.copyfile(src, out / "replays" / src.name)
                page = src.with_name(f"{r.spec.match_id}.html")  # its viewer page goes with it
                if page.is_file():
                    shutil.copyfile(page, out / "replays" / page.name)
        _copy_logs([d for d in dict.fromkeys(origin.values())], out / "logs")
        sprt = base.options.sprt
        stop = sprt_stop_point(base.config, ordered, sprt) if sprt is not None else None
        write_report(out, st, ordered, report_meta(base.config, (1, 1), len(schedule), complete, st, stop))
    except OSError as exc:
        raise TournamentError(f"{out}: cannot write the merged tournament: {exc.strerror or exc}") from None


def _copy_logs(dirs: list[Path], target: Path) -> None:
    """Copy the bots' stderr logs of every shard folder into ``target`` (their names hold the match id)."""
    target.mkdir(parents=True, exist_ok=True)
    for d in dirs:
        logs = d / "logs"
        if logs.is_dir():
            for log in sorted(logs.iterdir()):
                if log.is_file() and not (target / log.name).exists():
                    shutil.copyfile(log, target / log.name)
