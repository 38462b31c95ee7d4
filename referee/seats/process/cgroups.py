"""A control group for every sandboxed bot: memory, process count and CPU share of the whole bot, and its freezer.

:func:`support` looks once per referee process at what the machine offers and says in one line why cgroups cannot
be used where they cannot; :class:`BotCgroup` is one bot's group (made before the bot starts, joined by the
bot's first process before it execs bwrap, so every process of the bot is in it from the start, and removed when
the bot is closed).

* **cgroup v2** (the unified hierarchy: most current systems). The referee needs a subtree it may write: as root,
  or under ``systemd-run --user --scope -p Delegate=yes``. The referee moves itself into a leaf of its own group
  (``koikoi-referee-main``: a v2 group that hands controllers to children may hold no process), enables the
  ``memory``, ``pids`` and ``cpu`` controllers below it and makes ``koikoi-referee-PID-XXXX/bot-N`` groups beside
  that leaf. ``memory.max`` (``memory.swap.max`` 0, ``memory.oom.group`` 1), ``pids.max``, ``cpu.max``; the
  freezer is ``cgroup.freeze``.
* **cgroup v1** (as root): a group per bot in each of the ``memory``, ``pids`` and ``cpu`` hierarchies, below the
  referee's own group in each. ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes`` where swap is
  accounted), ``pids.max``, ``cpu.cfs_quota_us``. The freezer is a group in the unified hierarchy when one is
  mounted beside v1 (``cgroup.freeze`` needs no controller, and costs a few microseconds where the v1
  ``freezer.state`` costs some 75), else the v1 ``freezer`` hierarchy.

The bot's processes are in a child group ``bot-N/turn`` of its freezer group, and the freezer acts on that child
only: once the bot runs, :meth:`BotCgroup.release` moves bwrap's own two processes (the sandbox's monitor and its
reaper, which run no code of the bot) up into ``bot-N``, inside the same limits. A freezer write costs a few
microseconds more for every process it stops, on the referee's path at every change of turn.

The memory controller charges everything the kernel charges to the group: anonymous memory, page cache, shared
memory, tmpfs (the bot's ``/tmp``) and memfd pages, kernel memory. Where no freezer exists, :meth:`BotCgroup.freeze`
stops every process of the group with SIGSTOP (read from its member list until it no longer grows).

The environment variable :data:`SWITCH_VAR` set to ``off`` makes :func:`support` report cgroups unavailable (a
diagnostic for the hostile battery's controls, and for machines where the organiser does not want them).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

SWITCH_VAR = "KOIKOI_REFEREE_CGROUPS"
"""``off``: do not use cgroups (bots get the rlimit fallback)."""
PERIOD_US = 100_000
"""The CPU quota's period (microseconds)."""
CONTROLLERS = ("memory", "pids", "cpu")
"""The controllers every bot's group needs."""
TURN = "turn"
"""The child of a bot's freezer group that holds the bot's own processes (the freezer acts on it)."""
_PREFIX = "koikoi-referee-"
_LEAF = "koikoi-referee-main"


@dataclass(frozen=True)
class Support:
    """What the machine offers: ``version`` is ``"v2"`` or ``"v1"``; ``parents`` maps each controller (and
    ``"freeze"``) to the folder in which bots' groups are made; ``freezer`` is ``"cgroup.freeze"``,
    ``"freezer.state"`` or ``"sigstop"``."""

    version: str
    parents: dict[str, Path] = field(default_factory=dict)
    freezer: str = "sigstop"

    @property
    def mode(self) -> str:
        """``cgroup-v2`` or ``cgroup-v1``: what the replay header and the standings record."""
        return f"cgroup-{self.version}"


class CgroupUnavailable(Exception):
    """Cgroups cannot be used here; the message says why in one line."""


