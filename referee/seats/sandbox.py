"""The bot sandbox: every bot process inside bubblewrap (``bwrap``), Linux only.

A sandboxed bot gets its own PID namespace (it sees only itself and its children; they all die with the
sandbox, so nothing escapes and nothing can signal the referee or the opponent), no network (only ``lo``), its
own IPC and host name, an environment cleared to :data:`ENV_ALLOW` plus ``--bot-env NAME=VALUE``, a read-only
view of the system (``/usr``, ``/bin``, ``/lib*``, ``/sbin``, ``/etc``, ``/opt``), read-only binds of the files
named on its command line and of the interpreter that runs it (the referee's own Python and its venv for a
``.py`` bot, a venv or a version manager's folder under the home directory), and a size-capped private ``/tmp``
whose ``/tmp/home`` is its working and home directory (and a small ``/dev/shm``); the rest of its file tree is
read-only. Nothing else of the host is there: not the referee's
folders (replays, logs, deals, rules), not the host's ``/tmp``, not the home directory, not another bot.

When the referee runs as root, the bot runs as an unprivileged user id of its own (see :func:`bot_uid`), with
no capabilities and ``no_new_privs``: the kernel exempts root from RLIMIT_NPROC, and root inside the sandbox
could make device nodes or remount. Limits are rlimits set inside the sandbox (``prlimit``): address space,
CPU seconds and file size per process, process count per bot (its own user id, or its own user namespace).

``--sandbox auto`` uses bwrap when a probe run works and otherwise runs bots unsandboxed with a one-line
warning; ``--sandbox bwrap`` fails with a one-line error instead. :data:`BWRAP_VAR` names another bwrap binary.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from referee.errors import RefereeError

MODES = ("auto", "bwrap", "none")
"""The values of ``--sandbox``."""
BWRAP_VAR = "KOIKOI_REFEREE_BWRAP"
"""Environment variable naming the bwrap binary to use (default: ``bwrap`` on PATH)."""
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "PYENV_ROOT", "PYENV_VERSION", "NVM_DIR", "NVM_BIN")
"""Variables a bot inherits from the referee (and every ``LC_*``); everything else is cleared."""
HOME = "/tmp/home"
"""The sandboxed bot's working and home directory, inside its private ``/tmp``."""
SYSTEM = ("/usr", "/etc", "/opt")
"""Host folders every sandbox sees read-only (with ``/bin``, ``/sbin`` and ``/lib*``, symlinks or binds)."""
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SHM_BYTES = 64 << 20
"""The size of a sandboxed bot's ``/dev/shm`` (at most its ``/tmp`` size)."""
UID_BASE = 2_000_000_000
"""Bots of a referee running as root get user ids from here on (see :func:`bot_uid`)."""

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FIX_USERNS = (
    "user namespaces are restricted (Ubuntu 23.10+ AppArmor): add an AppArmor profile for bwrap or run "
    "'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0'"
)


class SandboxError(RefereeError):
    """The sandbox was asked for (``--sandbox bwrap``) and cannot work here."""


@dataclass(frozen=True)
class Choice:
    """The sandbox a run uses: ``mode`` is ``"bwrap"`` or ``"none"``; ``warning`` says why ``auto`` fell back."""

    mode: str
    warning: str | None = None


def bwrap_path() -> str | None:
    """The bwrap binary: ``$KOIKOI_REFEREE_BWRAP`` if set, else ``bwrap`` on PATH; None if there is none."""
    override = os.environ.get(BWRAP_VAR)
    if override:
        return override if os.path.isfile(override) and os.access(override, os.X_OK) else None
    return shutil.which("bwrap")


def explain(stderr: str) -> str:
    """A one-line reason, with the fix, for a bwrap failure (its stderr)."""
    text = " ".join(stderr.split()) or "no message"
    low = text.lower()
    if "uid map" in low or "setting up uid" in low or ("user namespace" in low and "permission" in low):
        return f"bwrap cannot create its namespaces ({text[:120]}); {_FIX_USERNS}"
    if "no permissions to creat" in low or "operation not permitted" in low:
        return (
            f"bwrap cannot create its namespaces ({text[:120]}); allow unprivileged user namespaces "
            "(sysctl user.max_user_namespaces > 0, or run containers with --security-opt seccomp=unconfined)"
        )
    return f"bwrap does not work here: {text[:200]}"


