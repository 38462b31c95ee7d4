"""The bot sandbox: every bot process inside bubblewrap (``bwrap``), Linux only.

A sandboxed bot gets its own PID namespace (it sees only itself and its children; they all die with the
sandbox, so nothing escapes and nothing can signal the referee or the opponent), no network (only ``lo``), its
own IPC and host name, an environment cleared to :data:`ENV_ALLOW` plus ``--bot-env NAME=VALUE`` (and, for a
bot run by the referee's own Python that would not find the running ``referee`` package by itself, its folder
on ``PYTHONPATH``: see :func:`referee.seats.process.plan.library_path`), a read-only
view of the system (``/usr``, ``/bin``, ``/lib*``, ``/sbin``, ``/etc``, ``/opt``), read-only binds of the files
named on its command line and of the interpreter that runs it (the referee's own Python and its venv for a
``.py`` bot, a venv or a version manager's folder under the home directory), and a size-capped private ``/tmp``
whose ``/tmp/home`` is its working and home directory (and a small ``/dev/shm``); the rest of its file tree is
read-only. Nothing else of the host is there: not the referee's
folders (replays, logs, deals, rules), not the host's ``/tmp``, not the home directory, not another bot.

When the referee runs as root, the bot runs as an unprivileged user id of its own that no other bot process gets
(see :func:`bot_uid`), with no capabilities and ``no_new_privs``: the kernel exempts root from RLIMIT_NPROC, and
root inside the sandbox could make device nodes or remount. bwrap's options reach it through a descriptor and the
command through a launcher script, so the sandbox's process list shows no host path; machine-wide ``/proc`` files
are masked (:data:`MASKED_PROC`); the syscall filter of :mod:`referee.seats.process.seccomp` applies. The bot's cgroup
(:mod:`referee.seats.process.cgroups`) bounds its memory, processes and CPU share; rlimits set inside the sandbox
(``prlimit``) add CPU seconds and file size per process, and the process count of its user id.

``--sandbox auto`` uses bwrap when a probe run works and otherwise runs bots unsandboxed with a one-line
warning; ``--sandbox bwrap`` fails with a one-line error instead. :data:`BWRAP_VAR` names another bwrap binary.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shlex
import shutil
import stat
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


UID_SPAN = (1 << 32) - 2 - UID_BASE
"""How many bot user ids there are (up to 2^32 - 2: -1 and -2 mean "no id" to the kernel)."""
UID_STATE_VAR = "KOIKOI_REFEREE_UID_STATE"
"""Environment variable naming the file that holds the machine's next bot user id (default :data:`UID_STATE`)."""
UID_STATE = "/run/koikoi-referee/next-uid"
"""The machine-wide counter of bot user ids (a root referee's; ``/run`` is cleared at boot, with the keyrings)."""
_uid_fallback = [secrets.randbelow(UID_SPAN), 0]


def bot_uid() -> int:
    """A fresh host user id for a sandboxed bot when the referee is root: the next value of a machine-wide
    counter (a file under ``/run``, locked while it is read and written), so that no id repeats within a referee
    run, or between two bots alive at the same time on the machine, until 2^31 bot processes later. Where the
    counter cannot be kept, a random start in the range and a counter of this process."""
    path = Path(os.environ.get(UID_STATE_VAR) or UID_STATE)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        _uid_fallback[1] += 1
        return UID_BASE + (_uid_fallback[0] + _uid_fallback[1]) % UID_SPAN
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        n = int(text) if text.isdigit() else secrets.randbelow(UID_SPAN)
        data = f"{(n + 1) % UID_SPAN}\n".encode()
        os.pwrite(fd, data.ljust(32), 0)
        return UID_BASE + n % UID_SPAN
    finally:
        os.close(fd)  # releases the lock


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


def in_system_view(path: str) -> bool:
    """True when the absolute ``path`` (``..`` resolved as written) is in the system view every sandbox sees."""
    path = os.path.normpath(path)
    return any(path == top or path.startswith(top + "/") for top in (*SYSTEM, *TOP_LINKS))


SPECIAL = ("/proc", "/sys", "/dev")
"""Host folders never bound for a program: their paths mean other things in the sandbox (``/proc/self``), and
what they hold is the machine's."""


def venv_root(program: str) -> str | None:
    """The venv a program in its ``bin`` folder belongs to (the folder holding ``pyvenv.cfg``), or None."""
    root = Path(program).parent.parent
    return str(root) if (root / "pyvenv.cfg").is_file() else None


def _special(path: str) -> bool:
    return any(path == top or path.startswith(top + "/") for top in SPECIAL)