def _mounts() -> list[tuple[str, str, set[str]]]:
    """``(mount point, fstype, super options)`` of every cgroup mount of this process's mount namespace."""
    out: list[tuple[str, str, set[str]]] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].replace("\\040", " ")
        out.append((point, tail[0], set(tail[2].split(","))))
    return out


def _own_paths() -> dict[str, str]:
    """This process's group per controller (``"0"`` for the unified hierarchy), from ``/proc/self/cgroup``."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, names, path = parts
        if hid == "0" and names == "":
            out["0"] = path
        for name in names.split(","):
            if name:
                out[name] = path
    return out


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _inside(mount: str, own: str) -> Path:
    return Path(mount) / own.lstrip("/")


def _v2_parent(mount: str, own: str) -> Path:
    """A folder under which controllers are enabled for children, the referee moved out of it if needed."""
    base = _inside(mount, own)
    if not os.access(base, os.W_OK):
        raise CgroupUnavailable(
            f"the cgroup {own} is not writable (run as root, or under systemd-run --user --scope -p Delegate=yes)"
        )
    available = set((base / "cgroup.controllers").read_text().split())
    missing = [c for c in CONTROLLERS if c not in available]
    if missing:
        raise CgroupUnavailable(f"cgroup v2 controllers not delegated to {own}: {', '.join(missing)}")
    enabled = set((base / "cgroup.subtree_control").read_text().split())
    if all(c in enabled for c in CONTROLLERS):
        return base
    if own not in ("", "/"):  # a group that hands controllers down may hold no process: move out into a leaf
        leaf = base / _LEAF
        leaf.mkdir(exist_ok=True)
        for pid in (base / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                _write(leaf / "cgroup.procs", pid)
    _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS if c not in enabled))
    return base


def detect(mounts: list[tuple[str, str, set[str]]] | None = None, own: dict[str, str] | None = None) -> Support:
    """What the machine offers, from its cgroup ``mounts`` and this process's ``own`` groups (both read from
    ``/proc/self`` by default); :class:`CgroupUnavailable` with the reason. On cgroup v2 this moves the referee into
    a leaf of its group where needed, and enables the controllers below it."""
    if os.environ.get(SWITCH_VAR, "").strip().lower() in ("off", "0", "no", "false"):
        raise CgroupUnavailable(f"cgroups switched off ({SWITCH_VAR}=off)")
    mounts = _mounts() if mounts is None else mounts
    own = _own_paths() if own is None else own
    v2 = [m for m in mounts if m[1] == "cgroup2"]
    v1 = {c: m for m in mounts if m[1] == "cgroup" for c in m[2] if c in (*CONTROLLERS, "freezer")}
    if v2 and "0" in own:
        point = v2[0][0]
        controllers = _inside(point, own["0"]) / "cgroup.controllers"
        with contextlib.suppress(OSError):
            if all(c in controllers.read_text().split() for c in CONTROLLERS):
                parent = _v2_parent(point, own["0"])
                return Support("v2", {c: parent for c in (*CONTROLLERS, "freeze")}, "cgroup.freeze")
    if all(c in v1 for c in CONTROLLERS):
        if os.geteuid() != 0:
            raise CgroupUnavailable("cgroup v1 needs a referee running as root")
        parents = {c: _inside(v1[c][0], own.get(c, "/")) for c in CONTROLLERS}
        for c, p in parents.items():
            if not os.access(p, os.W_OK):
                raise CgroupUnavailable(f"the {c} cgroup {p} is not writable")
        freezer = "sigstop"
        if v2 and "0" in own and os.access(_inside(v2[0][0], own["0"]), os.W_OK):
            parents["freeze"], freezer = _inside(v2[0][0], own["0"]), "cgroup.freeze"
        elif "freezer" in v1 and os.access(_inside(v1["freezer"][0], own.get("freezer", "/")), os.W_OK):
            parents["freeze"], freezer = _inside(v1["freezer"][0], own.get("freezer", "/")), "freezer.state"
        return Support("v1", parents, freezer)
    if v2:
        raise CgroupUnavailable("cgroup v2 without the memory, pids and cpu controllers for the referee's group")
    raise CgroupUnavailable("no cgroup hierarchy with the memory, pids and cpu controllers is mounted")


_run: dict[Path, Path] = {}  # parent folder -> this referee process's folder in it (made on first use)
_run_pid = 0


@cache
def _support_cached() -> Support | str:
    try:
        return detect()
    except CgroupUnavailable as exc:
        return str(exc)
    except OSError as exc:
        return f"cgroups cannot be set up: {exc}"


def support() -> Support:
    """What the machine offers (looked at once per process); :class:`CgroupUnavailable` with the reason."""
    found = _support_cached()
    if isinstance(found, str):
        raise CgroupUnavailable(found)
    return found


def reason() -> str | None:
    """None where cgroups work, else the one-line reason."""
    found = _support_cached()
    return found if isinstance(found, str) else None


def _run_folder(parent: Path, v2_controllers: bool) -> Path:
    """This referee process's folder under ``parent`` (a forked worker makes its own), handing the controllers
    down to its children where ``v2_controllers``."""
    global _run_pid
    if _run_pid != os.getpid():
        _run.clear()
        _run_pid = os.getpid()
    folder = _run.get(parent)
    if folder is None:
        _sweep_stale(parent)
        folder = parent / f"{_PREFIX}{os.getpid()}-{secrets.token_hex(3)}-{_pid_namespace()}"
        folder.mkdir()
        if v2_controllers:
            _write(folder / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))
        _run[parent] = folder
    return folder


@cache
def _pid_namespace() -> str:
    """This process's pid namespace (``p`` and the inode of ``/proc/self/ns/pid``): part of its folders' names, so
    that a referee only sweeps the folders of referees whose pids it can see."""
    try:
        return f"p{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return "p0"


def _sweep_stale(parent: Path) -> None:
    """Remove the empty groups of referee processes that are gone (killed before they could clean up): only those
    made in this process's pid namespace (a live referee in another one has pids this process cannot see)."""
    with contextlib.suppress(OSError):
        for old in parent.glob(f"{_PREFIX}*"):
            pid, _, rest = old.name[len(_PREFIX):].partition("-")
            if old.name == _LEAF or not pid.isdigit() or not rest.endswith(f"-{_pid_namespace()}"):
                continue
            if Path(f"/proc/{pid}").exists():
                continue
            for child in old.glob("bot-*"):
                with contextlib.suppress(OSError):
                    (child / TURN).rmdir()
                with contextlib.suppress(OSError):
                    child.rmdir()
            with contextlib.suppress(OSError):
                old.rmdir()


