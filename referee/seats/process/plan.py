"""How a bot command line becomes a process: its argument vector, limits, environment and sandbox.

:func:`plan` turns a command line and its :class:`Limits` into a :class:`Launch`: the final argument vector
(sandbox and limit wrappers included), the environment, and the working directory. Limits are applied by
small exec wrappers from util-linux (``prlimit`` for rlimits, ``setpriv`` for the parent-death signal and, in the
sandbox of a root referee, the unprivileged user), never by a ``preexec_fn``: the referee may run threads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import referee
from referee.errors import RefereeError
from referee.seats import package, sandbox
from referee.seats.process import cgroups, seccomp
from referee.seats.process.family import TOKEN_VAR


class ProcessError(RefereeError):
    """A bot process could not be used."""


class BotCommandError(ProcessError):
    """The command line cannot be started (empty, missing file, program not found)."""


DEFAULT_MEMORY_MB = 2048
"""The default address-space limit of a bot process, in MiB (``play --bot-memory-mb``; tournaments)."""
DEFAULT_PROCESSES = 256
"""The default number of processes and threads of one sandboxed bot (RLIMIT_NPROC inside the sandbox)."""
SCRIPTS = (".py", ".js")
"""The script files a command line's interpreter is added for (``python``, ``node``)."""


OPEN_FILES = 1024
"""The open files of one bot process (RLIMIT_NOFILE, soft and hard): what Linux gives a process by default. Open
files count in the machine's table (``fs.file-max``), which no cgroup bounds: a bot's processes hold at most
this many each."""
DEFAULT_TMP_MB = 256
"""The default size of a sandboxed bot's private ``/tmp`` (its working directory included), in MiB."""
DEFAULT_CPUS = 1.0
"""The default CPU share of one bot (its cgroup's quota: one CPU)."""
LIBRARY = Path(referee.__file__).resolve().parent
"""The running ``referee`` package: the library (``referee.bot``) a Python bot may import."""


@dataclass(frozen=True)
class Limits:
    """Resource limits, sandbox, environment and working directory of a bot process.

    ``cpu_seconds`` sets RLIMIT_CPU (SIGXCPU at the limit, SIGKILL a second later). ``memory_bytes`` is the
    memory of the whole bot: its cgroup's limit where cgroups work (:mod:`referee.seats.process.cgroups`), else
    RLIMIT_AS per process and the referee's check of the bot's resident memory; None leaves it off. ``cpus`` is
    the bot's CPU quota (its cgroup; None: no quota). ``ponder`` lets the bot run while it is not its turn (else it is
    frozen from the reading of its answer to the writing of its next request). ``require_cgroups`` makes a
    machine without usable cgroups an error instead of a fall-back to rlimits.

    ``cwd`` is the bot's working directory (read-only in the sandbox); None gives each bot process a fresh empty
    one (``/tmp/home`` in the sandbox, else a temporary directory removed when it is closed). ``sandbox`` is
    ``auto``, ``bwrap`` or ``none`` (see :mod:`referee.seats.sandbox`); ``processes`` (its cgroup, and
    RLIMIT_NPROC) and ``disk_bytes`` (the size of its ``/tmp`` and RLIMIT_FSIZE) apply in the sandbox. ``env`` is
    added to the allowlisted environment. ``files`` are host files or folders the sandboxed bot may read (bound
    read-only at the same path; unsandboxed, the bot reads what its user can). ``python`` is the interpreter of a
    ``.py`` bot (None: the referee's own, :data:`sys.executable`). ``workdir`` is a read-only folder the bot starts
    in (a bot package's, see :mod:`referee.seats.package`). Core dumps are always off and the bot is killed if the
    referee dies (Linux).
    """

    cpu_seconds: int | None = None  # RLIMIT_CPU
    memory_bytes: int | None = None  # the whole bot (cgroup), else RLIMIT_AS
    cwd: Path | None = None  # None: a fresh directory
    sandbox: str = "auto"
    processes: int | None = DEFAULT_PROCESSES
    disk_bytes: int = DEFAULT_TMP_MB << 20
    env: tuple[tuple[str, str], ...] = field(default=())
    files: tuple[str, ...] = ()
    python: str | None = None
    cpus: float | None = DEFAULT_CPUS
    ponder: bool = False
    require_cgroups: bool = False
    workdir: str | None = None  # a folder among files the bot starts in, read-only (a bot package's)

    def mode(self) -> str:
        """``bwrap`` or ``none``: what :attr:`sandbox` means here (:class:`~referee.seats.sandbox.SandboxError`
        for ``bwrap`` where it cannot work)."""
        return sandbox.choose(self.sandbox).mode