def program_roots(program: str, *, within: str | None = None) -> set[str]:
    """Host folders to bind so that ``program`` (an absolute path) runs: the venv it belongs to and its base
    installation, the version manager's folder under the home directory (``~/.pyenv`` for a pyenv shim), or
    the program's own file when it is a regular executable; the same for its symlink target and its ``#!``
    interpreter (read as the kernel reads it). Nothing under ``/proc``, ``/sys`` or ``/dev``. ``within``: a bot
    package's folder (bound already): its programs are the contestant's, so no program file of their ``#!``
    lines or symlinks outside it is bound (only a venv or a version manager's folder)."""
    out: set[str] = set()
    todo = [program]
    seen: set[str] = set()
    home = os.path.expanduser("~")
    while todo:
        path = os.path.abspath(todo.pop())
        if path in seen or _special(path):
            continue
        seen.add(path)
        real = os.path.realpath(path)
        if _special(real):
            continue
        if real != path:
            todo.append(real)
        todo += _interpreter(path)
        if in_system_view(path) or (within is not None and path.startswith(within.rstrip("/") + "/")):
            continue
        if (venv := venv_root(path)) is not None:
            out.add(venv)
            todo += [str(Path(h) / "python3") for h in _venv_home(Path(venv) / "pyvenv.cfg")]
        elif (root := _manager_root(path, home)) is not None:
            out.add(root)
        elif within is None and os.path.isfile(path) and os.access(path, os.X_OK):
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
    """The ``#!`` interpreter of a script (not ``env``), as a list of zero or one path, read as the kernel reads
    it: the first line of the first 256 bytes, blanks and tabs before the path, which ends at a blank, a tab or
    NUL. Only a regular file is read (a FIFO would block), without waiting."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return []
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        head = os.read(fd, 256)
    except OSError:
        return []
    finally:
        os.close(fd)
    if not head.startswith(b"#!"):
        return []
    found = re.match(rb"[ \t]*([^ \t\n\0]*)", head[2:].split(b"\n", 1)[0])
    interp = found.group(1).decode(errors="replace") if found else ""
    return [] if interp.endswith("/env") or not interp.startswith("/") else [interp]


@dataclass(frozen=True)
class Jail:
    """What one sandboxed bot process gets (see :func:`wrap`)."""

    binds: tuple[str, ...] = ()  # host paths bound read-only at the same place
    cwd: str | None = None  # a host folder bound as the working directory (--bot-cwd); None: HOME
    tmp_bytes: int = 256 << 20  # size of the private /tmp (working directory included)
    uid: int | None = None  # run as this host uid (referee is root); None: the referee's own
    seccomp: bytes | None = None  # the syscall filter's BPF program (see referee.seats.process.seccomp); None: none
    memory_bytes: int | None = None  # the memory the bot may use: what its /proc/meminfo shows
    writable_cwd: bool = False  # bind ``cwd`` read-write (a package's build step), else read-only


MASKED_PROC = ("/proc/locks", "/proc/loadavg", "/proc/meminfo")
"""Machine-wide ``/proc`` files replaced in the sandbox: every file lock on the machine (with its inode and owner
pid), the load, and the memory in use, all of which another sandbox moves. ``/proc/meminfo`` shows the bot's own
memory limit as its total (runtimes that size their heap from it then fit)."""
LAUNCHER = "/.koikoi-run"
"""The script inside the sandbox that execs the bot's command: bwrap's own command line (``/proc/1/cmdline``)
shows only ``bwrap --args N -- /bin/bash /.koikoi-run`` (or ``/bin/sh``), not the host's paths."""
BASH = "/bin/bash"
"""The launcher's shell where it moves the bot's stdout into place (multi-digit descriptors: not every ``sh``)."""
ENV = "/usr/bin/env"
"""What the launcher execs the bot's command through, without the ``SHLVL`` that bash exports."""


def _meminfo(limit: int | None) -> bytes:
    total = (limit or _host_memory()) >> 10
    lines = [("MemTotal", total), ("MemFree", total), ("MemAvailable", total), ("Buffers", 0), ("Cached", 0),
             ("SwapCached", 0), ("SwapTotal", 0), ("SwapFree", 0), ("Shmem", 0)]  # fmt: skip
    return "".join(f"{k + ':':<16}{v:>8} kB\n" for k, v in lines).encode()


@cache
def _host_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 1 << 30


