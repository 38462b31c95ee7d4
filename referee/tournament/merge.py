"""Merging shard folders of one tournament into one set of standings.

Every folder must describe the same tournament (equal fingerprints) and the same number of shards. A match
recorded in two folders is an error (the shards overlap); so is a shard without a folder, or a scheduled match
recorded nowhere (an unfinished shard: resume it first), unless a partial merge is asked for, which reports them
as missing. Each folder's results are checked against the key when there is one. The merged folder is written in
the store's own formats (:func:`~referee.tournament.folder.write_description`,
:class:`~referee.tournament.store.ResultLines`) and its report by
:func:`~referee.tournament.report.write_standings`. The folders' records are read one at a time, in schedule
order, each from the folder that recorded it: a merge holds the folders' pairings, not their matches.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from referee.tournament.config import TournamentError
from referee.tournament.folder import DESCRIPTION, RESULTS, atomic_text, existing_replay, write_description
from referee.tournament.gates import judge
from referee.tournament.ledger import GAMES, Ledger
from referee.tournament.records import MATCH_FIELDS, PairRow, Record
from referee.tournament.report import report_meta, table, write_standings
from referee.tournament.standings import Standings, Tally, pair_rows, sprt_stop_point
from referee.tournament.store import ResultLines, Store


@dataclass
class MergeResult:
    """The merged standings and what is missing."""

    standings: Standings
    table: str
    missing: list[str] = field(default_factory=list)  # match ids scheduled but recorded in no folder
    shards_seen: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # CI gates (the shards' --min-score, --fail-if-worse)
    merged: Merged | None = field(default=None, repr=False)  # the folders' records, read back on demand

    def pairs(self) -> list[PairRow]:
        """The merged pair list (read back from the folders: for a printed report)."""
        return [] if self.merged is None else list(self.merged.pair_rows())


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
    warnings: list[str] = []
    for s in stores:
        warnings.extend(w for w in s.warnings if w not in warnings)
    merged = Merged(dirs, stores, Ledger(base.config, (1, 1)))
    missing = merged.check()
    absent = [k for k in range(1, n + 1) if k not in seen]
    if absent and not partial:
        shown = ", ".join(f"{k}/{n}" for k in absent)
        raise TournamentError(f"shard(s) {shown} missing: give every shard's folder (or --partial to merge anyway)")
    if missing and not partial:
        raise TournamentError(
            f"{len(missing)} scheduled match(es) are in no folder (first: {missing[0]}): finish the shards with "
            "--resume (or --partial to merge anyway)"
        )
    tally = Tally(base.config)
    if out is None:
        for _ in tally.feed(merged.records()):
            pass
    else:
        _write(out, base, merged, tally, key)
    sprt = base.options.sprt
    st = tally.standings(sprt)
    gates = judge(base.config, base.options, st)
    result = MergeResult(st, table(st, base.config.sandbox, base.config.ponder), missing, sorted(seen), warnings, gates,
                         merged)  # fmt: skip
    if out is not None:
        try:
            stop = sprt_stop_point(base.config, merged.records(pairing=0), sprt) if sprt is not None else None
            meta = report_meta(base.config, (1, 1), len(merged.ledger), not missing, st, stop)
            write_standings(out, st, meta, merged.pair_rows())
        except OSError as exc:
            raise TournamentError(f"{out}: cannot write the merged tournament: {exc.strerror or exc}") from None
    return result


class Merged:
    """The records of several folders of one tournament read as one, in schedule order, one at a time: each
    match from the folder that recorded it (``ledger``: the whole schedule)."""

    def __init__(self, dirs: list[Path], stores: list[Store], ledger: Ledger) -> None:
        self.dirs = dirs
        self.stores = stores
        self.ledger = ledger

    def _holders(self, index: int, pairing: int, pair: int, game: int) -> list[int]:
        """The folders (by position) that recorded game ``game`` of the pair at schedule position ``index``."""
        return [k for k, s in enumerate(self.stores)
                if s.schedule.in_shard(index) and s.schedule.slot_offset(pairing, pair, game) >= 0]  # fmt: skip

    def check(self) -> list[str]:
        """The ids of the scheduled matches recorded in no folder; :class:`TournamentError` for a match recorded
        in two."""
        missing: list[str] = []
        for index, pairing, pair in self.ledger.pair_keys():
            for game in range(2):
                held = self._holders(index, pairing, pair, game)
                if len(held) > 1:
                    mid = self.ledger.match_id(pairing, pair, game)
                    both = f"{self.dirs[held[0]]} and {self.dirs[held[1]]}"
                    raise TournamentError(f"match {mid} is recorded in both {both}")
                if not held:
                    missing.append(self.ledger.match_id(pairing, pair, game))
        return missing

    def records(self, pairing: int | None = None) -> Iterator[Record]:
        """The recorded matches in schedule order (only those of ``pairing`` if given)."""
        return (rec for rec, _ in self.located(pairing))

    def located(self, pairing: int | None = None) -> Iterator[tuple[Record, Path]]:
        """The recorded matches in schedule order (only those of ``pairing`` if given), each with its folder."""
        with contextlib.ExitStack() as stack:
            readers = [stack.enter_context(s.reader()) for s in self.stores]
            for index, pg, pair in self.ledger.pair_keys():
                if pairing is None or pg == pairing:
                    for game in range(2):
                        for k in self._holders(index, pg, pair, game):
                            yield readers[k](self.stores[k].schedule.slot_offset(pg, pair, game)), self.dirs[k]

    def pair_rows(self) -> Iterator[PairRow]:
        """The pair list, by pairing then pair."""
        with contextlib.ExitStack() as stack:
            readers = [stack.enter_context(s.reader()) for s in self.stores]

            def games(pg: int, pair: int) -> dict[str, Record]:
                index = self.ledger.index_of(pg, pair)
                return {GAMES[g]: readers[k](self.stores[k].schedule.slot_offset(pg, pair, g))
                        for g in range(2) for k in self._holders(index, pg, pair, g)}  # fmt: skip

            ledger = self.ledger
            groups = (games(pg, pair) for pg in range(len(ledger.plist)) for pair in range(ledger.pairs_of(pg)))
            yield from pair_rows(ledger.config, (g for g in groups if g))


def _write(out: Path, base: Store, merged: Merged, tally: Tally, key: bytes | None) -> None:
    """Write the merged folder's description, results (signed under ``key``), replays, bot logs and
    ``matches.csv``, the records read once, counted in ``tally`` on the way."""
    if (out / DESCRIPTION).exists():
        raise TournamentError(f"{out} already holds a tournament; choose another -o")
    options = dataclasses.replace(base.options, jobs=1, shard=(1, 1), backend="local", ray_address=None,
                                  ray_working_dir=None, until_separated=False, max_pairs=None)  # fmt: skip
    try:
        (out / "replays").mkdir(parents=True, exist_ok=True)
        write_description(out, base.config, options, merged.ledger.values(), key)
        lines = ResultLines(key)
        used: dict[Path, None] = {}  # the folders with a record, in order
        with atomic_text(out / RESULTS) as results, atomic_text(out / "matches.csv") as matches:
            rows = csv.DictWriter(matches, MATCH_FIELDS, lineterminator="\n", extrasaction="ignore")
            rows.writeheader()
            for rec, origin in merged.located():
                used[origin] = None
                tally.add(rec)
                results.write(lines.of(rec))
                rows.writerow(rec.csv_row())
                src = existing_replay(origin, rec.spec.match_id)
                if src is not None:
                    shutil.copyfile(src, out / "replays" / src.name)
                    page = src.with_name(f"{rec.spec.match_id}.html")  # its viewer page goes with it
                    if page.is_file():
                        shutil.copyfile(page, out / "replays" / page.name)
        _copy_logs(list(used), out / "logs")
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
