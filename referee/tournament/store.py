"""The output folder: the tournament description written first, then an append-only log of finished matches.

Layout of a tournament folder::

    tournament.json     config, run options, shard and schedule slice; written atomically before any match
    results.jsonl       one line per finished match, flushed and fsynced as soon as the match ends
    replays/ID.jsonl    every match's replay (a replayed match overwrites its partial replay); ID.jsonl.gz when
                        the run compresses its replays (``RunOptions.compress``)
    logs/               bot stderr logs
    .lock               held (flock) by the run playing in the folder: a second run there is refused
    standings.json, standings.csv, pairs.csv, matches.csv   the report, rewritten at the end

A line is only counted when it is complete and parses; a torn last line (the referee killed mid-write) is cut
off on resume and its match is played again, so no match is lost and none is counted twice.

A running tournament holds the ids of its finished matches, not their records: the records stay on disk and
:meth:`Store.iter_records` reads them back when they are needed (the report at the end, a merge).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from referee.replay.writer import GZ_SUFFIX
from referee.signing import Chain, SigningError, load_key
from referee.tournament.config import RunOptions, TournamentConfig, TournamentError
from referee.tournament.records import Record, Redeal
from referee.tournament.schedule import MatchSpec, build_schedule, redealt, shard_of

FORMAT = "koikoi-tournament/1"
DESCRIPTION = "tournament.json"
RESULTS = "results.jsonl"
LOCK = ".lock"
NO_KEY = "signature not checked: no key"
KEY_HINT = " (a run signed with --key FILE is checked with the same --key FILE)"


class OutputError(TournamentError):
    """The output folder cannot be written during a run (a full disk, a file grown over its limit, a folder
    made read-only): the run stops with exit 2 and can be resumed."""


def output_error(exc: OSError, path: Path | None = None) -> OutputError:
    """A one-line :class:`OutputError` for an ``OSError`` met while writing the tournament's output (``path``:
    the file being written, when the error does not name one)."""
    name = exc.filename or path
    where = f"{name}: " if name else ""
    return OutputError(f"{where}cannot write the tournament's output: {exc.strerror or exc}")


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
    """A tournament's output folder: its description, the finished matches and the writer of new ones.

    ``key`` signs appended lines and checks those read; None: lines are neither signed nor checked.
    """

    def __init__(self, root: Path, config: TournamentConfig, options: RunOptions, key: bytes | None) -> None:
        self.root = root
        self.config = config
        self.options = options
        self.key = key
        self.schedule: list[MatchSpec] = shard_of(build_schedule(config), options.shard)
        self._by_id = {m.match_id: m for m in self.schedule}
        self._done: set[str] = set()  # ids of the recorded matches (the schedule's own strings)
        self.redeals: dict[tuple[int, int], int] = {}  # (pairing, pair) -> deal number, for pairs dealt again
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
                if "redeal" in obj:
                    continue
                mid = obj.get("match_id")
                spec = self._by_id.get(mid) if isinstance(mid, str) else None
                if spec is None or obj.get("deal", 0) != spec.deal or spec.match_id in seen:
                    continue
                seen.add(spec.match_id)
                yield Record.from_json(obj, self._by_id)

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
            write_description(root, config, options, store.schedule, key)
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
        doc = read_description(root, key)
        config = TournamentConfig.from_json(doc.get("config"))  # type: ignore[arg-type]
        options = RunOptions.from_json(doc.get("options"), jobs)  # type: ignore[arg-type]
        if config.fingerprint() != doc.get("fingerprint"):
            raise TournamentError(f"{root / DESCRIPTION}: the fingerprint does not match its config")
        return Store(root, config, options, key)

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
            rec = Record.from_json(obj, self._by_id)
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
        members = [m for m in self.schedule if (m.pairing, m.pair) == (redeal.pairing, redeal.pair)]
        if not members:
            raise ValueError(f"pair {redeal.pair} of pairing {redeal.pairing} is not in this folder's schedule")
        if redeal.deal <= self.redeals.get((redeal.pairing, redeal.pair), 0):
            raise ValueError(f"deal {redeal.deal} of pair {redeal.pair} is not a new deal")
        self.redeals[(redeal.pairing, redeal.pair)] = redeal.deal
        for m in members:
            new = redealt(self.config, m, redeal.deal)
            self.schedule[self.schedule.index(m)] = new
            self._by_id[m.match_id] = new
            self._done.discard(m.match_id)

    def interrupted(self) -> list[tuple[int, int]]:
        """Deal pairs with a match that started (its replay exists, plain or compressed) but has no result."""
        found = {(m.pairing, m.pair) for m in self.pending() if _started(self.root, m.match_id)}
        return sorted(found)

    def redeal_interrupted(self) -> list[tuple[int, int]]:
        """Deal every interrupted pair afresh (a signed ``redeal`` line each) and keep the replays of its old
        deal as ``ID.interrupted-N.jsonl``; returns the pairs."""
        pairs = self.interrupted()
        for pairing, pair in pairs:
            members = [m for m in self.schedule if (m.pairing, m.pair) == (pairing, pair)]
            for m in members:
                for old in _replay_files(self.root, m.match_id):
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
        return [m for m in self.schedule if m.match_id not in self._done]

    def spec(self, match_id: str) -> MatchSpec:
        """The schedule entry of ``match_id`` as dealt now."""
        return self._by_id[match_id]

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
        self._done.add(self._by_id[rec.spec.match_id].match_id)
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


@dataclass(frozen=True)
class Output:
    """Where and how the matches of a run are written: the folder (``replays/``, ``logs/``), the key that signs
    the replays (None: unsigned) and whether they are compressed (``.jsonl.gz``). Every backend's workers get one
    (a Ray slot's has its staging folder as ``root``)."""

    root: Path
    key: bytes | None = field(default=None, repr=False)
    compress: bool = False

    def replay(self, match_id: str) -> Path:
        """The replay file of match ``match_id``."""
        return replay_file(self.root, match_id, self.compress)

    def log(self, match_id: str, bot: str) -> Path:
        """The stderr log of ``bot`` in match ``match_id`` (a bot process reused for several matches writes
        each match's stderr to that match's log)."""
        return self.root / "logs" / f"{match_id}.{bot}.log"


def replay_file(root: Path, match_id: str, compress: bool = False) -> Path:
    """The replay file of match ``match_id`` in the tournament folder ``root`` (``.jsonl.gz`` with
    ``compress``)."""
    return root / "replays" / f"{match_id}.jsonl{GZ_SUFFIX if compress else ''}"


def _replay_files(root: Path, match_id: str) -> tuple[Path, Path]:
    return replay_file(root, match_id), replay_file(root, match_id, True)


def _started(root: Path, match_id: str) -> bool:
    return any(p.exists() for p in _replay_files(root, match_id))


def existing_replay(root: Path, match_id: str) -> Path | None:
    """The replay file of ``match_id`` in ``root``, plain or compressed, if there is one."""
    return next((p for p in _replay_files(root, match_id) if p.is_file()), None)


def dumps_line(obj: dict[str, Any]) -> str:
    """One ``results.jsonl`` line (without its newline)."""
    return json.dumps(obj, separators=(",", ":"))


def write_description(
    root: Path, config: TournamentConfig, options: RunOptions, schedule: list[MatchSpec], key: bytes | None
) -> None:
    """Write ``tournament.json`` atomically, signed under ``key`` (its run options decide the CI gates)."""
    doc = {
        "format": FORMAT,
        "fingerprint": config.fingerprint(),
        "config": config.to_json(),
        "options": options.to_json(),
        "schedule": [m.to_json() for m in schedule],
    }
    write_atomic(root / DESCRIPTION, json.dumps(Chain(key).sign(doc), indent=1) + "\n")


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


def signing_key(path: Path | None, *, create: bool) -> bytes | None:
    """The key that signs and checks results: ``path`` (which must exist), or the default key, made on first
    use when ``create``; None when there is none to check with."""
    try:
        if path is not None:
            key = load_key(path, create=False)
            if key is None:
                raise TournamentError(f"--key {path}: no such file")
            return key
        return load_key(None, create=create)
    except SigningError as exc:
        raise TournamentError(str(exc)) from None


def read_description(root: Path, key: bytes | None = None) -> dict[str, Any]:
    """The parsed ``tournament.json`` of a folder, its MAC checked under ``key`` (None: not checked);
    :class:`TournamentError` if missing, malformed or edited."""
    path = root / DESCRIPTION
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TournamentError(f"{root}: not a tournament folder (no {DESCRIPTION})") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise TournamentError(f"{path}: unreadable: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TournamentError(f"{path}: not a {FORMAT} description")
    try:
        Chain(key).check(doc, str(path))
    except SigningError as exc:
        raise TournamentError(f"{exc}{KEY_HINT}") from None
    return doc
