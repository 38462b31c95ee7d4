"""A bot package: a folder with a ``bot.toml`` manifest, and the rule for which parts of a command line are files.

A package is named on a command line by its folder alone (``bots/mybot/``, or ``bots/mybot`` when the folder
holds a ``bot.toml``). Its manifest says::

    name = "mybot"                    # optional: the folder's name
    command = "main.py --depth 3"     # the program and its arguments, relative to the folder
    python = ".venv/bin/python"       # optional: the interpreter of a .py program (relative, or on PATH)
    build = "cargo build --release"   # optional: run once in the folder before the first match
    build_timeout_s = 600             # optional (default 600)
    memory_mb = 1024                  # optional: memory_mb, cpu_s, processes, each at most the organiser's
    [env]                             # optional: added to the bot's environment
    MYBOT_LEVEL = "3"

The bot starts in its folder, which it (and no other bot) sees read-only in the sandbox; what it writes goes
to its private ``/tmp``, discarded at the end. The build step runs once, outside the match clock, in the sandbox
with its folder writable (see :func:`build`), with its output kept in ``build.log`` of the bot's log folder (or
shown on failure).

Which arguments of a plain command line are files (:func:`is_path_word`): the program, a ``.py``/``.js``
script, and every argument (or ``--opt=value``) that holds a ``/`` and names something that exists, such as
``./book.bin`` or ``data/weights.json``. A bare word (``mono``) is never a file, even when a file or folder of
that name exists where the referee runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import stat
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.errors import RefereeError
from referee.seats import sandbox
from referee.seats.process import cgroups, seccomp

if TYPE_CHECKING:
    from referee.seats.process.plan import Limits

MANIFEST = "bot.toml"
"""The manifest's file name inside a bot folder."""
BUILD_TIMEOUT_S = 600
"""The default time limit of a package's build step (seconds)."""

_KEYS = {"name", "command", "python", "build", "build_timeout_s", "memory_mb", "cpu_s", "processes", "env"}


class PackageError(RefereeError):
    """A bot folder whose manifest is missing, malformed, or whose build failed."""


@dataclass(frozen=True)
class Package:
    """A bot folder and what its manifest asks (paths absolute; limits in the manifest's units)."""

    folder: str
    name: str
    argv: tuple[str, ...]  # the program (absolute) and its arguments, as the manifest wrote them
    python: str | None = None
    build: str | None = None
    build_timeout_s: int = BUILD_TIMEOUT_S
    memory_mb: int | None = None
    cpu_s: int | None = None
    processes: int | None = None
    env: tuple[tuple[str, str], ...] = ()


def real_path(path: str) -> str:
    """``path`` absolute, its folder's symlinks and ``..`` resolved the way the kernel does, its last part kept
    (a venv's ``python`` symlink stays itself): a spelling that still works inside the sandbox."""
    full = os.path.abspath(path) if not os.path.isabs(path) else path
    head, tail = os.path.split(full)
    if tail in ("", ".", ".."):
        return os.path.realpath(full)
    return os.path.join(os.path.realpath(head), tail)


def is_path_word(arg: str) -> bool:
    """True for a word that the documented rule may treat as a file: it holds a ``/``."""
    return "/" in arg


