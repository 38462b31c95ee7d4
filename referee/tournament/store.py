"""The results log of a tournament folder: an append-only ``results.jsonl`` of finished matches, and the
schedule as dealt now (:mod:`referee.tournament.folder` has the folder itself: its layout, lock and description).

A line is only counted when it is complete and parses; a torn last line (the referee killed mid-write) is cut
off on resume and its match is played again, so no match is lost and none is counted twice.

A tournament holds neither its schedule nor its records: the schedule is dealt on demand and the finished
matches are the byte offsets of their lines (:class:`~referee.tournament.ledger.Ledger`); the records stay on disk
and are read back one at a time when needed (:meth:`Store.iter_records` in the order they finished,
:meth:`Store.records_in_order` in schedule order, :meth:`Store.reader` at an offset), so the memory of a folder
grows with its pairings, not with its matches.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from referee.replay.replayer import replayed_result
from referee.signing import Chain, SigningError
from referee.tournament import checkpoint
from referee.tournament.collected import Collected
from referee.tournament.config import RunOptions, SignatureError, TournamentConfig, TournamentError
from referee.tournament.document import read_fields
from referee.tournament.folder import (
    DESCRIPTION,
    KEY_HINT,
    NO_KEY,
    REPLAYS,
    RESULTS,
    Output,
    atomic_text,
    description_of,
    existing_replay,
    kept_replay,
    lock_folder,
    read_description,
    replay_files,
    started,
    unlock_folder,
    write_description,
)
from referee.tournament.ledger import GAMES, Ledger, LedgerState
from referee.tournament.records import Extend, Record, Redeal
from referee.tournament.report import scratch
from referee.tournament.schedule import MatchSpec, check_size

CHECKPOINT_EVERY_S = 600.0
"""How often a playing store writes its checkpoint as results come, besides when it closes: a run killed after
days resumes from at most this much before (writing one took 0.5 s of CPU at 600,000 results, a 283 MB file)."""


@dataclass
class Prefix:
    """The complete lines of ``results.jsonl`` a store has read or written so far: what its checkpoint covers."""

    digest: Any = field(default_factory=hashlib.sha256)
    """SHA-256 of their bytes."""
    covered: int = 0
    """Their bytes."""
    lines: int = 0
    """Their count."""
    warnings: list[str] = field(default_factory=list)
    """What they warned of when read."""
    sound: bool = False
    """The store's state is that of these lines: a checkpoint of it may be written."""

    def take(self, line: bytes) -> None:
        """Count one more complete line."""
        self.digest.update(line)
        self.covered += len(line)
        self.lines += 1


@dataclass
class StoreState:
    """What a store's checkpoint saves of it besides the lines it covers (:class:`Prefix`)."""

    ledger: LedgerState
    """The schedule's state."""
    chain: str
    """The MAC chain's value after the lines."""
    extended: int
    """Pairs added by extend lines."""
    warnings: list[str]
    """What the lines warned of."""
    collected: Collected | None
    """The report's running state (None: not kept)."""

    def well_formed(self) -> bool:
        """Its fields have their types (an unpickled state is checked before use)."""
        return (isinstance(self.chain, str) and isinstance(self.extended, int) and isinstance(self.warnings, list)
                and all(isinstance(w, str) for w in self.warnings)
                and (self.collected is None or isinstance(self.collected, Collected)))  # fmt: skip


