"""A fingerprint of a bot's own files: which version of a submission played a match.

A bot's own files are those of its command line that are not the system's or the referee's: a bot package's
folder, else the program when it is a path (a binary, a script) and every argument naming an existing file (the
``.py`` script after the referee's Python, ``bot.jar``, a weights file; not a folder, which may be any size). The
fingerprint is the SHA-256 of their paths (relative to each named path) and contents, ``sha256:`` and 16 hex
digits; a replay header records it for each bot process (``files``), so ``tournament verify`` can say which
versions of a bot played. Contents are hashed once per file while its size, times and inode stay the same (and
it was not changed in the last two seconds).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

from referee.seats import package
from referee.seats.sandbox import in_system_view, venv_root

MOST_FILES = 100_000
"""The most files a fingerprint reads; beyond them it covers those it found first and says so (``+partial``)."""

_cache: dict[str, tuple[tuple[int, int, int, int], bytes]] = {}
"""Each file's digest, by path, with the size, modification time, inode and change time it was read at."""
RACY_NS = 2_000_000_000
"""A file changed less than this long ago (in nanoseconds) is read again each time: file times tick coarsely, so
a file written again within one tick, at its old size, would look unchanged."""


def own_paths(command: str, python: str | None = None) -> list[str]:
    """The files (a package: its folder) of ``command`` that are the bot's own (see the module's text), absolute;
    empty for a command that names none (a bare program on PATH)."""
    from referee.seats.process.plan import BotCommandError, command_argv, resolve_paths

    try:
        found = package.find(command)
        if found is not None:
            return [found.folder]
        argv = resolve_paths(command_argv(command, python), Path.cwd())
    except (package.PackageError, BotCommandError):
        return []
    out = []
    for k, word in enumerate(argv):
        value = word.partition("=")[2] if word.startswith("-") else word
        if not os.path.isabs(value) or in_system_view(value) or not os.path.isfile(value):
            continue  # a folder named on a plain command line is not read: it may be any size (a package is)
        if k == 0 and _is_interpreter(value):
            continue
        out.append(value)
    return sorted(set(out))


def _is_interpreter(program: str) -> bool:
    """Whether ``program`` is an interpreter of a venv (the referee's Python, a venv's), not a bot's own
    program."""
    real = os.path.realpath(program)
    return real == os.path.realpath(sys.executable) or venv_root(program) is not None


def fingerprint(paths: list[str]) -> str:
    """``sha256:`` and 16 hex digits over the files under ``paths`` (names relative to each path, contents), or
    ``none`` for no path; ``+partial`` when there were more than :data:`MOST_FILES`."""
    if not paths:
        return "none"
    h = hashlib.sha256()
    seen = 0
    for top in paths:
        for rel, full in _files(top):
            seen += 1
            if seen > MOST_FILES:
                return f"sha256:{h.hexdigest()[:16]}+partial"
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + _digest(full))
    return f"sha256:{h.hexdigest()[:16]}"


def _files(top: str) -> list[tuple[str, str]]:
    """(name relative to ``top``, path) of each regular file under ``top`` (``top`` itself for a file), sorted;
    symbolic links are not followed (the directory entries' types are used: no stat a file)."""
    if not os.path.isdir(top):
        return [(os.path.basename(top), top)] if os.path.isfile(top) else []
    out: list[tuple[str, str]] = []
    todo = [top]
    while todo and len(out) <= MOST_FILES:
        here = todo.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    out.append((os.path.relpath(entry.path, top), entry.path))
            except OSError:
                continue
    return sorted(out)


def _digest(path: str) -> bytes:
    """The SHA-256 of a file's contents (kept while its size, modification time and inode stay the same); the
    digest of nothing for a file that cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return hashlib.sha256().digest()
    key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    kept = _cache.get(path)
    if kept is not None and kept[0] == key:
        return kept[1]
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError:
        return hashlib.sha256().digest()
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
        _cache[path] = (key, h.digest())
    return h.digest()


__all__ = ["MOST_FILES", "fingerprint", "own_paths"]