def folder_of(command: str) -> str | None:
    """The bot folder a command line names (one word: a folder holding ``bot.toml``), else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) != 1:
        return None
    try:
        if os.path.isfile(os.path.join(words[0], MANIFEST)):
            return real_path(words[0].rstrip("/") or "/")
    except (OSError, ValueError):
        return None
    return None


def folder_problem(command: str, base: str = "") -> str | None:
    """What is wrong where ``command`` names a folder (relative paths against ``base``) that is not a bot folder
    as given: a bot folder whose path holds a space, unquoted (the command line splits it), or a folder without
    ``bot.toml``; None otherwise."""
    try:
        words = shlex.split(command)
        whole = command.strip()
        if len(words) > 1 and os.path.isfile(os.path.join(base, whole, MANIFEST)):
            return f"{whole}: a bot folder whose path holds a space: quote it in the command, as \"'{whole}'\""
        folder = os.path.join(base, words[0]) if len(words) == 1 else ""
        if folder and os.path.isdir(folder) and not os.path.isfile(os.path.join(folder, MANIFEST)):
            return f"{words[0]}: a folder without {MANIFEST} (a bot folder names its command there; see new-bot)"
    except (OSError, ValueError):
        return None
    return None


def _int(data: dict[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PackageError(f"{where}: {key} must be a whole number above 0")
    return value


def _text(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise PackageError(f"{where}: {key} must be a non-empty string")
    return value


def _outside(folder: str, word: str) -> str | None:
    """Why a path word of a manifest (an argument, the interpreter) names something a bot of ``folder`` may not
    read, or None: an absolute path outside the system view, or a relative one (holding a ``/``) that leads out
    of the folder. A bot package reads its own folder and the system, nothing its manifest names beyond them:
    the contestant writes the manifest, and a host path there (a replay still to be written, a tournament's
    folder) would be bound into the sandbox."""
    if os.path.isabs(word):
        return None if sandbox.in_system_view(word) else "names a path outside the folder and the system"
    if "/" not in word:
        return None
    inside = os.path.normpath(os.path.join(folder, word))  # as written: a symlinked venv in the folder is the bot's
    if inside == folder.rstrip("/") or inside.startswith(folder.rstrip("/") + "/"):
        return None
    return "leads out of the folder"


def load(folder: str) -> Package:
    """The manifest of the bot folder ``folder`` (:class:`PackageError` when it is missing or malformed)."""
    path = os.path.join(folder, MANIFEST)
    where = path
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the referee
            raise PackageError(f"{where}: not a regular file")
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise PackageError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PackageError(f"{where}: not valid TOML: {exc}") from None
    unknown = set(data) - _KEYS
    if unknown:
        raise PackageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(_KEYS))}")
    command = _text(data, "command", where)
    if command is None:
        raise PackageError(f'{where}: give the bot\'s command = "..." (relative to its folder)')
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise PackageError(f"{where}: command: {exc}") from None
    if not argv:
        raise PackageError(f"{where}: empty command")
    if "/" in argv[0] or argv[0].endswith((".py", ".js")) or os.path.exists(os.path.join(folder, argv[0])):
        if os.path.isabs(argv[0]):
            raise PackageError(f"{where}: command: the program must be inside the folder, relative to it")
        argv[0] = real_path(os.path.join(folder, argv[0]))
        if not argv[0].startswith(folder.rstrip("/") + "/"):
            raise PackageError(f"{where}: command: the program must be inside the folder")
    for arg in argv[1:]:
        problem = _outside(folder, arg.partition("=")[2] if arg.startswith("-") else arg)
        if problem is not None:
            raise PackageError(f"{where}: command: the argument {arg!r} {problem}")
    env = data.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise PackageError(f"{where}: [env] must be a table of NAME = \"value\"")
    python = _text(data, "python", where)
    if python is not None and "/" in python:
        if (problem := _outside(folder, python)) is not None:
            raise PackageError(f"{where}: python: {python!r} {problem}")
        python = real_path(os.path.join(folder, python))
    name = _text(data, "name", where) or os.path.basename(folder)
    return Package(
        folder, name, tuple(argv), python, _text(data, "build", where),
        _int(data, "build_timeout_s", where) or BUILD_TIMEOUT_S, _int(data, "memory_mb", where),
        _int(data, "cpu_s", where), _int(data, "processes", where), tuple((str(k), v) for k, v in env.items()),
    )  # fmt: skip


def find(command: str) -> Package | None:
    """The package a command line names, loaded, or None for a plain command line."""
    folder = folder_of(command)
    return None if folder is None else load(folder)


def _within(asked: int | None, allowed: int | None) -> int | None:
    """The manifest's value where it is below the organiser's (None: no limit)."""
    if asked is None:
        return allowed
    return asked if allowed is None else min(asked, allowed)


def apply(package: Package, limits: Limits) -> tuple[str, Limits]:
    """The command line and limits that run ``package`` under the organiser's ``limits``: its folder is its
    working directory and readable, its settings apply where they are within the organiser's."""
    memory = _within(None if package.memory_mb is None else package.memory_mb << 20, limits.memory_bytes)
    changed = dataclasses.replace(
        limits,
        memory_bytes=memory,
        cpu_seconds=_within(package.cpu_s, limits.cpu_seconds),
        processes=_within(package.processes, limits.processes),
        env=(*limits.env, *package.env),
        files=(*limits.files, package.folder),
        python=package.python or limits.python,
        workdir=package.folder,
    )
    return shlex.join(package.argv), changed