def expected_isolation(mode: str, ponder: bool) -> dict[str, str]:
    """How bots of sandbox ``mode`` (``bwrap`` or ``none``) will be held here: ``limits`` (``cgroup-v2``,
    ``cgroup-v1`` or ``rlimit``), ``freezer`` (``cgroup.freeze``, ``freezer.state``, ``sigstop``; ``off`` when
    they may ``ponder``) and ``filter`` (``seccomp`` or ``off``): what replay headers and standings record."""
    found = None if cgroups.reason() is not None else cgroups.support()
    filtered = mode == "bwrap" and seccomp.enabled() and seccomp.reason() is None
    freezer = "off" if ponder else "sigstop" if found is None else found.freezer
    return {"limits": "rlimit" if found is None else found.mode, "freezer": freezer,
            "filter": "seccomp" if filtered else "off"}  # fmt: skip


def isolation_warnings(sandboxed: bool, *, require_cgroups: bool = False) -> list[str]:
    """One line for each defence the bots of a run go without here: cgroups (:class:`~referee.seats.sandbox.
    SandboxError` instead where ``require_cgroups``), and for sandboxed bots the syscall filter."""
    out: list[str] = []
    why = cgroups.reason()
    if why is not None:
        if require_cgroups:
            raise sandbox.SandboxError.about("require_cgroups", f"{{}}: {why}")
        out.append(f"bots run without cgroups ({why}): memory and CPU time are limited per process, no CPU "
                   "share is enforced, and a bot is stopped between its turns with SIGSTOP")  # fmt: skip
    if sandboxed:
        if not seccomp.enabled():
            out.append(f"bots run without the syscall filter ({seccomp.SWITCH_VAR}=off)")
        elif (missing := seccomp.reason()) is not None:
            out.append(f"bots run without the syscall filter: {missing}")
    return out


def _probe(test: Callable[[], bool]) -> bool:
    """``test()`` (a ``Path`` check), False where the path cannot even be looked up (too long, a NUL byte)."""
    try:
        return test()
    except (OSError, ValueError):
        return False


def resolve_paths(argv: list[str], base: Path) -> list[str]:
    """``argv`` with its program (when it is a path), the ``.py``/``.js`` script after it, and each argument
    that holds a ``/`` and names an existing file or folder under ``base`` (also the value of an
    ``--opt=value`` argument) made absolute, ``..`` and folder symlinks resolved (see
    :func:`~referee.seats.package.real_path`): the command line is read where the referee runs, while the bot
    runs in a working directory of its own. A bare word is left alone."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        if i == 0:
            if "/" in arg:
                arg = package.real_path(str(base / arg))
        elif arg.startswith("-"):
            name, eq, value = arg.partition("=")
            if eq and package.is_path_word(value) and _probe((base / value).exists):
                arg = f"{name}={package.real_path(str(base / value))}"
        elif (package.is_path_word(arg) or (i == 1 and arg.endswith(SCRIPTS))) and _probe((base / arg).exists):
            arg = package.real_path(str(base / arg))
        out.append(arg)
    return out


def _split(command: str) -> list[str]:
    """The words of a command line (``shlex`` rules); :class:`BotCommandError` if there are none."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BotCommandError(f"bad bot command {command!r}: {exc}") from None
    if not argv:
        raise BotCommandError("empty bot command")
    return argv


def command_argv(command: str, python: str | None = None) -> list[str]:
    """The argument vector of a bot command line (a ``.py`` file runs with ``python``, by default the referee's
    interpreter; a ``.js`` file with ``node``); :class:`BotCommandError` if it cannot name a program."""
    argv = _split(command)
    first = argv[0]
    if first.endswith(".py"):
        return [python or sys.executable, *argv]
    if first.endswith(".js"):
        return ["node", *argv]
    return argv


def expand(command: str, limits: Limits) -> tuple[str, Limits]:
    """The plain command line and limits of ``command``: a bot package's (see :mod:`referee.seats.package`),
    or ``command`` itself, a house bot's ``.py`` file running with the referee's Python whatever ``limits``
    say. :class:`BotCommandError` for a bad package."""
    try:
        found = package.find(command)
    except package.PackageError as exc:
        raise BotCommandError(str(exc)) from None
    if found is not None:
        return package.apply(found, limits)
    if limits.python is not None and package.house_python(command):
        return command, dataclasses.replace(limits, python=None)
    return command, limits


