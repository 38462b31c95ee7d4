"""The output folder: the tournament description written first, then an append-only log of finished matches.

Layout of a tournament folder::

    tournament.json     config, run options, shard and schedule slice; written atomically before any match
    results.jsonl       one line per finished match, flushed and fsynced as soon as the match ends
    replays/ID.jsonl    every match's replay (a replayed match overwrites its partial replay)
    logs/               bot stderr logs
    .lock               held (flock) by the run playing in the folder: a second run there is refused
    standings.json, standings.csv, pairs.csv, matches.csv   the report, rewritten at the end

A line is only counted when it is complete and parses; a torn last line (the referee killed mid-write) is cut
off on resume and its match is played again, so no match is lost and none is counted twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import IO, Any

from referee.tournament.config import RunOptions, TournamentConfig, TournamentError
from referee.tournament.schedule import MatchSpec, build_schedule, shard_of
from referee.tournament.standings import Record

FORMAT = "koikoi-tournament/1"
DESCRIPTION = "tournament.json"
RESULTS = "results.jsonl"
LOCK = ".lock"

_held_locks: set[int] = set()  # lock file descriptors of this process


def _close_locks_after_fork() -> None:
    # A forked worker drops its copy of the lock, so that the lock ends with the run that took it (even when
    # that run is killed), not with the last worker to exit.
    for fd in _held_locks:
        with contextlib.suppress(OSError):
            os.close(fd)
    _held_locks.clear()


os.register_at_fork(after_in_child=_close_locks_after_fork)


def lock_folder(root: Path) -> int:
    """Take the folder's lock for this run; :class:`TournamentError` if another run holds it."""
    path = root / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise TournamentError(f"{root}: cannot lock the tournament folder: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise TournamentError(f"{root} is in use by another koikoi-referee run (pid {holder})") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    _held_locks.add(fd)
    return fd


def unlock_folder(fd: int) -> None:
    """Release a lock taken by :func:`lock_folder`."""
    if fd in _held_locks:
        _held_locks.discard(fd)
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, fsync and rename: old or new, never half."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class Store:
    """A tournament's output folder: its description, the finished matches and the writer of new ones."""

    def __init__(self, root: Path, config: TournamentConfig, options: RunOptions) -> None:
        self.root = root
        self.config = config
        self.options = options
        self.schedule: list[MatchSpec] = shard_of(build_schedule(config), options.shard)
        self._by_id = {m.match_id: m for m in self.schedule}
        self.records: dict[str, Record] = {}
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

    def replay_path(self, spec: MatchSpec) -> Path:
        """Where the replay of ``spec`` goes."""
        return self.replays / f"{spec.match_id}.jsonl"

    @staticmethod
    def create(root: Path, config: TournamentConfig, options: RunOptions) -> Store:
        """A new tournament folder; refuses a folder that already holds a tournament."""
        if (root / DESCRIPTION).exists():
            raise TournamentError(f"{root} already holds a tournament; use --resume {root} or another --out")
        store = Store(root, config, options)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TournamentError(f"{root}: cannot write the tournament folder: {exc.strerror or exc}") from None
        store._lock = lock_folder(root)
        doc = {
            "format": FORMAT,
            "fingerprint": config.fingerprint(),
            "config": config.to_json(),
            "options": options.to_json(),
            "schedule": [m.to_json() for m in store.schedule],
        }
        try:
            store.replays.mkdir(parents=True, exist_ok=True)
            store.logs.mkdir(parents=True, exist_ok=True)
            write_atomic(root / DESCRIPTION, json.dumps(doc, indent=1) + "\n")
            (root / RESULTS).touch()
        except OSError as exc:
            raise TournamentError(f"{root}: cannot write the tournament folder: {exc.strerror or exc}") from None
        return store

    @staticmethod
    def open(root: Path, jobs: int = 1) -> Store:
        """An existing tournament folder, to play on: finished matches read back, a torn last line cut off."""
        store = Store._describe(root, jobs)
        store._lock = lock_folder(root)
        try:
            store.replays.mkdir(parents=True, exist_ok=True)
            store.logs.mkdir(parents=True, exist_ok=True)
            store.warnings = store.load_results(repair=True)
        except OSError as exc:
            raise TournamentError(f"{root}: cannot resume in this folder: {exc.strerror or exc}") from None
        return store

    @staticmethod
    def open_readonly(root: Path) -> Store:
        """An existing tournament folder, to read only (nothing is written)."""
        store = Store._describe(root, 1)
        store.warnings = store.load_results(repair=False)
        return store

    @staticmethod
    def _describe(root: Path, jobs: int) -> Store:
        doc = read_description(root)
        config = TournamentConfig.from_json(doc["config"])
        options = RunOptions.from_json(doc["options"], jobs)
        if config.fingerprint() != doc.get("fingerprint"):
            raise TournamentError(f"{root / DESCRIPTION}: the fingerprint does not match its config")
        return Store(root, config, options)

    def load_results(self, *, repair: bool = False) -> list[str]:
        """Read ``results.jsonl``; returns warnings; ``repair`` cuts a torn last line off."""
        path = self.root / RESULTS
        warnings: list[str] = []
        if not path.exists():
            return warnings
        data = path.read_bytes()
        good_end = 0
        pos = 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            if nl < 0:
                warnings.append(f"{path}: an incomplete last line was dropped; its match will be played again")
                break
            line = data[pos:nl]
            pos = nl + 1
            rec = self._parse(line)
            if rec is None:
                if line.strip():
                    warnings.append(f"{path}: a malformed line was skipped")
                good_end = pos
                continue
            if rec.spec.match_id in self.records:
                warnings.append(f"{path}: match {rec.spec.match_id} is recorded twice; the first result counts")
            else:
                self.records[rec.spec.match_id] = rec
            good_end = pos
        if repair and good_end < len(data):
            with open(path, "r+b") as f:
                f.truncate(good_end)
                f.flush()
                os.fsync(f.fileno())
        return warnings

    def _parse(self, line: bytes) -> Record | None:
        try:
            obj = json.loads(line)
            spec = self._by_id[obj["match_id"]]
            result = obj["result"]
            if not isinstance(result, dict) or "winner" not in result:
                return None
        except (ValueError, KeyError, TypeError):
            return None
        return Record(spec, result)

    def pending(self) -> list[MatchSpec]:
        """Scheduled matches without a recorded result, in schedule order."""
        return [m for m in self.schedule if m.match_id not in self.records]

    def append(self, spec: MatchSpec, result: dict[str, Any]) -> Record:
        """Record a finished match: one line, flushed and fsynced before returning."""
        if self._log is None:
            self._log = open(self.root / RESULTS, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        line = json.dumps(
            {"match_id": spec.match_id, "index": spec.index, "seats": list(spec.seats), "result": result},
            separators=(",", ":"),
        )
        self._log.write(line + "\n")
        self._log.flush()
        os.fsync(self._log.fileno())
        rec = Record(spec, result)
        self.records[spec.match_id] = rec
        return rec

    def close(self) -> None:
        """Close the log and release the folder."""
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._lock is not None:
            unlock_folder(self._lock)
            self._lock = None


def read_description(root: Path) -> dict[str, Any]:
    """The parsed ``tournament.json`` of a folder; :class:`TournamentError` if missing or malformed."""
    path = root / DESCRIPTION
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TournamentError(f"{root}: not a tournament folder (no {DESCRIPTION})") from None
    except (OSError, ValueError) as exc:
        raise TournamentError(f"{path}: unreadable: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TournamentError(f"{path}: not a {FORMAT} description")
    return doc