@cache
def _probe(bwrap: str) -> str | None:
    """None when a minimal sandbox starts and exits cleanly, else the one-line reason (cached per binary)."""
    argv = [bwrap, *_namespaces(), *_system_view(), "--", "/bin/sh", "-c", "exit 0"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot run {bwrap}: {exc}"
    return None if done.returncode == 0 else explain(done.stderr)


def choose(mode: str) -> Choice:
    """Decide ``auto``/``bwrap``/``none``; :class:`SandboxError` for ``bwrap`` where it cannot work."""
    if mode not in MODES:
        raise SandboxError(f"unknown sandbox {mode!r} (auto, bwrap or none)")
    if mode == "none":
        return Choice("none")
    reason = _unavailable()
    if reason is None:
        return Choice("bwrap")
    if mode == "bwrap":
        raise SandboxError(f"--sandbox bwrap: {reason}")
    return Choice("none", f"bots run without a sandbox: {reason}")


def resolve(mode: str, warn: Callable[[str], None]) -> str:
    """The sandbox the bots will run in (``bwrap`` or ``none``) for ``--sandbox mode``: :class:`SandboxError`
    for ``bwrap`` where it cannot work, ``warn`` (one line) when ``auto`` runs the bots unsandboxed."""
    choice = choose(mode)
    if choice.warning is not None:
        warn(choice.warning)
    return choice.mode


def _unavailable() -> str | None:
    if not sys.platform.startswith("linux"):
        return "the bwrap sandbox needs Linux"
    path = bwrap_path()
    if path is None:
        where = os.environ.get(BWRAP_VAR)
        if where:
            return f"{BWRAP_VAR}={where} is not an executable file"
        return "bwrap not found (install the bubblewrap package: apt-get install bubblewrap)"
    return _probe(path)


def allowed_env(extra: Iterable[tuple[str, str]] = ()) -> dict[str, str]:
    """The allowlisted part of the referee's environment plus ``extra`` (``--bot-env``)."""
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOW or k.startswith("LC_")}
    env.setdefault("PATH", os.defpath)
    env.update(extra)
    return env