def house_python(command: str) -> bool:
    """True when ``command`` runs a house bot's ``.py`` file: it runs with the referee's Python whatever the
    organiser gave the other bots."""
    from referee.house_bots import bots_folder

    home = bots_folder()
    try:
        first = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    if home is None or not first.endswith(".py"):
        return False
    return os.path.dirname(real_path(first)) == str(home)


BUILD_MEMORY_BYTES = 4 << 30
"""The memory of a package's build step (its cgroup, where cgroups work)."""
BUILD_TMP_BYTES = 1 << 30
"""The size of the build step's private ``/tmp`` (its ``HOME``, compiler caches included)."""


def build(package: Package, log: Path | None = None, mode: str = "auto") -> None:
    """Run the package's build step in its folder, within its time limit; its output goes to ``log`` when given.
    :class:`PackageError` when it fails. In the sandbox (``mode`` ``auto`` or ``bwrap`` where bwrap works) the
    build sees its folder read-write and the system read-only, and runs with no network, none of root's
    capabilities, a cleared environment (plus the package's ``[env]``), the syscall filter and a cgroup of its
    own, and under a root referee as a fresh unprivileged user (the folder is its for the build, then its owner's
    again with no set-user-ID bit left): a contestant's build script can read nothing of the referee's or of
    root's and reach no other bot."""
    if package.build is None:
        return
    chosen = sandbox.choose(mode).mode
    uid = sandbox.bot_uid() if chosen != "none" and os.geteuid() == 0 else None
    owner = _hand_over(package.folder, uid) if uid is not None else None
    try:
        argv, env, fds, group = _build_command(package, chosen, uid)
    except BaseException:
        if owner is not None:
            _take_back(package.folder, owner)
        raise
    try:
        done = subprocess.run(
            argv, cwd="/" if fds else package.folder, capture_output=True, timeout=package.build_timeout_s,
            stdin=subprocess.DEVNULL, env=env, pass_fds=fds,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise PackageError(
            f"{package.folder}: build {package.build!r} took longer than {package.build_timeout_s} s"
        ) from None
    except OSError as exc:
        raise PackageError(f"{package.folder}: build {package.build!r}: {exc}") from None
    finally:
        for fd in fds:
            os.close(fd)
        if group is not None:
            group.remove()
        if owner is not None:
            _take_back(package.folder, owner)
    output = done.stdout + done.stderr
    if log is not None:
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_bytes(output)
        except OSError:
            log = None
    if done.returncode != 0:
        tail = output.decode("utf-8", "replace").strip().splitlines()[-3:]
        where = f" (its output: {log})" if log is not None else ""
        raise PackageError(
            f"{package.folder}: build {package.build!r} exited with status {done.returncode}{where}: "
            + " | ".join(tail)
        )


def _tree(folder: str) -> list[str]:
    """``folder`` and everything under it, symlinks not followed."""
    paths = [folder]
    for top, dirs, files in os.walk(folder, followlinks=False):
        paths += [os.path.join(top, name) for name in (*dirs, *files)]
    return paths


def _hand_over(folder: str, uid: int) -> tuple[int, int]:
    """Make ``folder``'s tree the build's (user and group ``uid``), for a root referee's build that runs as a fresh
    unprivileged user; the folder's owner before, to give it back (:func:`_take_back`)."""
    info = os.stat(folder)
    for path in _tree(folder):
        with contextlib.suppress(OSError):
            os.lchown(path, uid, uid)
    return info.st_uid, info.st_gid


def _take_back(folder: str, owner: tuple[int, int]) -> None:
    """Give ``folder``'s tree back to ``owner`` after the build, with no set-user-ID or set-group-ID bit left on
    any file in it (a build must not leave a program that runs as someone else)."""
    for path in _tree(folder):
        with contextlib.suppress(OSError):
            os.lchown(path, *owner)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and mode & (stat.S_ISUID | stat.S_ISGID):
                os.chmod(path, stat.S_IMODE(mode) & ~(stat.S_ISUID | stat.S_ISGID))


def _build_command(
    package: Package, mode: str, uid: int | None = None
) -> tuple[list[str], dict[str, str], tuple[int, ...], cgroups.BotCgroup | None]:
    """The build's command line, environment, descriptors to pass and cgroup; ``uid``: the unprivileged user it
    runs as (a root referee's), None for the referee's own."""
    assert package.build is not None
    if mode == "none":  # the organiser trusts the bots: the referee's own environment, in the folder
        return ["/bin/sh", "-c", package.build], {**os.environ, **dict(package.env)}, (), None
    bwrap = sandbox.bwrap_path()
    assert bwrap is not None  # choose() said it works
    env = sandbox.sandbox_env(sandbox.allowed_env(package.env))
    env["PWD"] = package.folder
    binds: set[str] = set()
    try:
        first = shutil.which(shlex.split(package.build)[0])
    except (ValueError, IndexError):
        first = None
    if first is not None:
        binds |= sandbox.program_roots(first)
    home = os.path.expanduser("~")
    rustup, cargo_bin = os.path.join(home, ".rustup"), os.path.join(home, ".cargo", "bin")
    if os.path.isdir(rustup) and os.path.isdir(cargo_bin):  # rustup's proxies: the toolchains, not ~/.cargo's secrets
        binds = {b for b in binds if b != os.path.join(home, ".cargo")} | {rustup, cargo_bin}
        env.update(RUSTUP_HOME=rustup, CARGO_HOME=f"{sandbox.HOME}/.cargo")
    env.setdefault("GOCACHE", f"{sandbox.HOME}/.cache/go-build")
    env.setdefault("GOPATH", f"{sandbox.HOME}/go")
    bpf = seccomp.program(locks=True) if seccomp.enabled() and seccomp.reason() is None else None
    jail = sandbox.Jail(tuple(sorted(binds)), package.folder, BUILD_TMP_BYTES, uid, bpf, BUILD_MEMORY_BYTES,
                        writable_cwd=True)  # fmt: skip
    group = None
    if cgroups.reason() is None:
        with contextlib.suppress(OSError, cgroups.CgroupUnavailable):
            group = cgroups.BotCgroup.create(cgroups.Quota(BUILD_MEMORY_BYTES, 1024, None))
    wrapped = sandbox.wrap(bwrap, jail, ["/bin/sh", "-c", package.build])
    from referee.seats.process.plan import join_wrapper

    join = join_wrapper(group.procs_files) if group is not None else []
    return [*join, *wrapped.argv], env, wrapped.fds, group


def refuse_outputs(outputs: dict[str, Path], folders: list[str]) -> None:
    """:class:`PackageError` when one of ``outputs`` (what -> path) lies inside a folder a bot may read, or holds
    something a bot may read."""
    for what, path in outputs.items():
        where = real_path(str(path))
        for folder in folders:
            if where == folder:
                raise PackageError(f"{what} {path} is a path a bot may read (its command line or files name it): "
                                   "write it elsewhere")  # fmt: skip
            if where.startswith(folder.rstrip("/") + "/"):
                raise PackageError(
                    f"{what} {path} is inside {folder}, which a bot may read: write it elsewhere"
                )
            if folder.startswith(where.rstrip("/") + "/"):
                raise PackageError(f"{what} {path} holds {folder}, which a bot may read: write it elsewhere")


def python_of(command: str, python: str | None) -> str | None:
    """The interpreter a command's ``.py`` program runs with: None (the referee's own, :data:`sys.executable`)
    for a house bot, else ``python``."""
    return None if house_python(command) else python


__all__ = [
    "BUILD_TIMEOUT_S", "MANIFEST", "Package", "PackageError", "apply", "build", "find", "folder_of", "folder_problem",
    "house_python", "is_path_word", "load", "python_of", "real_path", "refuse_outputs",
]  # fmt: skip