def check_command(command: str, cwd: Path | None = None, python: str | None = None) -> list[str]:
    """The argument vector of ``command`` after checking that its program (or script file, and ``python``
    for a ``.py`` file) exists; a bot package's from its folder, with its own interpreter."""
    problem = package.folder_problem(command, "" if cwd is None else str(cwd))
    if problem is not None:
        raise BotCommandError(problem)
    plain, limits = expand(command, Limits(python=python))
    if limits.workdir is not None:
        cwd = Path(limits.workdir)
    command, python = plain, limits.python
    argv = command_argv(command, python)
    first = shlex.split(command)[0]
    base = cwd or Path.cwd()
    if first.endswith((".py", ".js")):
        if not _probe((base / first).is_file):
            raise BotCommandError(f"bot file not found: {first}")
        if first.endswith(".py") and python is not None and shutil.which(python) is None:
            raise BotCommandError(f"python interpreter not found or not executable: {python}")
        if first.endswith(".js") and shutil.which("node") is None:
            raise BotCommandError("node is needed for a .js bot but is not on PATH")
        return argv
    if "/" in first:
        path = base / first
        if not _probe(path.is_file):
            raise BotCommandError(f"bot program not found: {first}")
        if not os.access(path, os.X_OK):
            raise BotCommandError(f"bot program is not executable: {first}")
    elif shutil.which(first) is None:
        raise BotCommandError(f"bot program not found on PATH: {first}")
    return argv


def absolute_command(command: str, base: Path | None = None) -> str:
    """``command`` with its relative paths (a bot folder, the program or script, and arguments holding a ``/``
    that name existing files or folders under ``base``, by default the current folder) made absolute: a command
    that still works when read from another folder (a tournament resumed elsewhere, a tournament file's bots).
    :class:`BotCommandError` if it cannot be split."""
    argv = _split(command)
    here = base or Path.cwd()
    first = argv[0]
    if len(argv) == 1 and not os.path.isabs(first) and package.folder_of(str(here / first)) is not None:
        return shlex.join([package.real_path(str(here / first))])
    if not os.path.isabs(first) and ("/" in first or first.endswith((".py", ".js"))):
        argv[0] = package.real_path(str(here / first))
    return shlex.join([argv[0], *resolve_paths(argv, here)[1:]])


def bot_environment(cwd: Path, token: str, extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """The environment of an unsandboxed bot: the allowlist of :mod:`referee.seats.sandbox` plus ``HOME``,
    ``TMPDIR`` and ``extra``, ``PWD`` naming the bot's own working directory (not the referee's, where the
    replay is written), and the bot's token in ``KOIKOI_REFEREE_BOT`` (it marks the bot's descendants)."""
    env = sandbox.allowed_env()
    for name in ("HOME", "TMPDIR", "USER", "LOGNAME"):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra)
    env["PWD"] = str(cwd.absolute())
    env[TOKEN_VAR] = token
    return env


@functools.cache
def _library_found() -> bool:
    """Whether the referee's Python, started afresh as a bot's is (its environment cleared, from ``/``), finds
    the ``referee`` package that is running (not when the referee runs from a source checkout with
    ``PYTHONPATH``, or another installed version would be found first)."""
    code = "import importlib.util as u; s = u.find_spec('referee'); print(s.origin if s and s.origin else '')"
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=sandbox.allowed_env(), cwd="/", capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    found = proc.stdout.strip()
    return bool(found) and Path(found).resolve().parent == LIBRARY


def library_path(argv: list[str], env: dict[str, str]) -> None:
    """Let a bot that runs the referee's own Python import the referee's own library (``referee.bot``): where
    that Python would not find the running ``referee`` package by itself, the folder holding it goes on the
    bot's ``PYTHONPATH`` (after any the bot was given with ``--bot-env``). A sandboxed bot sees only the package
    in that folder."""
    if not argv or argv[0] != sys.executable or _library_found():
        return
    holder = str(LIBRARY.parent)
    given = env.get("PYTHONPATH")
    env["PYTHONPATH"] = f"{given}{os.pathsep}{holder}" if given else holder


