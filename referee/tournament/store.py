"""The results log of a tournament folder: an append-only ``results.jsonl`` of finished matches, and the
schedule as dealt now (:mod:`referee.tournament.folder` has the folder itself: its layout, lock and description).

A line is only counted when it is complete and parses; a torn last line (the referee killed mid-write) is cut
off on resume and its match is played again, so no match is lost and none is counted twice.

A running tournament holds the ids of its finished matches, not their records: the records stay on disk and
:meth:`Store.iter_records` reads them back when they are needed (the report at the end, a merge).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from referee.signing import Chain, SigningError
from referee.tournament.config import RunOptions, TournamentConfig, TournamentError
from referee.tournament.folder import (
    DESCRIPTION,
    KEY_HINT,
    NO_KEY,
    RESULTS,
    Output,
    lock_folder,
    read_description,
    replay_files,
    started,
    unlock_folder,
    write_atomic,
    write_description,
)
from referee.tournament.records import Extend, Record, Redeal
from referee.tournament.schedule import MatchSpec, build_schedule, next_index, pair_specs, pairings, redealt, shard_of


class Store:
    """A tournament's output folder: its description, the finished matches and the writer of new ones.

    ``key`` signs appended lines and checks those read; None: lines are neither signed nor checked.
    """

    def __init__(self, root: Path, config: TournamentConfig, options: RunOptions, key: bytes | None) -> None:
        self.root = root
        self.config = config
        self.options = options
        self.key = key
        self.schedule: dict[str, MatchSpec] = {m.match_id: m for m in shard_of(build_schedule(config), options.shard)}
        """The schedule slice of this folder by match id, in schedule order, each entry as dealt now."""
        self._done: set[str] = set()  # ids of the recorded matches (the schedule's own strings)
        self.redeals: dict[tuple[int, int], int] = {}  # (pairing, pair) -> deal number, for pairs dealt again
        self.extended = 0  # pairs added to the schedule by extend lines (--until-separated)
        self._chain = Chain(key)
        self._log: IO[str] | None = None
        self._lock: int | None = None
        self.warnings: list[str] = []

    @property
    def replays(self) -> Path:
        """The replay folder."""
        return self.root / "replays"

    @property
    def logs(self) -> Path:
        """The bot log folder."""
        return self.root / "logs"

    def output(self) -> Output:
        """Where and how this run's matches are written."""
        return Output(self.root, self.key, self.options.compress)

    def replay_path(self, spec: MatchSpec) -> Path:
        """Where the replay of ``spec`` goes (``.jsonl.gz`` when the run compresses its replays)."""
        return self.output().replay(spec.match_id)

    @property
    def done(self) -> int:
        """How many scheduled matches are recorded."""
        return len(self._done)

    def is_done(self, match_id: str) -> bool:
        """True when ``match_id`` has a recorded result (of its current deal)."""
        return match_id in self._done

    def iter_records(self) -> Iterator[Record]:
        """The recorded matches, read back from ``results.jsonl`` in file order: the first result of each match
        as dealt now (results of a deal dealt afresh since, and repeated results, are skipped). The file was
        checked when the store was opened; lines appended since are this run's."""
        seen: set[str] = set()
        try:
            f = open(self.root / RESULTS, "rb")  # noqa: SIM115 - closed below, also when the consumer stops early
        except FileNotFoundError:
            return
        with f:
            for line in f:
                if not line.endswith(b"\n") or not line.strip():
                    continue
                obj = json.loads(line)
                if "redeal" in obj or "extend" in obj:
                    continue
                mid = obj.get("match_id")
                spec = self.schedule.get(mid) if isinstance(mid, str) else None
                if spec is None or obj.get("deal", 0) != spec.deal or spec.match_id in seen:
                    continue
                seen.add(spec.match_id)
                yield Record.from_json(obj, self.schedule)

    def load_records(self) -> dict[str, Record]:
        """Every recorded match by id (:meth:`iter_records` kept in memory: for a merge)."""
        return {r.spec.match_id: r for r in self.iter_records()}

    @staticmethod
    def create(root: Path, config: TournamentConfig, options: RunOptions, key: bytes | None = None) -> Store:
        """A new tournament folder; refuses a folder that already holds a tournament."""
        if (root / DESCRIPTION).exists():
            raise TournamentError(f"{root} already holds a tournament; use --resume {root} or another --out")
        store = Store(root, config, options, key)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TournamentError(f"{root}: cannot write the tournament folder: {exc.strerror or exc}") from None
        store._lock = lock_folder(root)
        try:
            store.replays.mkdir(parents=True, exist_ok=True)
            store.logs.mkdir(parents=True, exist_ok=True)
            write_description(root, config, options, list(store.schedule.values()), key)
            (root / RESULTS).touch()
        except OSError as exc:
            store.close()
            raise TournamentError(f"{root}: cannot write the tournament folder: {exc.strerror or exc}") from None
        return store

    @staticmethod
    def open(root: Path, jobs: int = 1, key: bytes | None = None) -> Store:
        """An existing tournament folder, to play on: finished matches read back, a torn last line cut off,
        interrupted deal pairs dealt afresh."""
        store = Store._describe(root, jobs, key)
        store._lock = lock_folder(root)
        try:
            store.replays.mkdir(parents=True, exist_ok=True)
            store.logs.mkdir(parents=True, exist_ok=True)
            store.warnings = store.load_results(repair=True)
            store.redeal_interrupted()
        except OSError as exc:
            store.close()
            raise TournamentError(f"{root}: cannot resume in this folder: {exc.strerror or exc}") from None
        except TournamentError:
            store.close()
            raise
        return store

    @staticmethod
    def open_readonly(root: Path, key: bytes | None = None) -> Store:
        """An existing tournament folder, to read only (nothing is written)."""
        store = Store._describe(root, 1, key)
        store.warnings = store.load_results(repair=False)
        return store

    @staticmethod
    def _describe(root: Path, jobs: int, key: bytes | None) -> Store:
        description = read_description(root, key, jobs)
        return Store(root, description.config, description.options, key)

    def load_results(self, *, repair: bool = False) -> list[str]:
        """Read ``results.jsonl``; returns warnings; ``repair`` cuts a torn last line off. A line that does not
        parse or (with the key) does not check is a :class:`TournamentError` naming it."""
        path = self.root / RESULTS
        warnings: list[str] = [] if self.key is not None else [f"{path}: {NO_KEY}"]
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return warnings
        except OSError as exc:
            raise TournamentError(f"{path}: cannot read: {exc.strerror or exc}") from None
        good_end = 0
        pos = 0
        number = 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            if nl < 0:
                warnings.append(f"{path}: an incomplete last line was dropped; its match will be played again")
                break
            line = data[pos:nl]
            pos = nl + 1
            number += 1
            if line.strip():
                warnings.extend(self._read_line(line, f"{path} line {number}"))
            good_end = pos
        if repair and good_end < len(data):
            with open(path, "r+b") as f:
                f.truncate(good_end)
                f.flush()
                os.fsync(f.fileno())
        return warnings

    def _read_line(self, line: bytes, where: str) -> list[str]:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise TournamentError(f"{where}: not JSON") from None
        if not isinstance(obj, dict):
            raise TournamentError(f"{where}: not a JSON object")
        try:
            self._chain.check(obj, where)
        except SigningError as exc:
            raise TournamentError(f"{exc}{KEY_HINT}") from None
        try:
            if "redeal" in obj:
                self._apply_redeal(Redeal.from_json(obj))
                return []
            if "extend" in obj:
                self._apply_extend(Extend.from_json(obj))
                return []
            rec = Record.from_json(obj, self.schedule)
            if obj.get("deal", 0) != rec.spec.deal:
                raise ValueError(f"match {rec.spec.match_id}: deal {obj.get('deal', 0)!r} is not the current one")
        except ValueError as exc:
            raise TournamentError(f"{where}: {exc}") from None
        if rec.spec.match_id in self._done:
            return [f"{where}: match {rec.spec.match_id} is recorded twice; the first result counts"]
        self._done.add(rec.spec.match_id)
        return []

    def _apply_redeal(self, redeal: Redeal) -> None:
        """Deal pair (pairing, pair) afresh: its entries get the new deal, its earlier results stop counting."""
        members = self._members(redeal.pairing, redeal.pair)
        if not members:
            raise ValueError(f"pair {redeal.pair} of pairing {redeal.pairing} is not in this folder's schedule")
        if redeal.deal <= self.redeals.get((redeal.pairing, redeal.pair), 0):
            raise ValueError(f"deal {redeal.deal} of pair {redeal.pair} is not a new deal")
        self.redeals[(redeal.pairing, redeal.pair)] = redeal.deal
        for m in members:
            self.schedule[m.match_id] = redealt(self.config, m, redeal.deal)
            self._done.discard(m.match_id)

    def _apply_extend(self, extend: Extend) -> list[MatchSpec]:
        """Add pair ``extend.pair`` (the pairing's next one) of pairing ``extend.pairing`` to the schedule."""
        plist = pairings(self.config)
        if tuple(self.options.shard) != (1, 1) or not 0 <= extend.pairing < len(plist):
            raise ValueError(f"pairing {extend.pairing} cannot take a pair in this folder")
        used = {m.index for m in self.schedule.values()}
        if extend.pair != self.pairs_of(extend.pairing) or {extend.index, extend.index + 1} & used:
            raise ValueError(f"pair {extend.pair} of pairing {extend.pairing} is not the next pair of the schedule")
        specs = pair_specs(self.config, plist[extend.pairing], extend.pair, extend.index)
        for m in specs:
            self.schedule[m.match_id] = m
        self.extended += 1
        return specs

    def pairs_of(self, pairing: int) -> int:
        """How many pairs pairing ``pairing`` has in the schedule (its first ``config.pairs`` and those added)."""
        return len({m.pair for m in self.schedule.values() if m.pairing == pairing})

    def extend(self, chosen: list[int]) -> list[MatchSpec]:
        """Add the next pair of each pairing in ``chosen`` to the schedule: a signed ``extend`` line each, before
        any of its games is played; returns the new matches."""
        out: list[MatchSpec] = []
        for pairing in chosen:
            extend = Extend(pairing, self.pairs_of(pairing), next_index(list(self.schedule.values())))
            self._write_line(extend.to_json())
            out += self._apply_extend(extend)
        return out

    def restage(self, config: TournamentConfig, options: RunOptions) -> None:
        """Take on ``config`` (the same tournament with a ladder step more) and ``options``: ``tournament.json``
        rewritten atomically, signed under the same key, before any new match; the new pairings join the
        schedule, the recorded matches keep their ids, indices and results."""
        old = list(self.schedule.values())
        fresh = {m.match_id: m for m in build_schedule(config)}
        for m in old:
            if fresh.get(m.match_id, m).index != m.index:
                raise TournamentError(f"{m.match_id}: the ladder step would move it in the schedule")
            fresh[m.match_id] = m
        try:
            write_description(self.root, config, options, sorted(fresh.values(), key=lambda m: m.index), self.key)
        except OSError as exc:
            raise TournamentError(f"{self.root}: cannot write the tournament folder: {exc.strerror or exc}") from None
        self.config, self.options = config, options
        self.schedule = dict(sorted(fresh.items(), key=lambda kv: kv[1].index))

    def _members(self, pairing: int, pair: int) -> list[MatchSpec]:
        return [m for m in self.schedule.values() if (m.pairing, m.pair) == (pairing, pair)]

    def interrupted(self) -> list[tuple[int, int]]:
        """Deal pairs with a match that started (its replay exists, plain or compressed) but has no result."""
        found = {(m.pairing, m.pair) for m in self.pending() if started(self.root, m.match_id)}
        return sorted(found)

    def redeal_interrupted(self) -> list[tuple[int, int]]:
        """Deal every interrupted pair afresh (a signed ``redeal`` line each) and keep the replays of its old
        deal as ``ID.interrupted-N.jsonl``; returns the pairs."""
        pairs = self.interrupted()
        for pairing, pair in pairs:
            members = self._members(pairing, pair)
            for m in members:
                for old in replay_files(self.root, m.match_id):
                    if old.exists():
                        ext = old.name.removeprefix(m.match_id)
                        n = 1
                        while (kept := old.with_name(f"{m.match_id}.interrupted-{n}{ext}")).exists():
                            n += 1
                        os.rename(old, kept)
            redeal = Redeal(pairing, pair, self.redeals.get((pairing, pair), 0) + 1)
            self._write_line(redeal.to_json())
            self._apply_redeal(redeal)
            ids = " and ".join(m.match_id for m in members)
            self.warnings.append(f"{ids} interrupted: dealt afresh (the old replays are kept as *.interrupted-N)")
        return pairs

    def pending(self) -> list[MatchSpec]:
        """Scheduled matches without a recorded result, in schedule order."""
        return [m for m in self.schedule.values() if m.match_id not in self._done]

    def spec(self, match_id: str) -> MatchSpec:
        """The schedule entry of ``match_id`` as dealt now."""
        return self.schedule[match_id]

    def _write_line(self, obj: dict[str, Any]) -> None:
        if self._log is None:
            self._log = open(self.root / RESULTS, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._log.write(dumps_line(self._chain.sign(obj)) + "\n")
        self._log.flush()
        os.fsync(self._log.fileno())

    def append(self, rec: Record) -> Record:
        """Record a finished match: one signed line, flushed and fsynced before returning (only its id stays in
        memory)."""
        self._write_line(rec.to_json())
        self._done.add(self.schedule[rec.spec.match_id].match_id)
        return rec

    def close(self) -> None:
        """Close the log and release the folder."""
        if self._log is not None:
            with contextlib.suppress(OSError):  # a full disk: the lines were fsynced one by one already
                self._log.close()
            self._log = None
        if self._lock is not None:
            unlock_folder(self._lock)
            self._lock = None


def dumps_line(obj: dict[str, Any]) -> str:
    """One ``results.jsonl`` line (without its newline)."""
    return json.dumps(obj, separators=(",", ":"))


def write_results(root: Path, records: list[Record], key: bytes | None) -> None:
    """Write a whole ``results.jsonl`` atomically, signed under ``key``: a ``redeal`` line before the first
    result of each pair dealt again, then the results in schedule order."""
    chain = Chain(key)
    lines: list[str] = []
    seen: set[tuple[int, int]] = set()
    for rec in sorted(records, key=lambda r: r.spec.index):
        pair = (rec.spec.pairing, rec.spec.pair)
        if rec.spec.deal and pair not in seen:
            seen.add(pair)
            lines.append(dumps_line(chain.sign(Redeal(*pair, rec.spec.deal).to_json())))
        lines.append(dumps_line(chain.sign(rec.to_json())))
    write_atomic(root / RESULTS, "".join(line + "\n" for line in lines))