@dataclass
class Wrapped:
    """A sandboxed command line: ``argv`` to exec, with the descriptors ``fds`` it reads (memfds holding bwrap's
    arguments, the filter and the masked files), which the caller passes to the child and then closes."""

    argv: list[str]
    fds: tuple[int, ...]
    stdout_fd: int | None = None  # the bot's stdout arrives as this descriptor (bwrap's own stdout: /dev/null)

    def close(self) -> None:
        """Close the descriptors (the child has its own copies)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = ()


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)  # inheritable only through pass_fds
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def wrap(bwrap: str, jail: Jail, argv: list[str], stdout_fd: int | None = None) -> Wrapped:
    """The bwrap command line that runs ``argv`` (already wrapped in its limits) inside ``jail``. Every option
    goes to bwrap through a descriptor (``--args``), and the command through a launcher script, so that nothing of
    the host's layout shows in the sandbox's process list.

    ``stdout_fd``: the write end of the bot's stdout pipe. Where bash is there to move it, it reaches the sandbox
    as that descriptor, not as bwrap's stdout, and the launcher makes it the bot's stdout: bwrap's own processes
    (outside and the sandbox's init) close every descriptor but their standard ones, so none of them holds the
    pipe, and a bot that closes its stdout is seen to at once, as without the sandbox."""
    fds: list[int] = []
    moved = stdout_fd if stdout_fd is not None and os.path.isfile(BASH) and os.path.isfile(ENV) else None

    def data(name: str, content: bytes) -> str:
        fds.append(_memfd(f"koikoi-{name}", content))
        return str(fds[-1])

    try:
        out = [*_namespaces(), *_system_view()]
        for path in MASKED_PROC:
            content = _meminfo(jail.memory_bytes) if path == "/proc/meminfo" else b""
            if path == "/proc/loadavg":
                content = b"0.00 0.00 0.00 1/1 1\n"
            out += ["--perms", "0444", "--ro-bind-data", data(path.rsplit("/", 1)[1], content), path]
        out += ["--perms", "1777", "--size", str(jail.tmp_bytes), "--tmpfs", "/tmp", "--perms", "0777", "--dir", HOME]
        out += ["--perms", "1777", "--size", str(min(jail.tmp_bytes, SHM_BYTES)), "--tmpfs", "/dev/shm"]
        # no pseudo-terminals: each one counts in a machine-wide number (/proc/sys/kernel/pty/nr) that a bot sets
        # exactly and another reads, and the machine's few thousand are shared by every sandbox
        out += ["--perms", "0555", "--size", "4096", "--tmpfs", "/dev/pts"]
        binds: list[str] = []
        for path in sorted(set(jail.binds)):  # a parent sorts before its children
            if not in_system_view(path) and os.path.exists(path) and not any(path.startswith(b + "/") for b in binds):
                binds.append(path)
        mounts = [*binds, *([jail.cwd] if jail.cwd is not None else [])]
        for parent in sorted({str(a) for m in mounts for a in Path(m).parents if str(a) not in ("/", "/tmp")}):
            out += ["--perms", "0755", "--dir", parent]  # bwrap would make missing parents 0700: unusable as a uid
        for path in binds:
            out += ["--ro-bind", path, path]
        if jail.cwd is not None:
            out += ["--bind" if jail.writable_cwd else "--ro-bind", jail.cwd, jail.cwd, "--chdir", jail.cwd]
        else:
            out += ["--chdir", HOME]
        command = argv
        if jail.uid is None and os.geteuid() == 0:
            out += ["--cap-drop", "ALL"]  # the referee's own user id, but none of root's powers
        if jail.uid is not None:
            setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
            command = [
                setpriv, f"--reuid={jail.uid}", f"--regid={jail.uid}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", *argv,
            ]  # fmt: skip
        run = f"exec {shlex.join(command)}"
        if moved is not None:  # bash exports a SHLVL of its own: the bot's environment stays the one it is given
            run = f"exec {shlex.join([ENV, '-u', 'SHLVL', '--', *command])} 1>&{moved} {moved}>&-"
        out += ["--perms", "0444", "--ro-bind-data", data("run", f"{run}\n".encode()), LAUNCHER]
        out += ["--remount-ro", "/dev", "--remount-ro", "/"]  # bwrap's own tmpfs, writable by an unprivileged bot
        if jail.seccomp is not None:
            out += ["--seccomp", data("seccomp", jail.seccomp)]
        args = data("args", b"".join(a.encode() + b"\0" for a in out))
        shell = "/bin/sh" if moved is None else BASH
        return Wrapped([bwrap, "--args", args, "--", shell, LAUNCHER], tuple(fds), moved)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def exposed_output(
    outputs: Iterable[tuple[str, Path]], visible: Iterable[tuple[str, Path]]
) -> tuple[str, str, str] | None:
    """The first output of the run (``(name, path)``: a replay, the logs, a results folder) that lies inside what a
    bot can read (``(name, path)``: the bots' working folder, a readable file), as (the output's name, the name of
    what can read it, the sentence that says so), or None. Bots would read it while it is written, and could leave
    files there for each other."""
    seen = [(what, _real(p)) for what, p in visible]
    for name, path in outputs:
        where = _real(path)
        for what, folder in seen:
            if where == folder or folder in where.parents:
                return name, what, f"{path} is inside {folder}, which the bots can read: write it elsewhere"
    return None


def _real(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def sandbox_env(env: dict[str, str]) -> dict[str, str]:
    """The environment inside the sandbox: ``env`` with ``HOME``, ``TMPDIR`` and ``PWD`` pointing inside."""
    return {**env, "HOME": HOME, "TMPDIR": "/tmp", "PWD": HOME}