@dataclass
class Launch:
    """A bot process ready to start: ``argv`` and ``env`` for the exec, ``cwd`` for the referee's side of it,
    ``bot_cwd`` as the bot sees it, ``tmpdir`` to remove at close, the sandbox ``mode`` and how the limits
    are applied (``limits``: ``"rlimit"``, or ``"none"`` where util-linux's ``prlimit`` is missing)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    bot_cwd: Path
    tmpdir: str | None
    mode: str
    limits: str = "rlimit"
    fds: tuple[int, ...] = ()  # descriptors the child inherits (bwrap's arguments, filter, masked files)
    filtered: bool = False  # the syscall filter applies
    stdout_fd: int | None = None  # the bot's stdout passed as this descriptor (the process's stdout: /dev/null)

    def close_fds(self) -> None:
        """Close the descriptors handed to the child (once it is started, or could not be)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = ()


def _rlimits(limits: Limits, sandboxed: bool, cgroup: bool = False) -> list[str]:
    """``prlimit`` options for ``limits`` (never above the referee's own hard limits); with ``cgroup`` the memory
    cgroup bounds the bot and no address-space limit is set (it keeps runtimes that reserve address space, the
    JVM, from starting)."""
    def cap(which: int, value: int) -> int:
        hard = resource.getrlimit(which)[1]
        return value if hard == resource.RLIM_INFINITY else min(value, hard)

    opts = [f"--core={cap(resource.RLIMIT_CORE, 0)}"]
    files = cap(resource.RLIMIT_NOFILE, OPEN_FILES)
    opts.append(f"--nofile={files}:{files}")
    if limits.cpu_seconds is not None:
        c = limits.cpu_seconds
        opts.append(f"--cpu={cap(resource.RLIMIT_CPU, c)}:{cap(resource.RLIMIT_CPU, c + 1)}")
    if limits.memory_bytes is not None and not cgroup:
        opts.append(f"--as={cap(resource.RLIMIT_AS, limits.memory_bytes)}")
    if sandboxed:
        opts.append(f"--fsize={cap(resource.RLIMIT_FSIZE, limits.disk_bytes)}")
        if limits.processes is not None:
            opts.append(f"--nproc={cap(resource.RLIMIT_NPROC, limits.processes)}")
    return opts


