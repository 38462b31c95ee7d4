"""What a bot may use: its time control, resource limits, environment, readable files and interpreter.

:class:`BotSettings` is the one record of them, for ``play``, a tournament, the learning environment's opponent and
the bot process layer (whose :class:`~referee.seats.process.Limits` is built from it by
:meth:`BotSettings.limits`, the only place). One unit per setting (below) and one meaning of each value: None is
*not set* (inherited: :meth:`BotSettings.over` lays per-bot values over the tournament's, and whatever is still
unset takes its default), 0 is *no limit*. The keys are the same everywhere (``--bot-option NAME:key=value``,
a tournament file's ``[limits]`` and bot tables, a bot's settings in ``tournament.json``):

========== =================================================================================
startup_ms time for the handshake (ms)
move_ms    time per decision (ms)
bank_ms    time bank per match (ms)
memory_mb  memory of the whole bot: its cgroup's limit, else per process (MiB; 0: none; default 2048)
cpu_s      CPU-time limit per bot process (s; 0: none; default none)
processes  processes and threads of one sandboxed bot (0: none; default 256)
cpus       the bot's CPU quota (a number of CPUs, e.g. 1 or 0.5; 0: none; default 1)
env        ``NAME=VALUE`` added to the bot's environment (repeat)
file       a host file or folder the sandboxed bot may read (repeat; ``files`` in a file)
python     the interpreter of a ``.py`` bot (default: the referee's own)
========== =================================================================================

A bad value is a :class:`SettingsError` whose :attr:`~referee.errors.RefereeError.setting` is the key, so that
the command line can name its flag instead.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import UsageError
from referee.records import TimeControl
from referee.seats.process import DEFAULT_CPUS, DEFAULT_MEMORY_MB, DEFAULT_PROCESSES, Limits
from referee.seats.sandbox import SandboxError, parse_env

TIME_KEYS = ("startup_ms", "move_ms", "bank_ms")
"""The time-control keys (milliseconds, up to 3600000; the handshake and a decision at least 1, the bank 0)."""
LIMIT_KEYS = ("memory_mb", "cpu_s", "processes")
"""The resource-limit keys (whole numbers, 0: no limit)."""
KEYS = (*TIME_KEYS, *LIMIT_KEYS, "cpus", "env", "file", "python")
"""Every key of ``--bot-option NAME:key=value``."""
_MAX = {"startup_ms": 3_600_000, "move_ms": 3_600_000, "bank_ms": 3_600_000, "memory_mb": 1 << 30,
        "cpu_s": 10**9, "processes": 1 << 20}  # fmt: skip
MIN_MS = {"startup_ms": 1, "move_ms": 1, "bank_ms": 0}
"""The least of each time-control key: no bot can answer in no time at all."""


MAX_CPUS = 1024
"""The largest CPU quota of one bot."""


class SettingsError(UsageError):
    """A bad bot setting (flag or tournament file); :attr:`setting` names its key."""


@dataclass(frozen=True)
class BotSettings:
    """Time control, limits, environment, readable files and interpreter of a bot; None (or empty): inherited."""

    startup_ms: int | None = None
    move_ms: int | None = None
    bank_ms: int | None = None
    memory_mb: int | None = None
    cpu_s: int | None = None
    processes: int | None = None
    env: tuple[tuple[str, str], ...] = ()
    files: tuple[str, ...] = ()
    python: str | None = None
    cpus: float | None = None

    def __post_init__(self) -> None:
        for key, top in _MAX.items():
            value, least = getattr(self, key), MIN_MS.get(key, 0)
            if value is not None and not least <= value <= top:
                raise SettingsError.about(key, f"{{}}: {value} is outside {least}..{top}")
        if self.cpus is not None and not 0 <= self.cpus <= MAX_CPUS:
            raise SettingsError.about("cpus", f"{{}}: {self.cpus} is outside 0..{MAX_CPUS}")

    @property
    def empty(self) -> bool:
        """Nothing is set."""
        return self == BotSettings()

    def over(self, base: BotSettings) -> BotSettings:
        """These settings laid over ``base``: each value set here wins; ``env`` and ``files`` add to base's (an
        environment variable set in both takes this one's value)."""
        values = {k: getattr(self, k) if getattr(self, k) is not None else getattr(base, k)
                  for k in (*TIME_KEYS, *LIMIT_KEYS, "python", "cpus")}  # fmt: skip
        env = dict(base.env)
        env.update(self.env)
        files = tuple(dict.fromkeys((*base.files, *self.files)))
        return BotSettings(**values, env=tuple(env.items()), files=files)

    @property
    def time(self) -> TimeControl:
        """The time control of these settings (each value unset: :class:`~referee.records.TimeControl`'s default)."""
        default = TimeControl()
        return TimeControl(*(getattr(default, k) if getattr(self, k) is None else getattr(self, k) for k in TIME_KEYS))

    def limits(
        self, *, sandbox: str = "auto", cwd: Path | str | None = None, ponder: bool = False,
        require_cgroups: bool = False,
    ) -> Limits:  # fmt: skip
        """The process layer's limits of a bot with these settings (each one unset takes its default, 0 none), in
        ``sandbox`` (``auto``, ``bwrap`` or ``none``) and working directory ``cwd`` (None: a fresh one);
        ``ponder`` and ``require_cgroups`` as in :class:`~referee.seats.process.Limits`."""
        memory = DEFAULT_MEMORY_MB if self.memory_mb is None else self.memory_mb
        return Limits(
            cpu_seconds=self.cpu_s or None, memory_bytes=(memory << 20) or None, sandbox=sandbox,
            cwd=None if cwd is None else Path(cwd),
            processes=DEFAULT_PROCESSES if self.processes is None else (self.processes or None),
            env=self.env, files=self.files, python=self.python,
            cpus=DEFAULT_CPUS if self.cpus is None else (self.cpus or None), ponder=ponder,
            require_cgroups=require_cgroups,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """Plain JSON of the values set (nothing for empty settings, so older descriptions keep their hash)."""
        out: dict[str, Any] = {}
        for key in (*TIME_KEYS, *LIMIT_KEYS, "python", "cpus"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.env:
            out["env"] = [list(p) for p in self.env]
        if self.files:
            out["files"] = list(self.files)
        return out

    @staticmethod
    def from_json(data: Any, source: str = "settings") -> BotSettings:
        """The inverse of :meth:`to_json`; :class:`SettingsError` for anything else."""
        if not isinstance(data, dict):
            raise SettingsError(f"{source}: expected an object of settings")
        try:
            env = tuple((str(k), str(v)) for k, v in data.get("env", []))
            return from_table({**data, "env": dict(env)}, source, base_dir=None)
        except (TypeError, ValueError) as exc:
            raise SettingsError(f"{source}: malformed settings: {exc}") from None


def _whole(value: Any, key: str, source: str) -> int:
    if type(value) is not int:
        raise SettingsError(f"{source}: {key} must be a whole number, got {value!r}")
    return value


def _cpus(value: Any, source: str) -> float:
    if type(value) not in (int, float) or value != value:
        raise SettingsError(f"{source}: cpus must be a number of CPUs (e.g. 1 or 0.5), got {value!r}")
    return float(value)


def _path(value: str, base_dir: Path | None) -> str:
    """``value`` made absolute against ``base_dir`` (the folder of a tournament file, else the current one)."""
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else ((base_dir or Path.cwd()) / path).absolute())


def _env_pair(text: str, source: str) -> tuple[str, str]:
    try:
        ((name, value),) = parse_env([text])  # the sandbox's own reading of NAME=VALUE
    except SandboxError:
        raise SettingsError(f"{source}: env {text!r}: expected NAME=VALUE") from None
    return name, value


def _python(value: str, base_dir: Path | None) -> str:
    """An interpreter: a bare name stays a name (looked up on PATH), a path is made absolute."""
    return value if "/" not in value else _path(value, base_dir)


def from_table(data: dict[str, Any], source: str, *, base_dir: Path | None, extra: frozenset[str] = frozenset()
               ) -> BotSettings:  # fmt: skip
    """Settings from a table of a tournament file (``env`` a table, ``files`` a list; relative paths against
    ``base_dir``); keys in ``extra`` are skipped (a bot table's ``command``), any other unknown key is an
    error."""
    known = {*TIME_KEYS, *LIMIT_KEYS, "cpus", "env", "files", "python"}
    unknown = set(data) - known - extra
    if unknown:
        raise SettingsError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    values: dict[str, Any] = {k: _whole(data[k], k, source) for k in (*TIME_KEYS, *LIMIT_KEYS) if k in data}
    if "cpus" in data:
        values["cpus"] = _cpus(data["cpus"], source)
    env = data.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise SettingsError(f'{source}: env must be a table of NAME = "value"')
    for name in env:
        _env_pair(f"{name}=", source)
    files = data.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise SettingsError(f"{source}: files must be a list of paths")
    python = data.get("python")
    if python is not None and (not isinstance(python, str) or not python):
        raise SettingsError(f"{source}: python must be a path or a program name")
    return BotSettings(
        **values, env=tuple(env.items()), files=tuple(_path(f, base_dir) for f in files),
        python=None if python is None else _python(python, base_dir),
    )  # fmt: skip


def parse_option(text: str, names: list[str]) -> tuple[str, BotSettings]:
    """``NAME:key=value`` of ``--bot-option``: the bot's name and the one setting (paths made absolute)."""
    name, colon, rest = text.partition(":")
    key, eq, value = rest.partition("=")
    source = f"--bot-option {text!r}"
    if not colon or not eq or not name:
        raise SettingsError(f"{source}: expected NAME:key=value, e.g. java:memory_mb=8192")
    if name not in names:
        raise SettingsError(f"{source}: no bot is named {name!r} ({', '.join(names)})")
    return name, parse_setting(key.strip(), value, source)


def parse_setting(key: str, value: str, source: str) -> BotSettings:
    """One ``key=value`` setting (see :data:`KEYS`)."""
    if key in (*TIME_KEYS, *LIMIT_KEYS):
        if not value.strip().isdigit():
            raise SettingsError(f"{source}: {key} takes a whole number")
        changes: dict[str, Any] = {key: int(value.strip())}
        return dataclasses.replace(BotSettings(), **changes)
    if key == "cpus":
        try:
            return BotSettings(cpus=_cpus(float(value), source))
        except ValueError:
            raise SettingsError(f"{source}: cpus takes a number of CPUs (e.g. 1 or 0.5)") from None
    if key == "env":
        return BotSettings(env=(_env_pair(value, source),))
    if key == "file":
        if not value:
            raise SettingsError(f"{source}: file takes a path")
        return BotSettings(files=(_path(value, None),))
    if key == "python":
        if not value:
            raise SettingsError(f"{source}: python takes a path or a program name")
        return BotSettings(python=_python(value, None))
    raise SettingsError(f"{source}: unknown key {key!r}; known: {', '.join(KEYS)}")


def combine(parts: list[BotSettings]) -> BotSettings:
    """Settings given one by one, later ones over earlier ones."""
    out = BotSettings()
    for part in parts:
        out = part.over(out)
    return out


def checked_files(settings: BotSettings, source: str | None = None) -> None:
    """:class:`SettingsError` when a readable file or folder of ``settings`` (of ``source``, e.g. a bot; None:
    the setting ``files`` itself) does not exist."""
    for f in settings.files:
        if not os.path.exists(f):
            if source is None:
                raise SettingsError.about("files", f"{{}} {f}: no such file or folder to make readable")
            raise SettingsError(f"{source}: no such file or folder to make readable: {f}")