@atexit.register
def remove_run() -> None:
    """Remove this process's folders (empty once every bot is closed): at exit, and where a worker process ends
    without running exit handlers."""
    if _run_pid != os.getpid():
        return
    for folder in _run.values():
        with contextlib.suppress(OSError):
            folder.rmdir()
    _run.clear()


def stop_all(members: Callable[[], Iterable[int]]) -> list[int]:
    """SIGSTOP every process that ``members()`` lists, reading the list again until it no longer grows (a
    stopped process forks no more, and a fork under way is restarted by the kernel when the stop arrives); the
    processes stopped. The freezer of a bot without a cgroup freezer."""
    stopped: set[int] = set()
    for _ in range(100):
        new = [p for p in members() if p not in stopped]
        if not new:
            break
        for pid in new:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
            stopped.add(pid)
    return sorted(stopped)


def continue_all(pids: Iterable[int]) -> None:
    """SIGCONT each of ``pids`` (those :func:`stop_all` stopped)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGCONT)


_serial = 0


@dataclass(frozen=True)
class Quota:
    """A bot's limits: memory (bytes; None: none), processes (None: none), CPUs (a share of the machine, e.g. 1.0)."""

    memory_bytes: int | None
    processes: int | None
    cpus: float | None


class BotCgroup:
    """One bot's group(s): made with :meth:`create`, joined through :attr:`procs_files` before the bot execs,
    frozen and thawed on the hot path, removed by :meth:`remove`."""

    def __init__(self, found: Support, folders: dict[str, Path]) -> None:
        self.support = found
        self.folders = folders
        self.turn: Path | None = None  # the child group the freezer acts on (where there is a freezer group)
        self.released = False
        self._freeze_fd = -1
        self.frozen = False
        self._stopped: list[int] = []  # the SIGSTOP freezer: processes stopped

    @classmethod
    def create(cls, quota: Quota) -> BotCgroup:
        """A new group with ``quota``; :class:`CgroupUnavailable` or :class:`OSError` where it cannot be made.

        Another referee on the machine may remove this process's folder while it holds no bot (it sweeps the
        empty folders of referees it cannot see, as one in another pid namespace): the folder is then made
        again."""
        found = support()
        for attempt in range(3):
            try:
                return cls._create(found, quota)
            except FileNotFoundError:
                if attempt == 2:
                    raise
                for parent, folder in list(_run.items()):  # a run folder gone: made again on the next attempt
                    if not folder.exists():
                        del _run[parent]
        raise AssertionError("unreachable")

    @classmethod
    def _create(cls, found: Support, quota: Quota) -> BotCgroup:
        global _serial
        _serial += 1
        name = f"bot-{os.getpid()}-{_serial}"
        folders: dict[str, Path] = {}
        made: list[Path] = []
        try:
            for key, parent in found.parents.items():
                folder = _run_folder(parent, found.version == "v2") / name
                if folder not in folders.values():
                    folder.mkdir()
                    made.append(folder)
                folders[key] = folder
            group = cls(found, folders)
            if found.freezer != "sigstop":
                group.turn = folders["freeze"] / TURN
                group.turn.mkdir()
                made.append(group.turn)
            group._limit(quota)
        except BaseException:
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        return group

    @property
    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the bot's first process writes its pid to, in order: each limits folder
        once, then the freezer's child group (on cgroup v2 that is inside the limits folder, which it replaces)."""
        folders = sorted({str(f) for f in self.folders.values()})
        if self.turn is not None:
            folders = [f for f in folders if f != str(self.folders["freeze"])] + [str(self.turn)]
        return [f"{f}/cgroup.procs" for f in folders]

    def release(self, pids: Iterable[int]) -> None:
        """Move ``pids`` (the sandbox's own processes, which run no code of the bot) out of the group the freezer
        stops, into the bot's group: still under its limits, never frozen, so a freeze stops fewer processes."""
        if self.turn is None:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                _write(self.folders["freeze"] / "cgroup.procs", str(pid))
        self.released = True

    def _limit(self, quota: Quota) -> None:
        mem, pids, cpu = (self.folders[c] for c in CONTROLLERS)
        if self.support.version == "v2":
            if quota.memory_bytes is not None:
                _write(mem / "memory.max", str(quota.memory_bytes))
                if (mem / "memory.swap.max").exists():
                    _write(mem / "memory.swap.max", "0")
            with contextlib.suppress(OSError):
                _write(mem / "memory.oom.group", "1")
            _write(pids / "pids.max", "max" if quota.processes is None else str(quota.processes))
            if quota.cpus is not None:
                _write(cpu / "cpu.max", f"{max(1000, round(quota.cpus * PERIOD_US))} {PERIOD_US}")
        else:
            if quota.memory_bytes is not None:
                _write(mem / "memory.limit_in_bytes", str(quota.memory_bytes))
                if (mem / "memory.memsw.limit_in_bytes").exists():
                    _write(mem / "memory.memsw.limit_in_bytes", str(quota.memory_bytes))
            _write(pids / "pids.max", "max" if quota.processes is None else str(quota.processes))
            if quota.cpus is not None:
                _write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
                _write(cpu / "cpu.cfs_quota_us", str(max(1000, round(quota.cpus * PERIOD_US))))
        if self.turn is not None:
            self._freeze_fd = os.open(self.turn / self.support.freezer, os.O_WRONLY | os.O_CLOEXEC)

    def pids(self) -> list[int]:
        """The processes in the group now (on cgroup v2 the limits folder and its freezer child)."""
        folders = [self.folders["pids"]]
        if self.turn is not None and self.turn.parent == folders[0]:
            folders.append(self.turn)
        out: list[int] = []
        for folder in folders:
            with contextlib.suppress(OSError):
                out += [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        return out

    def freeze(self) -> None:
        """Stop every process of the bot (idempotent). Writes one file (the cgroup freezer), or stops each
        process with SIGSTOP until the member list no longer grows."""
        if self.frozen:
            return
        self.frozen = True
        if self._freeze_fd >= 0:
            with contextlib.suppress(OSError):
                os.write(self._freeze_fd, b"1" if self.support.freezer == "cgroup.freeze" else b"FROZEN")
            return
        self._stopped = stop_all(self.pids)

    def thaw(self) -> None:
        """Let the bot run again (idempotent)."""
        if not self.frozen:
            return
        self.frozen = False
        if self._freeze_fd >= 0:
            with contextlib.suppress(OSError):
                os.write(self._freeze_fd, b"0" if self.support.freezer == "cgroup.freeze" else b"THAWED")
            return
        continue_all({*self._stopped, *self.pids()})
        self._stopped = []

    def _read(self, controller: str, name: str) -> str:
        try:
            return (self.folders[controller] / name).read_text()
        except OSError:
            return ""

    def peak_memory(self) -> int:
        """The most memory the group was charged (bytes), 0 where the kernel does not say."""
        name = "memory.peak" if self.support.version == "v2" else "memory.max_usage_in_bytes"
        text = self._read("memory", name).strip()
        return int(text) if text.isdigit() else 0

    def memory_kills(self) -> int:
        """How many processes the kernel killed for going over the group's memory limit."""
        name = "memory.events" if self.support.version == "v2" else "memory.oom_control"
        for line in self._read("memory", name).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def kill(self) -> None:
        """SIGKILL every process of the group (and let a frozen group go, so that they die)."""
        kill_file = self.folders["pids"] / "cgroup.kill"
        if self.support.version == "v2" and kill_file.exists():
            with contextlib.suppress(OSError):
                _write(kill_file, "1")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.thaw()

    def drop_cache(self) -> None:
        """Reclaim the memory still charged to the emptied group: the page cache of the files its processes
        read first (v1 ``memory.force_empty``, v2 ``memory.reclaim``). A page a bot brought into the cache stays
        there after the bot ends, and another process reading the same file can tell (by timing, or by calls
        that ask): one bit of a channel from a pair's first game to its second, so it goes with the bot."""
        memory = self.folders.get("memory")
        if memory is None:
            return
        with contextlib.suppress(OSError):
            if self.support.version == "v1":
                _write(memory / "memory.force_empty", "0")
            elif (current := self._read("memory", "memory.current").strip()).isdigit() and int(current) > 0:
                _write(memory / "memory.reclaim", current)

    def remove(self, wait_s: float = 1.0) -> None:
        """Kill what is left, drop the page cache charged to the group once its processes are gone
        (:meth:`drop_cache`), then remove the group's folders (waiting up to ``wait_s`` for the kernel to let
        the processes go)."""
        self.kill()
        if self._freeze_fd >= 0:
            os.close(self._freeze_fd)
            self._freeze_fd = -1
        deadline = time.monotonic() + wait_s
        while self.pids() and time.monotonic() < deadline:
            self.kill()
            time.sleep(0.005)
        self.drop_cache()
        for folder in [*([self.turn] if self.turn is not None else []), *set(self.folders.values())]:
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    self.kill()
                    time.sleep(0.005)