class Store:
    """A tournament's output folder: its description, the finished matches and the writer of new ones.

    ``key`` signs appended lines and checks those read; None: lines are neither signed nor checked.
    """

    def __init__(self, root: Path, config: TournamentConfig, options: RunOptions, key: bytes | None) -> None:
        self.root = root
        self.config = config
        self.options = options
        self.key = key
        check_size(config)
        self.schedule = Ledger(config, options.shard)
        """The schedule slice of this folder, each entry as dealt now, and where its recorded results are."""
        self.extended = 0  # pairs added to the schedule by extend lines (--until-separated)
        self._chain = Chain(key)
        self._log: IO[bytes] | None = None
        self._lock: int | None = None
        self.warnings: list[str] = []
        self.collected: Collected | None = None
        """The report's running state, fed every counting record read or appended (None: not kept)."""
        self._saved: checkpoint.Saved | None = None  # the folder's checkpoint, until the results are read
        self._prefix = Prefix()
        self._description: str | None = None  # SHA-256 of tournament.json as this store read or wrote it
        self.checkpoint_every: float | None = CHECKPOINT_EVERY_S
        """Seconds between the checkpoints a playing store writes as results come (None: only when it closes)."""
        self._checkpointed = time.monotonic()

    def _collect(self) -> None:
        self.collected = Collected(self.config, self.schedule, self.root, self.options.sprt)

    def collection(self) -> Collected:
        """The report's running state of every counting record: :attr:`collected`, or when the store kept none or
        it went stale (a counted pair dealt afresh), gathered afresh from the results, read once in the order they
        finished (and kept)."""
        if self.collected is None or self.collected.stale:
            if self.collected is not None:
                self.collected.close()
            self._collect()
            assert self.collected is not None
            for rec, offset in self._counting():
                self.collected.add(rec, offset)
        return self.collected

    @property
    def replays(self) -> Path:
        """The replay folder."""
        return self.root / REPLAYS

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
    def redeals(self) -> dict[tuple[int, int], int]:
        """(pairing, pair) -> deal number, for the pairs dealt again."""
        return self.schedule.redeals

    @property
    def done(self) -> int:
        """How many scheduled matches are recorded."""
        return self.schedule.recorded

    def is_done(self, match_id: str) -> bool:
        """True when ``match_id`` has a recorded result (of its current deal)."""
        spec = self.schedule.get(match_id)
        return spec is not None and self.schedule.offset(spec) >= 0

    def iter_records(self) -> Iterator[Record]:
        """The recorded matches, read back from ``results.jsonl`` in file order (the order they finished): the
        result that counts of each match as dealt now (results of a deal dealt afresh since, and repeated results,
        are skipped). The file was checked when the store was opened; lines appended since are this run's."""
        return (rec for rec, _ in self._counting())

    def _counting(self) -> Iterator[tuple[Record, int]]:
        """:meth:`iter_records`, each record with the byte offset of its line."""
        try:
            f = open(self.root / RESULTS, "rb")  # noqa: SIM115 - closed below, also when the consumer stops early
        except FileNotFoundError:
            return
        with f:
            pos = 0
            for line in f:
                here, pos = pos, pos + len(line)
                if not line.endswith(b"\n") or not line.strip():
                    continue
                obj = json.loads(line)
                if "redeal" in obj or "extend" in obj:
                    continue
                mid = obj.get("match_id")
                spec = self.schedule.get(mid) if isinstance(mid, str) else None
                if spec is not None and self.schedule.offset(spec) == here:
                    yield Record.from_json(obj, _Known(spec)), here

    def records_in_order(self, pairing: int | None = None) -> Iterator[Record]:
        """The recorded matches in schedule order (only those of ``pairing`` if given), read back one at a time
        (only the pairs with a recorded game are dealt)."""
        ledger = self.schedule
        with open(self.root / RESULTS, "rb") as f:
            for _, pg, pair in ledger.pair_keys():
                if pairing is not None and pg != pairing:
                    continue
                offsets = [ledger.slot_offset(pg, pair, g) for g in range(len(GAMES))]
                if max(offsets) < 0:
                    continue
                specs = ledger.pair(pg, pair)  # dealt once for both games
                for spec, offset in zip(specs, offsets, strict=True):
                    if offset >= 0:
                        f.seek(offset)
                        yield Record.from_json(json.loads(f.readline()), _Known(spec))

    @contextlib.contextmanager
    def reader(self) -> Iterator[Callable[[int], Record]]:
        """A function reading the record at a byte offset of ``results.jsonl``."""
        with open(self.root / RESULTS, "rb") as f:

            def read(offset: int) -> Record:
                f.seek(offset)
                return Record.from_json(json.loads(f.readline()), self.schedule)

            yield read

    def load_records(self) -> dict[str, Record]:
        """Every recorded match by id (:meth:`iter_records` kept in memory: for small folders and tests)."""
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
        store._collect()
        try:
            store.replays.mkdir(parents=True, exist_ok=True)
            store.logs.mkdir(parents=True, exist_ok=True)
            write_description(root, config, options, store.schedule.values(), key)
            store._description = checkpoint.file_digest(root / DESCRIPTION)
            (root / RESULTS).touch()
        except OSError as exc:
            store.close()
            raise TournamentError(f"{root}: cannot write the tournament folder: {exc.strerror or exc}") from None
        store._prefix.sound = True
        return store

    @staticmethod
    def open(root: Path, jobs: int = 1, key: bytes | None = None) -> Store:
        """An existing tournament folder, to play on: finished matches read back (and collected for the report),
        a torn last line cut off, interrupted deal pairs dealt afresh."""
        store = Store._describe(root, jobs, key)
        store._lock = lock_folder(root)
        try:
            store.replays.mkdir(parents=True, exist_ok=True)
            store.logs.mkdir(parents=True, exist_ok=True)
            store.warnings = store.load_results(repair=True, collect=True)
            store._prefix.sound = True
            store.record_finished()
            store.redeal_interrupted()
            store.warn_missing_replays()
        except OSError as exc:
            store.close()
            raise TournamentError(f"{root}: cannot resume in this folder: {exc.strerror or exc}") from None
        except TournamentError:
            store.close()
            raise
        return store

    @staticmethod
    def open_readonly(root: Path, key: bytes | None = None, *, collect: bool = False) -> Store:
        """An existing tournament folder, to read only (nothing is written); ``collect``: gather the report's
        running state while its results are read (:attr:`collected`), for a report or pages to follow."""
        store = Store._describe(root, 1, key)
        store.warnings = store.load_results(repair=False, collect=collect)
        return store

    @staticmethod
    def _describe(root: Path, jobs: int, key: bytes | None) -> Store:
        """The folder's store, its description read (unchecked when the checkpoint says its bytes were checked)."""
        saved = checkpoint.read(root, key, scratch)
        fields = None
        if saved is not None and saved.fits_description(root / DESCRIPTION):
            fields = read_fields(root / DESCRIPTION)
        if saved is not None and fields is None:
            saved.discard()
            saved = None
        digest: str | None
        if fields is not None:
            assert saved is not None
            description, digest = description_of(root, fields, jobs), str(saved.header["description"])
        else:
            description, digest = read_description(root, key, jobs), checkpoint.file_digest(root / DESCRIPTION)
        store = Store(root, description.config, description.options, key)
        store._saved, store._description = saved, digest
        return store

    def load_results(self, *, repair: bool = False, collect: bool = False) -> list[str]:
        """Read ``results.jsonl``; returns warnings; ``repair`` cuts a torn last line off; ``collect`` gathers the
        report's running state (:attr:`collected`). A line that does not parse or (with the key) does not check
        is a :class:`TournamentError` naming it."""
        path = self.root / RESULTS
        warnings: list[str] = [] if self.key is not None else [f"{path}: {NO_KEY}"]
        try:
            f = open(path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            if collect:
                self._collect()
            return warnings
        except OSError as exc:
            raise TournamentError(f"{path}: cannot read: {exc.strerror or exc}") from None
        saved, self._saved = self._saved, None
        torn = False
        with f:
            good_end = self._restore(saved, f, collect) if saved is not None else 0
            if collect and self.collected is None:
                self._collect()
            prefix = self._prefix
            warnings.extend(prefix.warnings)
            for number, line in enumerate(f, prefix.lines + 1):
                if not line.endswith(b"\n"):
                    warnings.append(f"{path}: an incomplete last line was dropped; its match will be played again")
                    torn = True
                    break
                if line.strip():
                    found = self._read_line(line[:-1], f"{path} line {number}", good_end)
                    prefix.warnings += found
                    warnings += found
                good_end += len(line)
                prefix.take(line)
        if repair and torn:
            with open(path, "r+b") as out:
                out.truncate(good_end)
                out.flush()
                os.fsync(out.fileno())
        return warnings

    def _restore(self, saved: checkpoint.Saved, f: IO[bytes], collect: bool) -> int:
        """Take the state of the first lines of the results open as ``f`` from the checkpoint ``saved`` when it
        was made from them (their bytes unchanged) and holds what this store keeps (the report's running state,
        with ``collect``); returns how many bytes it covers, with ``f`` there (0: nothing taken, ``f`` at 0)."""
        digest = hashlib.sha256()
        try:
            left = saved.results
            while left > 0 and (chunk := f.read(min(1 << 20, left))):
                digest.update(chunk)
                left -= len(chunk)
            if left or digest.hexdigest() != saved.header["results_sha256"]:
                raise ValueError("the results are not those of the checkpoint")
            state = saved.state({"config": self.config, "ledger": self.schedule, "root": self.root})
            if not (isinstance(state, StoreState) and state.well_formed()):
                raise ValueError("not a store's state")
            collected = state.collected
            if collect and collected is None:
                raise ValueError("the checkpoint holds no report state")
            self.schedule.restore(state.ledger)
        except (ValueError, TypeError, KeyError, AttributeError, EOFError, ImportError, pickle.UnpicklingError):
            saved.discard()
            f.seek(0)
            return 0
        self._chain.previous, self.extended = state.chain, state.extended
        if collect:
            self.collected = collected
        elif collected is not None:
            collected.close()
        self._prefix = Prefix(digest, saved.results, saved.lines, state.warnings)
        return saved.results

    def checkpoint(self) -> None:
        """Write the folder's checkpoint of what its lines gave (:mod:`referee.tournament.checkpoint`): nothing
        without a key, or when the state is not that of the lines (a failed read or write); a checkpoint that
        cannot be written is left out (the next open reads the results in full)."""
        if self.key is None or not self._prefix.sound or self._description is None:
            return
        self._checkpointed = time.monotonic()
        c = self.collected if self.collected is not None and not self.collected.stale else None
        state = StoreState(self.schedule.state(), self._chain.previous, self.extended, self._prefix.warnings, c)
        named = {id(self.config): "config", id(self.schedule): "ledger"}
        results = (self._prefix.covered, self._prefix.lines, self._prefix.digest.hexdigest())
        scratch, tables = c.scratch() if c is not None else ({}, {})
        tables["offsets"] = self.schedule.offset_table()
        with contextlib.suppress(OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            checkpoint.write(self.root, self.key, self._description, results, state, named, scratch, tables)

    def _read_line(self, line: bytes, where: str, offset: int) -> list[str]:
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise TournamentError(f"{where}: not JSON") from None
        if not isinstance(obj, dict):
            raise TournamentError(f"{where}: not a JSON object")
        try:
            self._chain.check(obj, where)
        except SigningError as exc:
            raise SignatureError(f"{exc}{KEY_HINT}") from None
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
        if self.schedule.offset(rec.spec) >= 0:
            return [f"{where}: match {rec.spec.match_id} is recorded twice; the first result counts"]
        self.schedule.mark(rec.spec, offset)
        self._feed(rec, offset)
        return []

    def _apply_redeal(self, redeal: Redeal) -> None:
        """Deal pair (pairing, pair) afresh: its entries get the new deal, its earlier results stop counting."""
        if not self._has_pair(redeal.pairing, redeal.pair):
            raise ValueError(f"pair {redeal.pair} of pairing {redeal.pairing} is not in this folder's schedule")
        if redeal.deal <= self.redeals.get((redeal.pairing, redeal.pair), 0):
            raise ValueError(f"deal {redeal.deal} of pair {redeal.pair} is not a new deal")
        counted = any(self.schedule.slot_offset(redeal.pairing, redeal.pair, g) >= 0 for g in range(len(GAMES)))
        if counted and self.collected is not None:
            self.collected.stale = True
        self.schedule.redeal(redeal.pairing, redeal.pair, redeal.deal)

    def _has_pair(self, pairing: int, pair: int) -> bool:
        ledger = self.schedule
        return 0 <= pairing < len(ledger.plist) and 0 <= pair < ledger.pairs_of(pairing) and ledger.in_shard(
            ledger.index_of(pairing, pair)
        )

    def _apply_extend(self, extend: Extend) -> list[MatchSpec]:
        """Add pair ``extend.pair`` (the pairing's next one) of pairing ``extend.pairing`` to the schedule."""
        if tuple(self.options.shard) != (1, 1) or not 0 <= extend.pairing < len(self.schedule.plist):
            raise ValueError(f"pairing {extend.pairing} cannot take a pair in this folder")
        taken = self.schedule.used(extend.index) or self.schedule.used(extend.index + 1)
        if extend.pair != self.pairs_of(extend.pairing) or taken:
            raise ValueError(f"pair {extend.pair} of pairing {extend.pairing} is not the next pair of the schedule")
        specs = self.schedule.add_pair(extend.pairing, extend.pair, extend.index)
        self.extended += 1
        return specs

    def pairs_of(self, pairing: int) -> int:
        """How many pairs pairing ``pairing`` has in the schedule (its first ``config.pairs`` and those added)."""
        return self.schedule.pairs_of(pairing)

    def extend(self, chosen: list[int]) -> list[MatchSpec]:
        """Add the next pair of each pairing in ``chosen`` to the schedule: a signed ``extend`` line each, before
        any of its games is played; returns the new matches."""
        out: list[MatchSpec] = []
        for pairing in chosen:
            extend = Extend(pairing, self.pairs_of(pairing), self.schedule.next_index())
            self._write_line(extend.to_json())
            out += self._apply_extend(extend)
        return out

    def restage(self, config: TournamentConfig, options: RunOptions) -> None:
        """Take on ``config`` (the same tournament with a ladder step more) and ``options``: ``tournament.json``
        rewritten atomically, signed under the same key, before any new match; the new pairings join the
        schedule, the recorded matches keep their ids, indices and results."""
        check_size(config)
        ledger = self.schedule
        old_config, old = ledger.config, ledger.places()
        ledger.restage(config)
        moved = next((p for p, place in enumerate(old) if ledger.places()[p] != place), None)
        if moved is not None or ledger.overlaps():
            ledger.restage(old_config)
            raise TournamentError(f"pairing {moved or 0}: the ladder step would move it in the schedule")
        try:
            write_description(self.root, config, options, ledger.values(), self.key)
            self._description = checkpoint.file_digest(self.root / DESCRIPTION)
        except OSError as exc:
            raise TournamentError(f"{self.root}: cannot write the tournament folder: {exc.strerror or exc}") from None
        self.config, self.options = config, options
        if self.collected is not None:
            self.collected.restage(config)

    def record_finished(self) -> list[str]:
        """Record every game whose replay ends with its result but has no result line (a run stopped between
        the two, or lines cut off the end of ``results.jsonl``): its replay re-simulates (every signature
        checking under the key) to its result line, for the deal the schedule gives it, so the game counts as
        played and its pair is not dealt afresh. The record holds no timing (a replay does not). Returns the
        match ids."""
        ready: list[Record] = []  # gathered first, appended after: the pending entries are walked, not held
        for _, _, mid in self.schedule.pending_ids():
            path = existing_replay(self.root, mid)
            replayed = None if path is None else replayed_result(path, self.key)
            if replayed is None:
                continue
            spec, (header, result) = self.schedule[mid], replayed
            suite = self.config.suite[spec.suite] if spec.suite is not None else ()
            dealt = (header.match_id, header.seed, header.first_dealer, tuple(header.deals))
            if dealt == (mid, spec.seed, spec.first_dealer, tuple(suite)):  # else: left to be dealt afresh
                ready.append(Record(spec, result, None, spec.order))
        found = [self.append(rec).spec.match_id for rec in ready]
        if found:
            shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
            self.warnings.append(f"{shown}: finished but not in the results; recorded from the replay")
        return found

    def warn_missing_replays(self) -> list[str]:
        """A warning (in :attr:`warnings`) when recorded games have no replay in the folder (deleted or moved):
        their pages cannot be written and ``tournament verify`` reports each. Returns the match ids."""
        missing = [mid for mid in self.schedule.recorded_ids() if existing_replay(self.root, mid) is None]
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            self.warnings.append(f"{shown}: recorded, but the replay is missing from {self.replays}: its pages "
                                 "cannot be written, and tournament verify reports it")  # fmt: skip
        return missing

    def interrupted(self) -> list[tuple[int, int]]:
        """Deal pairs with a match that started (its replay exists, plain or compressed) but has no result."""
        found = {(pg, pair) for pg, pair, mid in self.schedule.pending_ids() if started(self.root, mid)}
        return sorted(found)

    def redeal_interrupted(self) -> list[tuple[int, int]]:
        """Deal every interrupted pair afresh (a signed ``redeal`` line each) and keep the replays of its old
        deal as ``ID.interrupted-N.jsonl``, N the new deal's number; returns the pairs."""
        pairs = self.interrupted()
        for pairing, pair in pairs:
            members = self.schedule.pair(pairing, pair)
            redeal = Redeal(pairing, pair, self.redeals.get((pairing, pair), 0) + 1)
            for m in members:
                for old in replay_files(self.root, m.match_id):
                    if old.exists():
                        os.rename(old, kept_replay(old, m.match_id, redeal.deal))
            self._write_line(redeal.to_json())
            self._apply_redeal(redeal)
            ids = " and ".join(m.match_id for m in members)
            self.warnings.append(f"{ids} interrupted: dealt afresh (the old replays are kept as *.interrupted-N)")
        return pairs

    def pending(self) -> list[MatchSpec]:
        """Scheduled matches without a recorded result, in schedule order (only their pairs are dealt)."""
        return list(self.schedule.pending())

    def spec(self, match_id: str) -> MatchSpec:
        """The schedule entry of ``match_id`` as dealt now."""
        return self.schedule[match_id]

    def _write_line(self, obj: dict[str, Any]) -> int:
        if self._log is None:
            self._log = open(self.root / RESULTS, "ab")  # noqa: SIM115 - closed in close()
        offset = self._log.tell()
        data = (dumps_line(self._chain.sign(obj)) + "\n").encode("utf-8")
        prefix = self._prefix
        sound, prefix.sound = prefix.sound, False  # until the line is whole on disk
        self._log.write(data)
        self._log.flush()
        os.fsync(self._log.fileno())
        prefix.sound = sound and offset == prefix.covered
        prefix.take(data)
        return offset

    def append(self, rec: Record) -> Record:
        """Record a finished match: one signed line, flushed and fsynced before returning (only its offset stays
        in memory)."""
        offset = self._write_line(rec.to_json())
        self.schedule.mark(self.schedule[rec.spec.match_id], offset)
        self._feed(rec, offset)
        every = self.checkpoint_every
        if every is not None and time.monotonic() - self._checkpointed >= every:
            self.checkpoint()
        return rec

    def _feed(self, rec: Record, offset: int) -> None:
        """Collect ``rec`` for the report; a row that cannot be written (a full disk) makes the collection stale:
        the report reads the results again (the result itself is on disk already)."""
        if self.collected is not None and not self.collected.stale:
            try:
                self.collected.add(rec, offset)
            except OSError:
                self.collected.stale = True

    def close(self) -> None:
        """Close the log, write the checkpoint (a store that plays in the folder) and release the folder."""
        if self._lock is not None:
            self.checkpoint()
        if self._saved is not None:
            self._saved.discard()
            self._saved = None
        if self._log is not None:
            with contextlib.suppress(OSError):  # a full disk: the lines were fsynced one by one already
                self._log.close()
            self._log = None
        if self._lock is not None:
            unlock_folder(self._lock)
            self._lock = None
        if self.collected is not None:
            self.collected.close()
            self.collected = None


class _Known:
    """The schedule as far as one line read back needs it: the entry its offset says it records."""

    def __init__(self, spec: MatchSpec) -> None:
        self.spec = spec

    def get(self, match_id: str, /) -> MatchSpec | None:
        """The entry, when ``match_id`` names it."""
        return self.spec if match_id == self.spec.match_id else None


def dumps_line(obj: dict[str, Any]) -> str:
    """One ``results.jsonl`` line (without its newline)."""
    return json.dumps(obj, separators=(",", ":"))


class ResultLines:
    """The lines of a whole ``results.jsonl`` written afresh (a merge), signed under ``key``: a ``redeal`` line
    before the first result of each pair dealt again, then the result; records given in schedule order."""

    def __init__(self, key: bytes | None) -> None:
        self._chain = Chain(key)
        self._last: tuple[int, int] | None = None

    def of(self, rec: Record) -> str:
        """The line(s) of ``rec``, newlines included."""
        pair = (rec.spec.pairing, rec.spec.pair)
        out = ""
        if rec.spec.deal and pair != self._last:
            out += dumps_line(self._chain.sign(Redeal(*pair, rec.spec.deal).to_json())) + "\n"
        self._last = pair
        return out + dumps_line(self._chain.sign(rec.to_json())) + "\n"


def write_results(root: Path, records: Iterable[Record], key: bytes | None) -> None:
    """Write a whole ``results.jsonl`` atomically, signed under ``key``, from ``records`` in schedule order
    (:class:`ResultLines`), one at a time."""
    lines = ResultLines(key)
    with atomic_text(root / RESULTS) as f:
        for rec in records:
            f.write(lines.of(rec))