def parse_env(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``--bot-env NAME=VALUE`` options as pairs; :class:`SandboxError` for a malformed one."""
    out: list[tuple[str, str]] = []
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not _NAME_RE.fullmatch(name) or "\0" in value:
            raise SandboxError(f"--bot-env {item!r}: expected NAME=VALUE (NAME: letters, digits, _)")
        out.append((name, value))
    return tuple(out)


def bot_uid(serial: int) -> int:
    """The host user id of a sandboxed bot when the referee is root: unique per referee process and bot, so
    RLIMIT_NPROC counts that bot's processes only."""
    return UID_BASE + (os.getpid() % (1 << 22)) * 64 + serial % 64


def _namespaces() -> list[str]:
    return [
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--hostname", "koikoi-bot",
    ]  # fmt: skip


def _system_view() -> list[str]:
    out: list[str] = []
    for top in SYSTEM:
        if os.path.isdir(top):
            out += ["--ro-bind", top, top]
    for top in TOP_LINKS:
        if os.path.islink(top):
            out += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            out += ["--ro-bind", top, top]
    return [*out, "--proc", "/proc", "--dev", "/dev"]


def _covered(path: str) -> bool:
    """True when ``path`` is already in the system view."""
    return any(path == top or path.startswith(top + "/") for top in (*SYSTEM, *TOP_LINKS))


def program_roots(program: str) -> set[str]:
    """Host folders to bind so that ``program`` (an absolute path) runs: the venv it belongs to and its base
    installation, the version manager's folder under the home directory (``~/.pyenv`` for a pyenv shim), or
    the program's own folder; the same for its symlink target and its ``#!`` interpreter."""
    out: set[str] = set()
    todo = [program]
    seen: set[str] = set()
    home = os.path.expanduser("~")
    while todo:
        path = os.path.abspath(todo.pop())
        if path in seen:
            continue
        seen.add(path)
        real = os.path.realpath(path)
        if real != path:
            todo.append(real)
        todo += _interpreter(path)
        if _covered(path):
            continue
        parent = Path(path).parent
        cfg = parent.parent / "pyvenv.cfg"
        if cfg.is_file():
            out.add(str(parent.parent))
            todo += [str(Path(h) / "python3") for h in _venv_home(cfg)]
        elif (root := _manager_root(path, home)) is not None:
            out.add(root)
        else:
            out.add(path)  # the program alone: its folder may hold the referee's output or another bot
    return out


VERSION_MANAGERS = (".pyenv", ".nvm", ".asdf", ".rbenv", ".volta", ".cargo", ".rustup", ".sdkman", ".deno", ".bun",
                    ".local/share/mise", ".local/share/fnm")


def _manager_root(path: str, home: str) -> str | None:
    """The version manager's folder under the home directory that holds ``path``, if any."""
    if home in ("", "/"):
        return None
    for name in VERSION_MANAGERS:
        root = os.path.join(home, name)
        if path.startswith(root + "/"):
            return root
    return None


def _venv_home(cfg: Path) -> list[str]:
    try:
        lines = cfg.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [ln.split("=", 1)[1].strip() for ln in lines if ln.split("=", 1)[0].strip() == "home" and "=" in ln]


def _interpreter(path: str) -> list[str]:
    """The ``#!`` interpreter of a script (not ``env``), as a list of zero or one path."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    words = head[2:].split(b"\n", 1)[0].split()
    if not words:
        return []
    interp = words[0].decode(errors="replace")
    return [] if interp.endswith("/env") or not interp.startswith("/") else [interp]


@dataclass(frozen=True)
class Jail:
    """What one sandboxed bot process gets (see :func:`wrap`)."""

    binds: tuple[str, ...] = ()  # host paths bound read-only at the same place
    cwd: str | None = None  # a host folder bound read-write as the working directory (--bot-cwd); None: HOME
    tmp_bytes: int = 256 << 20  # size of the private /tmp (working directory included)
    uid: int | None = None  # run as this host uid (referee is root); None: the referee's own


def wrap(bwrap: str, jail: Jail, argv: list[str]) -> list[str]:
    """The bwrap command line that runs ``argv`` (already wrapped in its limits) inside ``jail``."""
    out = [bwrap, *_namespaces(), *_system_view()]
    out += ["--perms", "1777", "--size", str(jail.tmp_bytes), "--tmpfs", "/tmp", "--perms", "0777", "--dir", HOME]
    out += ["--perms", "1777", "--size", str(min(jail.tmp_bytes, SHM_BYTES)), "--tmpfs", "/dev/shm"]
    binds: list[str] = []
    for path in sorted(set(jail.binds)):  # a parent sorts before its children
        if not _covered(path) and os.path.exists(path) and not any(path.startswith(b + "/") for b in binds):
            binds.append(path)
    mounts = [*binds, *([jail.cwd] if jail.cwd is not None else [])]
    for parent in sorted({str(a) for m in mounts for a in Path(m).parents if str(a) not in ("/", "/tmp")}):
        out += ["--perms", "0755", "--dir", parent]  # bwrap would make missing parents 0700: unusable as a uid
    for path in binds:
        out += ["--ro-bind", path, path]
    if jail.cwd is not None:
        out += ["--bind", jail.cwd, jail.cwd, "--chdir", jail.cwd]
    else:
        out += ["--chdir", HOME]
    out += ["--remount-ro", "/dev", "--remount-ro", "/"]  # bwrap's own tmpfs, writable by an unprivileged bot
    if jail.uid is not None:
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        out += [
            "--", setpriv, f"--reuid={jail.uid}", f"--regid={jail.uid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs",
        ]  # fmt: skip
    return [*out, "--", *argv]


def sandbox_env(env: dict[str, str]) -> dict[str, str]:
    """The environment inside the sandbox: ``env`` with ``HOME``, ``TMPDIR`` and ``PWD`` pointing inside."""
    return {**env, "HOME": HOME, "TMPDIR": "/tmp", "PWD": HOME}
