"""The tournament folder: its layout, its lock, atomic writes, the signed description and the signing key.

Layout of a tournament folder::

    tournament.json     config, run options, shard and schedule slice; written atomically before any match
    results.jsonl       one line per finished match (:mod:`referee.tournament.store`)
    replays/ID.jsonl    every match's replay (a replayed match overwrites its partial replay); ID.jsonl.gz when
                        the run compresses its replays (``RunOptions.compress``)
    logs/               bot stderr logs
    .lock               held (flock) by the run playing in the folder: a second run there is refused
    .checkpoint         what opening the folder worked out, signed, so that the next open reads only what came
                        after it (:mod:`referee.tournament.checkpoint`)
    standings.json, standings.csv, pairs.csv, matches.csv   the report, rewritten at the end
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from referee.errors import OutputError
from referee.replay.writer import GZ_SUFFIX
from referee.signing import Chain, SigningError, key_id, load_key
from referee.tournament.config import RunOptions, SignatureError, TournamentConfig, TournamentError
from referee.tournament.document import read_head, write_document
from referee.tournament.ledger import Links
from referee.tournament.schedule import MatchSpec

FORMAT = "koikoi-tournament/1"
DESCRIPTION = "tournament.json"
RESULTS = "results.jsonl"
LOCK = ".lock"
NO_KEY = "signature not checked: no key"
KEY_HINT = " (a run signed with --key FILE is checked with the same --key FILE)"


def output_error(exc: OSError, path: Path | None = None) -> OutputError:
    """A one-line :class:`~referee.errors.OutputError` for an ``OSError`` met while writing the tournament's
    output (``path``: the file being written, when the error does not name one)."""
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


def fsync_dir(path: Path) -> None:
    """fsync the folder ``path`` (a rename in it is then durable); nothing when it cannot be opened."""
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
    fsync_dir(path.parent)


@contextlib.contextmanager
def atomic_text(path: Path) -> Iterator[IO[str]]:
    """A text file written through a temporary one, a piece at a time, fsynced and renamed into place when the
    block ends without an error: old or new, never half (see :func:`write_atomic`)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        yield f
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


@dataclass(frozen=True)
class Output:
    """Where and how the matches of a run are written: the folder (``replays/``, ``logs/``), the key that signs
    the replays (None: unsigned) and whether they are compressed (``.jsonl.gz``). Every backend's workers get one
    (a Ray slot's has its staging folder as ``root``). With ``pages`` (the folder's schedule's shape), the
    worker that plays a match also writes its viewer page (:mod:`referee.tournament.match_page`)."""

    root: Path
    key: bytes | None = field(default=None, repr=False)
    compress: bool = False
    pages: Links | None = field(default=None, repr=False, compare=False)

    def replay(self, match_id: str) -> Path:
        """The replay file of match ``match_id``."""
        return replay_file(self.root, match_id, self.compress)

    def log(self, match_id: str, bot: str) -> Path:
        """The stderr log of ``bot`` in match ``match_id`` (a bot process reused for several matches writes
        each match's stderr to that match's log)."""
        return self.root / "logs" / f"{match_id}.{bot}.log"


REPLAYS = "replays"
"""The folder of a tournament's replays, in its folder."""


def replay_file(root: Path, match_id: str, compress: bool = False) -> Path:
    """The replay file of match ``match_id`` in the tournament folder ``root`` (``.jsonl.gz`` with
    ``compress``)."""
    return root / REPLAYS / f"{match_id}.jsonl{GZ_SUFFIX if compress else ''}"


def replay_files(root: Path, match_id: str) -> tuple[Path, Path]:
    """Both places the replay of ``match_id`` may be in ``root``: plain, then compressed."""
    return replay_file(root, match_id), replay_file(root, match_id, True)


KEPT = re.compile(r"(?P<mid>.+)\.interrupted-(?P<n>[1-9][0-9]*)\.jsonl(\.gz)?")
"""The name of a replay kept when its pair was dealt afresh: ``ID.interrupted-N.jsonl`` (or ``.jsonl.gz``), N the
deal that replaced it, the same for both games of the pair."""


def kept_replay(replay: Path, match_id: str, deal: int) -> Path:
    """Where ``replay`` (of ``match_id``) is kept when deal ``deal`` replaces its pair's (a later free number if
    that name is taken, as by a folder of an older version)."""
    ext = replay.name.removeprefix(match_id)
    n = deal
    while (kept := replay.with_name(f"{match_id}.interrupted-{n}{ext}")).exists():
        n += 1
    return kept


