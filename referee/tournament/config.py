"""What a tournament is: its bots, rules, format, size, time control and seed, from the CLI or a TOML file.

A :class:`TournamentConfig` is everything that decides the schedule and the games. Its :meth:`fingerprint`
identifies a tournament: shards of one tournament share it, and ``--resume`` and ``merge`` refuse output
folders whose fingerprints differ. How a run is executed (jobs, shard, CI gates) lives in :class:`RunOptions`,
outside it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import secrets
import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from referee.engine import Deal, EngineError, Rules, load_rules, rules_from_dict
from referee.errors import UsageError
from referee.records import TimeControl
from referee.seats import package
from referee.seats.package import Package
from referee.seats.process import ProcessError, absolute_command
from referee.seats.settings import MIN_MS, BotSettings, SettingsError, from_table

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,31}$")
"""Bot names: 1..32 characters of letters, digits and ``_.+-`` (they appear in file names and tables)."""


class TournamentError(UsageError):
    """A bad tournament definition, option or output folder."""


class SignatureError(TournamentError):
    """A tournament file whose signature does not check under the key: edited, moved, forged or cut, or signed
    with another key."""


class Format(StrEnum):
    """Who plays whom."""

    ROUND_ROBIN = "round-robin"  # every bot against every other bot
    GAUNTLET = "gauntlet"  # one bot against each of the others


@dataclass(frozen=True)
class BotSpec:
    """A bot of the tournament: its name in the tables, the command line that starts it, and its own settings
    (over the tournament's)."""

    name: str
    command: str
    settings: BotSettings = field(default_factory=BotSettings)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (``settings`` only when some are set)."""
        out: dict[str, Any] = {"name": self.name, "command": self.command}
        if not self.settings.empty:
            out["settings"] = self.settings.to_json()
        return out


@dataclass(frozen=True)
class Sprt:
    """Sequential probability ratio test of H0: elo = elo0 against H1: elo = elo1 (first bot vs second)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    @staticmethod
    def parse(text: str) -> Sprt:
        """From ``"elo0,elo1,alpha,beta"`` (alpha and beta optional, 0.05 each)."""
        parts = [p.strip() for p in text.split(",")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise TournamentError.about("sprt", f"{{}} {text!r}: expected numbers elo0,elo1[,alpha,beta]") from None
        if len(values) not in (2, 4):
            raise TournamentError.about("sprt", f"{{}} {text!r}: expected elo0,elo1 or elo0,elo1,alpha,beta")
        sprt = Sprt(*values)
        if not sprt.elo0 < sprt.elo1:
            raise TournamentError.about("sprt", f"{{}} {text!r}: elo0 must be below elo1")
        if not (0 < sprt.alpha < 0.5 and 0 < sprt.beta < 0.5):
            raise TournamentError.about("sprt", f"{{}} {text!r}: alpha and beta must lie between 0 and 0.5")
        return sprt


@dataclass(frozen=True)
class Stage:
    """A ladder step (``tournament add``): entrants joined the tournament (they play every active bot, and each
    other), and bots retired (they play no new pairing; their games still count). ``start`` is the schedule
    position of its first match (after every match scheduled before it, added pairs included). ``salt`` is the
    step's own secret, drawn when the step is made: every match from ``start`` on is dealt from the tournament
    seed and this salt (:meth:`seed`), so that the tournament seed, published once the tournament before the
    step was complete, tells nobody the deals of the step (an entrant would otherwise know its own deals)."""

    added: tuple[str, ...]
    retired: tuple[str, ...] = ()
    start: int = 0
    salt: int | None = None  # None: a step made before steps had salts (dealt from the tournament seed)

    def seed(self, tournament_seed: int) -> int:
        """The seed the step's matches are dealt from: 52 bits of SHA-256 of the tournament seed and the salt."""
        if self.salt is None:
            return tournament_seed
        text = f"koikoi-tournament/step/{tournament_seed}/{self.salt}"
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 12

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (the ``ladder`` list of the config)."""
        out: dict[str, Any] = {"added": list(self.added), "retired": list(self.retired), "start": self.start}
        if self.salt is not None:
            out["salt"] = str(self.salt)
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> Stage:
        """The inverse of :meth:`to_json`."""
        salt = data.get("salt")
        return Stage(
            tuple(str(n) for n in data["added"]), tuple(str(n) for n in data.get("retired", [])), int(data["start"]),
            None if salt is None else int(salt),
        )  # fmt: skip


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that decides the schedule and the games of a tournament."""

    bots: tuple[BotSpec, ...]
    rules: Rules
    format: Format = Format.ROUND_ROBIN
    gauntlet: str | None = None  # the gauntlet bot's name (default: the first bot)
    pairs: int = 10  # deal pairs per pairing: each pair is two matches with the seats swapped
    seed: int = 1
    time: TimeControl = field(default_factory=TimeControl)
    seed_drawn: bool = field(default=False, compare=False)  # the seed was drawn at random, not given
    sandbox: str = "auto"  # auto, bwrap or none (referee.seats.sandbox)
    bot_env: tuple[tuple[str, str], ...] = ()  # added to every bot's environment
    settings: BotSettings = field(default_factory=BotSettings)  # every bot's limits, files, interpreter
    suite: tuple[tuple[Deal, ...], ...] = ()  # a deal suite: pair k plays suite[k % len], then the shuffle
    workdir: str | None = field(default=None, compare=False)  # where relative bot paths are read from
    ponder: bool = False  # bots may run while it is not their turn (else they are frozen)
    require_cgroups: bool = False  # a machine without usable cgroups is an error, not a fall-back to rlimits
    event: str | None = field(default=None, compare=False)  # the event's name, shown on its pages
    event_description: str = field(default="", compare=False)  # a line or two about the event
    ladder: tuple[Stage, ...] = ()  # entrants added (and bots retired) after the start, in order

    @property
    def retired(self) -> tuple[str, ...]:
        """The bots retired by a ladder step: they play no new pairing."""
        return tuple(n for s in self.ladder for n in s.retired)

    def __post_init__(self) -> None:
        names = [b.name for b in self.bots]
        for name in names:
            if not NAME_RE.match(name):
                raise TournamentError(f"bot name {name!r}: use 1 to 32 letters, digits or _.+- (start alphanumeric)")
        if len(set(names)) != len(names):
            raise TournamentError(f"bot names must be unique; got {', '.join(names)}")
        if len(self.bots) < 2:
            raise TournamentError("a tournament needs at least two bots")
        for b in self.bots:
            if not b.command.strip():
                raise TournamentError(f"bot {b.name!r}: empty command")
        if self.gauntlet is not None and self.format is not Format.GAUNTLET:
            raise TournamentError("a gauntlet bot is named but the format is not gauntlet")
        if self.gauntlet is not None and self.gauntlet not in names:
            bots = ", ".join(names)
            raise TournamentError.about("gauntlet", f"{{}} {self.gauntlet!r} is not one of the bots ({bots})")
        if not 1 <= self.pairs <= 1_000_000:
            raise TournamentError(f"pairs: {self.pairs} is outside 1..1000000")
        for key, least in MIN_MS.items():
            if not least <= getattr(self.time, key) <= 3_600_000:
                raise TournamentError(f"time {key}: {getattr(self.time, key)} is outside {least}..3600000")
        self._check_ladder(names)

    def _check_ladder(self, names: list[str]) -> None:
        """Every ladder step adds bots that were not there before and retires bots that were."""
        added = [n for s in self.ladder for n in s.added]
        if len(set(added)) != len(added) or not set(added) <= set(names):
            raise TournamentError("malformed ladder: an entrant is added twice or is not one of the bots")
        active = [n for n in names if n not in added]
        for stage in self.ladder:
            for name in stage.retired:
                if name not in active:
                    raise TournamentError.about("retire", f"{{}} {name!r}: not an active bot ({', '.join(active)})")
                active.remove(name)
            active += stage.added
        if self.format is Format.GAUNTLET and self.hero in self.retired:
            raise TournamentError.about(
                "retire", f"{{}} {self.hero!r}: the gauntlet bot plays every pairing; it cannot retire"
            )

    def settings_of(self, name: str) -> BotSettings:
        """The settings of bot ``name``: its own over the tournament's (time control, environment, limits)."""
        t = self.time
        base = BotSettings(t.startup_ms, t.move_ms, t.bank_ms, env=self.bot_env)
        own = next(b.settings for b in self.bots if b.name == name)
        return own.over(self.settings.over(base))

    def command_of(self, name: str) -> str:
        """The command line of bot ``name`` with its relative paths made absolute against :attr:`workdir` (the
        folder the tournament was started from), so a resume from another folder starts the same programs."""
        command = next(b.command for b in self.bots if b.name == name)
        return command if self.workdir is None else absolute_command(command, Path(self.workdir))

    def time_of(self, name: str) -> TimeControl:
        """The time control of bot ``name``."""
        return self.settings_of(name).time

    @property
    def hero(self) -> str:
        """The gauntlet bot (or the first bot): the bot ``--min-score`` and SPRT speak of."""
        return self.gauntlet or self.bots[0].name

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, complete: the rules are written out in full, so a resume needs no rules file."""
        return {
            "bots": [b.to_json() for b in self.bots],
            "rules": self.rules.to_dict(),
            "format": self.format.value,
            "gauntlet": self.gauntlet,
            "pairs": self.pairs,
            "seed": self.seed,
            "time": self.time.to_json(),
            "sandbox": self.sandbox,
            "bot_env": [list(p) for p in self.bot_env],
            **({"settings": self.settings.to_json()} if not self.settings.empty else {}),
            **({"deals": [[d.to_json() for d in seq] for seq in self.suite]} if self.suite else {}),
            **({"workdir": self.workdir} if self.workdir is not None else {}),
            **({"ponder": True} if self.ponder else {}),
            **({"require_cgroups": True} if self.require_cgroups else {}),
            **({"event": {"name": self.event, "description": self.event_description}} if self.event else {}),
            **({"ladder": [s.to_json() for s in self.ladder]} if self.ladder else {}),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> TournamentConfig:
        """The inverse of :meth:`to_json`; :class:`TournamentError` on a malformed document."""
        try:
            return TournamentConfig(
                bots=tuple(
                    BotSpec(str(b["name"]), str(b["command"]), BotSettings.from_json(b.get("settings", {})))
                    for b in data["bots"]
                ),
                rules=rules_from_dict(dict(data["rules"]), source="tournament rules"),
                format=Format(data["format"]),
                gauntlet=data.get("gauntlet"),
                pairs=int(data["pairs"]),
                seed=int(data["seed"]),
                time=TimeControl.from_json(data["time"]),
                sandbox=str(data.get("sandbox", "auto")),
                bot_env=tuple((str(k), str(v)) for k, v in data.get("bot_env", [])),
                settings=BotSettings.from_json(data.get("settings", {})),
                suite=tuple(tuple(Deal.from_json(d) for d in seq) for seq in data.get("deals", [])),
                workdir=None if data.get("workdir") is None else str(data["workdir"]),
                ponder=bool(data.get("ponder", False)),
                require_cgroups=bool(data.get("require_cgroups", False)),
                event=str(data["event"]["name"]) if data.get("event") else None,
                event_description=str(data["event"].get("description", "")) if data.get("event") else "",
                ladder=tuple(Stage.from_json(s) for s in data.get("ladder", [])),
            )
        except (KeyError, TypeError, ValueError, EngineError, SettingsError) as exc:
            raise TournamentError(f"malformed tournament description: {exc}") from None

    def fingerprint(self) -> str:
        """A short hash of :meth:`to_json` (less :attr:`workdir` and the event's name): equal for the shards and
        resumes of one tournament, wherever they run."""
        data = self.to_json()
        data.pop("workdir", None)
        data.pop("event", None)
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


DEFAULT_MAX_FORFEITS = 0.1
"""With a CI gate, the share of its games a bot may forfeit before the gate fails (``--max-forfeits``)."""


@dataclass(frozen=True)
class RunOptions:
    """How a run is executed and judged; not part of the tournament's identity."""

    jobs: int = 1
    shard: tuple[int, int] = (1, 1)  # K/N, K from 1
    sprt: Sprt | None = None
    fail_if_worse: bool = False
    min_score: float | None = None
    fail_unless_better: bool = False  # the SPRT must accept H1
    max_forfeits: float = DEFAULT_MAX_FORFEITS  # with a gate: the share of its games a bot may forfeit
    backend: str = "local"  # where the matches run: local or ray (chosen afresh by each run, like jobs)
    ray_address: str | None = None  # the Ray cluster to join (None: a Ray runtime on this machine)
    ray_working_dir: str | None = None  # a folder Ray copies to every node, where the bots are started
    compress: bool = False  # replays written as .jsonl.gz
    until_separated: bool = False  # after the schedule, add pairs where adjacent ranks overlap (see ladder)
    max_pairs: int | None = None  # with until_separated: at most this many pairs added (None: the default)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the output folder (a resume reuses the shard and CI gates)."""
        return {
            "shard": list(self.shard),
            "sprt": dataclasses.asdict(self.sprt) if self.sprt else None,
            "fail_if_worse": self.fail_if_worse,
            "min_score": self.min_score,
            **({"fail_unless_better": True} if self.fail_unless_better else {}),
            **({"max_forfeits": self.max_forfeits} if self.max_forfeits != DEFAULT_MAX_FORFEITS else {}),
            "compress": self.compress,
            **({"until_separated": True, "max_pairs": self.max_pairs} if self.until_separated else {}),
        }

    @staticmethod
    def from_json(data: dict[str, Any], jobs: int) -> RunOptions:
        """The inverse of :meth:`to_json`, with ``jobs`` chosen afresh."""
        try:
            k, n = data["shard"]
            sprt = Sprt(**data["sprt"]) if data.get("sprt") else None
            return RunOptions(
                jobs, (int(k), int(n)), sprt, bool(data["fail_if_worse"]), data.get("min_score"),
                compress=data.get("compress", False) is True,
                fail_unless_better=data.get("fail_unless_better", False) is True,
                max_forfeits=float(data.get("max_forfeits", DEFAULT_MAX_FORFEITS)),
                until_separated=data.get("until_separated", False) is True,
                max_pairs=None if data.get("max_pairs") is None else int(data["max_pairs"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise TournamentError(f"malformed run options: {exc}") from None


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` with 1 <= K <= N."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise TournamentError.about("shard", f"{{}} {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(m.group(1)), int(m.group(2))


def parse_bot(text: str) -> BotSpec:
    """``NAME=COMMAND``, or a bot folder alone (named by its manifest)."""
    found = _package_of(text.strip(), f"{{}} {text!r}", "bots")
    if found is not None:
        return BotSpec(found.name, text.strip())
    name, sep, command = text.partition("=")
    if not sep and (problem := package.folder_problem(text)) is not None:
        raise TournamentError.about("bots", f"{{}} {problem}")
    if not sep or not name.strip() or not command.strip():
        raise TournamentError.about(
            "bots", f"{{}} {text!r}: expected NAME=COMMAND or a bot folder, e.g. greedy='python bots/greedy_bot.py'"
        )
    return BotSpec(name.strip(), command.strip())


def _package_of(command: str, source: str, setting: str | None = None) -> Package | None:
    """The bot package ``command`` names, if it does (:class:`TournamentError` for a bad manifest, ``source``
    saying where it was given, with a ``{}`` naming ``setting`` when one is given)."""
    try:
        return package.find(command)
    except package.PackageError as exc:
        message = f"{source}: {exc}"
        raise (TournamentError(message) if setting is None else TournamentError.about(setting, message)) from None


def resolve_rules(spec: str | Path, rounds: int | None = None, *, base_dir: Path | None = None) -> Rules:
    """A preset or rules file (relative paths against ``base_dir``), with an optional ``rounds`` override."""
    try:
        if isinstance(spec, str) and base_dir is not None and not Path(spec).is_absolute():
            candidate = base_dir / spec
            if candidate.is_file():
                spec = candidate
        rules = load_rules(spec)
    except EngineError as exc:
        raise TournamentError(str(exc)) from None
    return rules if rounds is None else with_rounds(rules, rounds)


def with_rounds(rules: Rules, rounds: int) -> Rules:
    """``rules`` with another number of rounds per match (checked like a rules file)."""
    data = rules.to_dict()
    data["rounds"] = rounds
    try:
        return rules_from_dict(data, source="rounds")
    except EngineError as exc:
        raise TournamentError(str(exc)) from None


_FILE_KEYS = {"bots", "rules", "rounds", "format", "gauntlet", "pairs", "seed", "time", "sandbox", "bot_env", "limits",
              "ponder", "require_cgroups", "event"}  # fmt: skip
_LIMIT_TABLE_KEYS = frozenset({"memory_mb", "cpu_s", "processes", "cpus", "files", "python"})


def _toml_problem(text: str, message: str) -> str:
    """The TOML parser's message, and for a key given twice the key and what that usually means here."""
    found = re.match(r"Cannot overwrite a value \(at line (\d+), column \d+\)", message)
    if found is None:
        return f"not valid TOML: {message}"
    line = int(found.group(1))
    lines = text.splitlines()
    key = lines[line - 1].split("=", 1)[0].strip() if 0 < line <= len(lines) else "?"
    tables = [m.group(1).strip() for t in lines[: line - 1] if (m := re.match(r"\s*\[([^\]]+)\]", t))]
    if tables and tables[-1] == "bots":
        return f"line {line}: bot {key} is named twice (each bot needs a name of its own)"
    return f"line {line}: {key} is given twice"


def load_config(path: Path | str) -> TournamentConfig:
    """A tournament file (TOML); see ``examples/tournament.toml``. Unknown keys are errors."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise TournamentError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise TournamentError(f"{path}: not valid TOML: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TournamentError(f"{path}: {_toml_problem(text, str(exc))}") from None
    return config_from_dict(data, source=str(path), base_dir=path.parent)


def config_from_dict(
    data: dict[str, Any], *, source: str = "tournament", base_dir: Path | None = None
) -> TournamentConfig:
    """A tournament from the table of a tournament file."""
    unknown = set(data) - _FILE_KEYS
    if unknown:
        raise TournamentError(
            f"{source}: unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(_FILE_KEYS))}"
        )
    bots_table = data.get("bots")
    if not isinstance(bots_table, dict) or not all(isinstance(v, str | dict) for v in bots_table.values()):
        raise TournamentError(f'{source}: [bots] must be a table of name = "command" or name = {{command = ...}}')
    limits_table = data.get("limits", {})
    if not isinstance(limits_table, dict) or set(limits_table) - _LIMIT_TABLE_KEYS:
        raise TournamentError(f"{source}: [limits] takes {', '.join(sorted(_LIMIT_TABLE_KEYS))}")
    try:
        limits = from_table(limits_table, f"{source}: [limits]", base_dir=base_dir)
        bots = tuple(_bot_from_file(n, v, source, base_dir) for n, v in bots_table.items())
    except SettingsError as exc:
        raise TournamentError(str(exc)) from None
    time_table = data.get("time", {})
    if not isinstance(time_table, dict):
        raise TournamentError(f"{source}: [time] takes startup_ms, move_ms, bank_ms")
    if unknown_time := sorted(set(time_table) - {"startup_ms", "move_ms", "bank_ms"}):
        raise TournamentError(
            f"{source}: [time] has no key {', '.join(unknown_time)}; it takes startup_ms, move_ms, bank_ms"
        )
    event_table = data.get("event", {})
    if not isinstance(event_table, dict) or set(event_table) - {"name", "description"} or not all(
        isinstance(v, str) for v in event_table.values()
    ):
        raise TournamentError(f'{source}: [event] takes name = "..." and description = "..."')
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in time_table.values()):
        raise TournamentError(f"{source}: [time] values must be whole milliseconds")
    rounds = data.get("rounds")
    for key, kind in (
        ("pairs", int),
        ("seed", int),
        ("rounds", int),
        ("rules", str),
        ("format", str),
        ("gauntlet", str),
        ("sandbox", str),
    ):
        value = data.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise TournamentError(f"{source}: {key} must be a {'whole number' if kind is int else 'string'}")
    if not 0 <= data.get("seed", 0) <= 2**64 - 1:
        raise TournamentError(f"{source}: seed must be a whole number from 0 to {2**64 - 1}")
    try:
        fmt = Format(data.get("format", Format.ROUND_ROBIN.value))
    except ValueError:
        raise TournamentError(f"{source}: format must be one of {', '.join(f.value for f in Format)}") from None
    env_table = data.get("bot_env", {})
    if not isinstance(env_table, dict) or not all(isinstance(v, str) for v in env_table.values()):
        raise TournamentError(f'{source}: [bot_env] must be a table of NAME = "value"')
    if data.get("sandbox", "auto") not in ("auto", "bwrap", "none"):
        raise TournamentError(f"{source}: sandbox must be auto, bwrap or none")
    for key in ("ponder", "require_cgroups"):
        if not isinstance(data.get(key, False), bool):
            raise TournamentError(f"{source}: {key} must be true or false")
    try:
        return TournamentConfig(
            bots=bots,
            rules=resolve_rules(data.get("rules", "guide"), rounds, base_dir=base_dir),
            format=fmt,
            gauntlet=data.get("gauntlet"),
            pairs=data.get("pairs", 10),
            seed=data["seed"] if "seed" in data else secrets.randbits(52),
            time=TimeControl(**time_table),
            seed_drawn="seed" not in data,
            sandbox=data.get("sandbox", "auto"),
            bot_env=tuple(env_table.items()),
            settings=limits,
            ponder=data.get("ponder", False),
            require_cgroups=data.get("require_cgroups", False),
            event=event_table.get("name") or None,
            event_description=event_table.get("description", ""),
        )
    except TournamentError as exc:  # a value the tournament refuses (pairs -3): named with the file
        if str(exc).startswith(source):
            raise
        raise TournamentError(f"{source}: {exc}") from None


def _bot_from_file(name: str, value: str | dict[str, Any], source: str, base_dir: Path | None) -> BotSpec:
    """A bot of a tournament file: ``name = "command"`` or ``name = {command = "...", memory_mb = ..., ...}``."""
    if isinstance(value, str):
        return BotSpec(name, _from_file(value, base_dir, f"{source}: bots.{name}"))
    command = value.get("command")
    if not isinstance(command, str):
        raise TournamentError(f'{source}: bots.{name}: give its command = "..."')
    where = f"{source}: bots.{name}"
    return BotSpec(
        name, _from_file(command, base_dir, where),
        from_table(value, where, base_dir=base_dir, extra=frozenset({"command"})),
    )  # fmt: skip


def _from_file(command: str, base_dir: Path | None, where: str) -> str:
    """A tournament file's bot command with its paths (a bot folder, the program, arguments holding a ``/``)
    read relative to the file's folder."""
    if base_dir is None or not command.strip():
        return command
    try:
        return absolute_command(command, base_dir)
    except ProcessError as exc:
        raise TournamentError(f"{where}: {exc}") from None