def limit_wrapper(limits: Limits, *, sandboxed: bool, cgroup: bool = False) -> list[str]:
    """The exec wrapper that applies ``limits`` to the command after it (``prlimit``; ``setpriv --pdeathsig``
    outside the sandbox, where bwrap's ``--die-with-parent`` does not apply). Empty where util-linux is
    missing (not Linux): then only the process group and the close-time kill bound the bot."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    out = [prlimit, *_rlimits(limits, sandboxed, cgroup), "--"]
    setpriv = shutil.which("setpriv")
    if not sandboxed and setpriv is not None:
        out = [setpriv, "--pdeathsig", "KILL", "--", *out]
    return out


def join_wrapper(procs_files: list[str]) -> list[str]:
    """An exec wrapper that puts its own process into the cgroups whose ``cgroup.procs`` files are given, then
    execs the command after it: every process of the bot starts inside its group (none can fork before)."""
    if not procs_files:
        return []
    joins = " && ".join(f"echo $$ > {shlex.quote(f)}" for f in procs_files)
    script = f'{joins} || {{ echo "koikoi-referee: cannot join the bot\'s cgroup" >&2; exit 125; }}; exec "$@"'
    return ["/bin/sh", "-c", script, "koikoi-join"]


def bound(argv: list[str], files: tuple[str, ...], *, arguments: bool = True, planned: bool = False,
          within: str | None = None) -> set[str]:  # fmt: skip
    """The host paths a sandboxed bot of ``argv`` (its paths made absolute) may read beyond the system: its
    program's roots (its venv and base installation, a version manager's folder, the program), its path
    arguments (with ``arguments``: the organiser's command line; a bot package's manifest names none, its folder
    is among ``files``), the referee's own Python and venv for a ``.py`` bot it runs, ``files``, and the
    referee's package (its public library, ``referee.bot``, for Python bots). An argument is bound where it
    exists; with ``planned``, every absolute argument counts, also one that does not exist yet (an output to
    be written there would be bound once it exists). ``within``: a bot package's folder (its programs' ``#!``
    lines and symlinks bind no program file outside it, see :func:`~referee.seats.sandbox.program_roots`)."""
    program = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0]) or argv[0]
    binds = set(sandbox.program_roots(program, within=within)) if os.path.isabs(program) else set()
    for arg in argv[1:] if arguments else ():
        value = arg.partition("=")[2] if arg.startswith("-") else arg
        if os.path.isabs(value) and (planned or _probe(Path(value).exists)):
            binds.add(value)
    if argv[0] == sys.executable:
        binds |= {sys.prefix, sys.base_prefix}
    binds |= {os.path.abspath(f) for f in files}
    binds.add(str(LIBRARY))
    return binds


def readable(
    command: str, files: tuple[str, ...] = (), python: str | None = None, *, planned: bool = True
) -> list[str]:
    """What a sandboxed bot of ``command`` may read beyond the system, as real paths: the folders and files
    :func:`plan` binds into its sandbox (a bot package's folder among them), and with ``planned`` each absolute
    path its command line names that does not exist yet (it would be bound once an output is written there; left
    out for bots that run unsandboxed, which read what they like). No output may lie inside one
    (:func:`~referee.seats.package.refuse_outputs`). :class:`BotCommandError` for a bad command line or package."""
    plain, limits = expand(command, Limits(files=files, python=python))
    argv = command_argv(plain, limits.python)
    if limits.workdir is None:
        argv = resolve_paths(argv, Path.cwd())
    paths = bound(argv, limits.files, arguments=limits.workdir is None, planned=planned, within=limits.workdir)
    return sorted({package.real_path(p) for p in paths})


def plan(
    command: str, limits: Limits, token: str, procs_files: list[str] | None = None, stdout_fd: int | None = None
) -> Launch:
    """How to start ``command`` under ``limits`` (:class:`BotCommandError`, or
    :class:`~referee.seats.sandbox.SandboxError` when ``bwrap`` was asked for and cannot work). ``stdout_fd``: the
    write end of the bot's stdout pipe (see :func:`~referee.seats.sandbox.wrap`; the launch's ``stdout_fd`` says
    whether it is passed as a descriptor or as the process's stdout). ``procs_files``
    are the bot's cgroup (see :mod:`referee.seats.process.cgroups`), joined before anything else runs; None: no
    cgroup."""
    command, limits = expand(command, limits)
    argv = command_argv(command, limits.python)
    choice = sandbox.choose(limits.sandbox)
    here = Path.cwd()
    cgroup = procs_files is not None
    join = join_wrapper(procs_files or [])
    if choice.mode == "none":
        tmpdir = None
        cwd = limits.cwd or (None if limits.workdir is None else Path(limits.workdir))
        if cwd is None:
            tmpdir = tempfile.mkdtemp(prefix="koikoi-bot-")
            cwd = Path(tmpdir)
        if cwd.absolute() != here.absolute() and limits.workdir is None:
            argv = resolve_paths(argv, here)
        wrapper = limit_wrapper(limits, sandboxed=False, cgroup=cgroup)
        env = bot_environment(cwd, token, limits.env)
        library_path(argv, env)
        kind = "rlimit" if wrapper else "none"
        return Launch([*join, *wrapper, *argv], env, cwd, cwd, tmpdir, "none", kind)
    bwrap = sandbox.bwrap_path()
    assert bwrap is not None  # choose() said it works
    if limits.workdir is None:
        argv = resolve_paths(argv, here)
    binds = bound(argv, limits.files, arguments=limits.workdir is None, within=limits.workdir)
    uid = sandbox.bot_uid() if os.geteuid() == 0 else None
    given = None if limits.cwd is None else str(limits.cwd.absolute())
    bpf = seccomp.program() if seccomp.enabled() and seccomp.reason() is None else None
    jail = sandbox.Jail(tuple(sorted(binds)), given, limits.disk_bytes, uid, bpf, limits.memory_bytes)
    wrapper = limit_wrapper(limits, sandboxed=True, cgroup=cgroup)
    chdir = [] if limits.workdir is None or given is not None else ["env", "-C", limits.workdir]
    inner = [*chdir, *wrapper, *argv]
    env = sandbox.sandbox_env(sandbox.allowed_env(limits.env))
    library_path(argv, env)
    if given is not None:
        env["PWD"] = given
    if chdir:
        env["PWD"] = limits.workdir or ""
    bot_cwd = Path(given or limits.workdir or sandbox.HOME)
    wrapped = sandbox.wrap(bwrap, jail, inner, stdout_fd)
    return Launch([*join, *wrapped.argv], env, Path("/"), bot_cwd, None, "bwrap", "rlimit" if wrapper else "none",
                  wrapped.fds, bpf is not None, wrapped.stdout_fd)  # fmt: skip