def kept_replays(root: Path) -> list[tuple[Path, str, int]]:
    """The replays kept when their pairs were dealt afresh: (path, match id, N of ``.interrupted-N``)."""
    folder = root / REPLAYS
    found = sorted(folder.glob("*.interrupted-*.jsonl*")) if folder.is_dir() else []
    return [(p, m["mid"], int(m["n"])) for p in found if (m := KEPT.fullmatch(p.name)) is not None]


def started(root: Path, match_id: str) -> bool:
    """True when match ``match_id`` has a replay in ``root`` (plain or compressed): it was started."""
    return any(p.exists() for p in replay_files(root, match_id))


def existing_replay(root: Path, match_id: str) -> Path | None:
    """The replay file of ``match_id`` in ``root``, plain or compressed, if there is one."""
    return next((p for p in replay_files(root, match_id) if p.is_file()), None)


@dataclass(frozen=True)
class Description:
    """What ``tournament.json`` says: the config and the run options (with ``jobs`` chosen afresh)."""

    config: TournamentConfig
    options: RunOptions


def write_description(
    root: Path, config: TournamentConfig, options: RunOptions, schedule: Iterable[MatchSpec], key: bytes | None
) -> None:
    """Write ``tournament.json`` atomically, signed under ``key`` (its run options decide the CI gates)."""
    head = {"format": FORMAT, "fingerprint": config.fingerprint(), "config": config.to_json(),
            "options": options.to_json()}  # fmt: skip
    with atomic_text(root / DESCRIPTION) as f:  # the schedule an entry at a time; key_id signed with the rest
        write_document(f, head, (m.to_json() for m in schedule), key)


def read_description(root: Path, key: bytes | None = None, jobs: int = 1) -> Description:
    """The ``tournament.json`` of a folder, its MAC checked under ``key`` (None: not checked), its run options
    with ``jobs``; :class:`TournamentError` if missing, malformed or edited."""
    return description_of(root, _read_document(root, key), jobs)


def description_of(root: Path, doc: dict[str, Any], jobs: int = 1) -> Description:
    """The description that the fields ``doc`` of ``root``'s ``tournament.json`` give (their MAC checked, or
    their bytes known unchanged since it was: :mod:`referee.tournament.checkpoint`), its run options with
    ``jobs``; :class:`TournamentError` if they are malformed."""
    path = root / DESCRIPTION
    config_json, options_json = doc.get("config"), doc.get("options")
    if not isinstance(config_json, dict):
        raise TournamentError("malformed tournament description: the config is not an object")
    config = TournamentConfig.from_json(config_json)
    if not isinstance(options_json, dict):
        raise TournamentError("malformed run options: not an object")
    options = RunOptions.from_json(options_json, jobs)
    if config.fingerprint() != doc.get("fingerprint"):
        raise TournamentError(f"{path}: the fingerprint does not match its config")
    return Description(config, options)


def _read_document(root: Path, key: bytes | None) -> dict[str, Any]:
    path = root / DESCRIPTION
    with contextlib.suppress(OSError):
        doc = read_head(path, key)  # the schedule streamed, not held
        if doc is not None and doc.get("format") == FORMAT:
            return doc
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
        signer = doc.get("key_id")
        ours = None if key is None else key_id(key)
        if isinstance(signer, str) and re.fullmatch(r"[0-9a-f]{16}", signer) and ours not in (None, signer):
            raise SignatureError(
                f"{path}: the signature does not match this key: the folder was signed with a different key "
                f"(key id {signer}; this key's id is {ours}); check it with the --key FILE that signed it"
            ) from None
        raise SignatureError(f"{exc}{KEY_HINT}") from None
    return doc


def signing_key(path: Path | None, *, create: bool) -> bytes | None:
    """The key that signs and checks results: ``path`` (which must exist), or the default key, made on first
    use when ``create``; None when there is none to check with."""
    try:
        if path is not None:
            key = load_key(path, create=False)
            if key is None:
                raise TournamentError.about("key", f"{{}} {path}: no such file")
            return key
        return load_key(None, create=create)
    except SigningError as exc:
        raise TournamentError(str(exc)) from None
