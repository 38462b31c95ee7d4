"""The ``tournament`` command's one library call: options in, a finished (or judged) run out.

:func:`run` builds the tournament from the command-line options and the tournament file, takes the secret
seed, starts or resumes the output folder, plays, writes the report and the viewer pages, and returns what the
command prints. :func:`merge_folders` does the same for ``tournament merge``.

The seed decides every deal, so a bot that learns it can compute the cards it will be dealt and the
opponent's hand. Shards must share it, so it comes from a file (``--seed-file``) or the environment variable
:data:`SEED_ENV`, never the command line of a shipped example; the variable is removed from the referee's
environment as soon as it is read, so no bot process inherits it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import signal
import time
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, MappingProxyType
from typing import Any, TextIO

from referee.errors import Interrupted
from referee.records import TimeControl
from referee.replay.reader import first_line
from referee.seats.process import isolation_warnings
from referee.seats.sandbox import MODES, exposed_output, parse_env, resolve
from referee.seats.settings import BotSettings, SettingsError, checked_files, combine, parse_option
from referee.tournament.commitment import commit
from referee.tournament.config import (
    DEFAULT_MAX_FORFEITS,
    BotSpec,
    Format,
    RunOptions,
    Sprt,
    TournamentConfig,
    TournamentError,
    load_config,
    parse_bot,
    parse_shard,
    resolve_rules,
    with_rounds,
)
from referee.tournament.folder import NO_KEY, RESULTS, existing_replay, signing_key
from referee.tournament.gates import EXIT_GATE, EXIT_OK
from referee.tournament.merge import MergeResult, merge
from referee.tournament.preflight import check_bots
from referee.tournament.report import to_json
from referee.tournament.session import Interim, Outcome, check_new, default_jobs, play, resume, start
from referee.tournament.store import Store
from referee.tournament.suite import load_suite

SEED_ENV = "KOIKOI_SEED"
"""The environment variable that may hold the tournament's secret seed (removed once read)."""
MAX_SEED = 2**64 - 1


DESCRIBES = MappingProxyType({"describes": True})
"""The metadata of a :class:`TournamentRequest` field that describes the tournament: kept in its folder, so
refused with ``resume``."""
RUNS = MappingProxyType({"describes": False})
"""The metadata of a :class:`TournamentRequest` field about this run only: allowed with ``resume``."""


GUESSABLE_SEEDS = 1 << 32
"""A seed below this is warned of: a search over it, through the published commitment's scrypt (about 0.1 s a
seed), is within reach of a contestant with some machines; a drawn seed has 52 random bits."""


@dataclass(frozen=True)
class TournamentRequest:
    """What the ``tournament`` command asks: the options that describe the tournament (over its file's; kept
    in its folder) and those of this run (None, empty or False: not given). Every field says which it is in its
    metadata (``describes``): :meth:`described` is what a ``resume`` refuses."""

    bots: tuple[str, ...] = field(default=(), metadata=DESCRIBES)
    config: Path | None = field(default=None, metadata=DESCRIBES)
    rules: str | None = field(default=None, metadata=DESCRIBES)
    rounds: int | None = field(default=None, metadata=DESCRIBES)
    format: str | None = field(default=None, metadata=DESCRIBES)
    gauntlet: str | None = field(default=None, metadata=DESCRIBES)
    pairs: int | None = field(default=None, metadata=DESCRIBES)
    seed: int | None = field(default=None, metadata=DESCRIBES)
    seed_file: Path | None = field(default=None, metadata=DESCRIBES)
    startup_ms: int | None = field(default=None, metadata=DESCRIBES)
    move_ms: int | None = field(default=None, metadata=DESCRIBES)
    bank_ms: int | None = field(default=None, metadata=DESCRIBES)
    out: Path | None = field(default=None, metadata=DESCRIBES)
    shard: str | None = field(default=None, metadata=DESCRIBES)
    sprt: str | None = field(default=None, metadata=DESCRIBES)
    fail_if_worse: bool = field(default=False, metadata=DESCRIBES)
    fail_unless_better: bool = field(default=False, metadata=DESCRIBES)
    max_forfeits: float | None = field(default=None, metadata=DESCRIBES)  # None: DEFAULT_MAX_FORFEITS
    min_score: float | None = field(default=None, metadata=DESCRIBES)
    sandbox: str | None = field(default=None, metadata=DESCRIBES)  # auto, bwrap or none
    bot_env: tuple[str, ...] = field(default=(), metadata=DESCRIBES)  # NAME=VALUE, over the file's [bot_env]
    compress: bool = field(default=False, metadata=DESCRIBES)  # replays as .jsonl.gz
    settings: BotSettings = field(default=BotSettings(), metadata=DESCRIBES)  # over the file's [limits]
    ponder: bool = field(default=False, metadata=DESCRIBES)  # bots think on the other's time
    require_cgroups: bool = field(default=False, metadata=DESCRIBES)  # no fall-back to rlimits
    bot_options: tuple[str, ...] = field(default=(), metadata=DESCRIBES)  # NAME:key=value, over the rest
    deals: Path | None = field(default=None, metadata=DESCRIBES)  # a deal suite
    event: str | None = field(default=None, metadata=DESCRIBES)  # over the file's [event]
    event_description: str | None = field(default=None, metadata=DESCRIBES)
    until_separated: bool = field(default=False, metadata=DESCRIBES)  # add pairs where adjacent ranks overlap
    max_pairs: int | None = field(default=None, metadata=DESCRIBES)  # the budget of pairs until_separated adds
    resume: Path | None = field(default=None, metadata=RUNS)  # continue the tournament in this folder
    jobs: int | None = field(default=None, metadata=RUNS)
    key: Path | None = field(default=None, metadata=RUNS)
    html: bool = field(default=True, metadata=RUNS)
    backend: str = field(default="local", metadata=RUNS)  # local or ray
    ray_address: str | None = field(default=None, metadata=RUNS)  # the Ray cluster to join
    ray_working_dir: Path | None = field(default=None, metadata=RUNS)  # copied to every node
    forfeit_broken: bool = field(default=False, metadata=RUNS)  # a bot failing the preflight forfeits
    live_every: int = field(default=0, metadata=RUNS)  # report every N results (0: at the end)
    rating_interval: int = field(default=0, metadata=RUNS)  # standings every N pairs (0: at the end)
    quiet: bool = field(default=False, metadata=RUNS)  # no progress line a finished match

    def described(self) -> list[str]:
        """The names of the fields given that describe the tournament (what ``resume`` refuses); for the bot
        settings, the names of those set (``memory_mb``...)."""
        out: list[str] = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.metadata["describes"] and value != f.default:
                out += _set_in(value) if isinstance(value, BotSettings) else [f.name]
        return out


def _set_in(settings: BotSettings) -> list[str]:
    """The names of the settings set in ``settings``."""
    return [f.name for f in dataclasses.fields(settings) if getattr(settings, f.name) != f.default]


@dataclass
class Report:
    """What a run produced: the outcome and where it is."""

    outcome: Outcome
    root: Path
    index: Path | None  # the viewer's index page, if written

    @property
    def exit_code(self) -> int:
        """0, or 1 when a CI gate failed."""
        return self.outcome.exit_code

    def to_json(self) -> dict[str, Any]:
        """The standings as printed by ``--json``."""
        extra: dict[str, Any] = {"folder": str(self.root), "complete": self.outcome.complete,
                                 "exit_code": self.exit_code, "gates_failed": list(self.outcome.failures)}  # fmt: skip
        if self.index is not None:
            extra["index"] = str(self.index)
        return to_json(self.outcome.standings, extra)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    # KeyboardInterrupt, not an exception of our own: asyncio lets only KeyboardInterrupt and SystemExit out of a
    # callback, so any other exception raised where the signal lands could be logged and swallowed.
    raise KeyboardInterrupt


def read_seed(text: str, source: str, setting: str | None = None) -> int:
    """A seed written as a whole number 0 .. 2**64-1 (surrounding blanks allowed); ``source`` says where it was
    read, with a ``{}`` naming ``setting`` when one is given."""
    value = text.strip()
    if not value.isdigit() or int(value) > MAX_SEED:
        message = f"{source}: a seed is a whole number from 0 to {MAX_SEED}"
        raise TournamentError(message) if setting is None else TournamentError.about(setting, message)
    return int(value)


def secret_seed(seed_file: Path | None, environ: MutableMapping[str, str]) -> int | None:
    """The seed of ``--seed-file`` or of :data:`SEED_ENV` (the file first), or None. The variable is removed
    from ``environ`` either way, so that no bot started afterwards inherits it."""
    from_env = environ.pop(SEED_ENV, None)
    if seed_file is not None:
        try:
            text = seed_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", exc)
            raise TournamentError.about("seed_file", f"{{}} {seed_file}: cannot read: {why}") from None
        return read_seed(text, f"{{}} {seed_file}", "seed_file")
    if from_env is not None:
        return read_seed(from_env, f"${SEED_ENV}")
    return None


def build_config(req: TournamentRequest, secret: int | None) -> TournamentConfig:
    """The tournament of the options, on top of the tournament file if one is given."""
    checked_files(req.settings)
    base = load_config(req.config) if req.config else None
    specs = _with_bot_options([*(base.bots if base else ()), *(parse_bot(b) for b in req.bots)], req.bot_options)
    if req.rules is not None:
        rule_set = resolve_rules(req.rules, req.rounds)
    elif base is not None:
        rule_set = base.rules if req.rounds is None else with_rounds(base.rules, req.rounds)
    else:
        rule_set = resolve_rules("guide", req.rounds)
    fmt = req.format
    if req.gauntlet is not None and fmt is None:
        fmt = Format.GAUNTLET.value
    try:
        format_ = Format(fmt) if fmt is not None else (base.format if base else Format.ROUND_ROBIN)
    except ValueError:
        raise TournamentError.about("format", f"{{}} {fmt!r}: choose round-robin or gauntlet") from None
    if req.seed is not None and secret is not None:
        raise TournamentError.about(
            ("seed", "seed_file"), f"{{}} and a secret seed ({{}} or ${SEED_ENV}) are both given; choose one"
        )
    given = req.seed if req.seed is not None else secret
    from_file = base is not None and not base.seed_drawn
    t0 = base.time if base else TimeControl()
    if req.sandbox is not None and req.sandbox not in MODES:
        raise TournamentError.about("sandbox", f"{{}} {req.sandbox!r}: choose auto, bwrap or none")
    return TournamentConfig(
        bots=tuple(specs),
        rules=rule_set,
        format=format_,
        gauntlet=req.gauntlet if req.gauntlet is not None else (base.gauntlet if base else None),
        pairs=req.pairs if req.pairs is not None else (base.pairs if base else 10),
        seed=given if given is not None else (base.seed if base and from_file else secrets.randbits(52)),
        seed_drawn=given is None and not from_file,
        time=TimeControl(
            req.startup_ms if req.startup_ms is not None else t0.startup_ms,
            req.move_ms if req.move_ms is not None else t0.move_ms,
            req.bank_ms if req.bank_ms is not None else t0.bank_ms,
        ),
        sandbox=req.sandbox or (base.sandbox if base else "auto"),
        bot_env=(*(base.bot_env if base else ()), *parse_env(req.bot_env)),
        settings=req.settings.over(base.settings if base else BotSettings()),
        suite=load_suite(req.deals) if req.deals is not None else (),
        workdir=str(Path.cwd().absolute()),
        ponder=req.ponder or (base.ponder if base else False),
        require_cgroups=req.require_cgroups or (base.require_cgroups if base else False),
        event=req.event if req.event is not None else (base.event if base else None),
        event_description=(
            req.event_description if req.event_description is not None else (base.event_description if base else "")
        ),
    )


def _isolation(mode: str, require_cgroups: bool, warn: Callable[[str], None]) -> None:
    """Warn of each defence the bots go without here (:class:`SandboxError` where cgroups are required)."""
    for line in isolation_warnings(resolve(mode, lambda _: None) == "bwrap", require_cgroups=require_cgroups):
        warn(line)


def _with_bot_options(specs: list[BotSpec], options: tuple[str, ...]) -> list[BotSpec]:
    """``specs`` with the ``--bot-option NAME:key=value`` settings laid over each bot's own."""
    names = [s.name for s in specs]
    given: dict[str, list[BotSettings]] = {}
    try:
        for text in options:
            name, setting = parse_option(text, names)
            given.setdefault(name, []).append(setting)
        out = []
        for s in specs:
            settings = combine([s.settings, *given.get(s.name, [])])
            checked_files(settings, f"bot {s.name!r}")
            out.append(dataclasses.replace(s, settings=settings))
    except SettingsError as exc:
        raise TournamentError(str(exc)) from None
    return out


def run(
    req: TournamentRequest,
    *,
    stream: TextIO,
    warn: Callable[[str], None],
    environ: MutableMapping[str, str] | None = None,
) -> Report:
    """Run (or with ``req.resume`` continue) a tournament; progress goes to ``stream``, warnings to ``warn``.

    Raises :class:`~referee.errors.RefereeError` for bad input and unwritable output (exit 2) and
    :class:`~referee.errors.Interrupted` for Ctrl-C and SIGTERM (exit 130).
    """
    try:
        return _run(req, stream, warn, os.environ if environ is None else environ)
    except KeyboardInterrupt:
        raise Interrupted.resumable(req.resume or req.out) from None


def _run(
    req: TournamentRequest, stream: TextIO, warn: Callable[[str], None], environ: MutableMapping[str, str]
) -> Report:
    jobs = req.jobs or default_jobs()
    if req.backend not in ("local", "ray"):
        raise TournamentError.about("backend", f"{{}} {req.backend!r}: choose local or ray")
    if (req.ray_address is not None or req.ray_working_dir is not None) and req.backend != "ray":
        raise TournamentError.about(("ray_address", "ray_working_dir", "backend"), "{} and {} need {} ray")
    ray_dir = str(req.ray_working_dir.resolve()) if req.ray_working_dir is not None else None
    if req.resume is not None:
        environ.pop(SEED_ENV, None)
        if given := req.described():
            more = " (to add bots to it: tournament add DIR --bot ...)" if given[0] == "bots" else ""
            raise TournamentError.about(
                given[0], "{} describes the tournament: a resumed one keeps the options in its folder" + more
            )
        key = signing_key(req.key, create=False)
        if key is None:
            warn(f"{req.resume / RESULTS}: {NO_KEY}")
        store = resume(req.resume, jobs, key)
        store.options = dataclasses.replace(
            store.options, backend=req.backend, ray_address=req.ray_address, ray_working_dir=ray_dir
        )
        _isolation(store.config.sandbox, store.config.require_cgroups, warn)
        if req.backend == "local" and any(True for _ in store.schedule.pending()):
            try:
                preflight(store.config, req.forfeit_broken, warn, "fix it and resume, or")
            except TournamentError:
                store.close()
                raise
        for w in store.warnings:
            if NO_KEY not in w:
                warn(w)
        if any(True for _ in store.schedule.pending()):
            for line in changed_bots(store):
                warn(line)
        where: Path = req.resume
    else:
        if not req.bots and req.config is None:
            raise TournamentError.about(
                ("bots", "config"), "name the bots with {} NAME=COMMAND (twice or more) or a tournament file with {}"
            )
        config = build_config(req, secret_seed(req.seed_file, environ))
        # the folder records the sandbox the bots really run in, and a resumed run needs the same
        config = dataclasses.replace(config, sandbox=resolve(config.sandbox, warn))
        _isolation(config.sandbox, config.require_cgroups, warn)
        if config.seed_drawn and req.shard:
            raise TournamentError.about(
                ("shard", "seed_file", "seed"),
                f"{{}} needs the seed every shard shares: {{}} FILE or ${SEED_ENV} (or {{}})",
            )
        options = RunOptions(
            jobs=jobs,
            shard=parse_shard(req.shard) if req.shard else (1, 1),
            sprt=Sprt.parse(req.sprt) if req.sprt else None,
            fail_if_worse=req.fail_if_worse,
            fail_unless_better=req.fail_unless_better,
            max_forfeits=DEFAULT_MAX_FORFEITS if req.max_forfeits is None else req.max_forfeits,
            min_score=req.min_score,
            backend=req.backend,
            ray_address=req.ray_address,
            ray_working_dir=ray_dir,
            compress=req.compress,
            until_separated=req.until_separated,
            max_pairs=req.max_pairs,
        )
        where = req.out or Path(f"tournament-{time.strftime('%Y%m%d-%H%M%S')}")
        readable = {f for name in (None, *(b.name for b in config.bots))
                    for f in (config.settings if name is None else config.settings_of(name)).files}  # fmt: skip
        exposed = exposed_output([("out", where)], [("files", Path(f)) for f in readable])
        if exposed is not None:
            name, what, why = exposed
            raise TournamentError.about((name, what), "{} inside {}: " + why)
        key = signing_key(req.key, create=True)
        check_new(config, options, where)
        if req.backend == "local":
            preflight(config, req.forfeit_broken, warn, "fix it, or")
        store = start(config, options, where, key, checked=True)
        if config.seed_drawn:
            warn(f"seed drawn at random (kept in {where / 'tournament.json'})")
        elif config.seed < GUESSABLE_SEEDS:
            warn(f"seed {config.seed} is small enough to be found from the seed commitment, and with it every "
                 "deal still to play: for a contest leave --seed out (one is drawn) or give --seed-file a large "
                 "random number")  # fmt: skip
    if store.config.suite and store.options.jobs > 1 and len(store.config.bots) > 2:
        warn("a deal suite with -j N: one bot may play the same deal sequence in two pairings at once, and a "
             "machine-wide count it holds in one could reach the other; -j 1 for a contest (SECURITY.md)")
    interim = Interim(results=req.live_every, pairs=req.rating_interval, html=req.html, quiet=req.quiet)
    return play_folder(store, stream, warn, interim)


def changed_bots(store: Store) -> list[str]:
    """A line for each bot whose own files (:mod:`referee.seats.files`) are not those its last recorded game was
    played with (its replay header's ``files``): the games from here on are another version's."""
    from referee.seats.files import fingerprint, own_paths

    out = []
    for name, (mid, seat) in sorted(_last_games(store.root / RESULTS, {b.name for b in store.config.bots}).items()):
        path = existing_replay(store.root, mid)
        try:
            header = json.loads(first_line(path)) if path is not None else None
            then = header["bots"][seat].get("files") if isinstance(header, dict) else None
        except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
            continue
        settings = store.config.settings_of(name)
        now = fingerprint(own_paths(store.config.command_of(name), settings.python))
        if isinstance(then, str) and then != now:
            out.append(f"bot {name!r}: its files are not those of its last game ({mid}: {then}, now {now}): its "
                       "games from here on are another version's (tournament verify lists them)")  # fmt: skip
    return out


def _last_games(results: Path, names: set[str]) -> dict[str, tuple[str, int]]:
    """For each of ``names``, the match id and seat (0 or 1) of its last game in ``results`` (read from its end, a
    block at a time, until every name is found: a large folder's resume reads only its last lines)."""
    found: dict[str, tuple[str, int]] = {}
    try:
        f = open(results, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return found
    with f:
        end = f.seek(0, os.SEEK_END)
        tail = b""
        while end > 0 and len(found) < len(names):
            start = max(0, end - (1 << 20))
            f.seek(start)
            block = f.read(end - start) + tail
            lines = block.split(b"\n")
            tail = lines.pop(0) if start > 0 else b""
            for line in reversed(lines):
                try:
                    obj = json.loads(line)
                    mid, seats = obj["match_id"], obj["seats"]
                except (ValueError, KeyError, TypeError):
                    continue
                for seat, name in enumerate(seats if isinstance(seats, list) else []):
                    if name in names and name not in found and isinstance(mid, str):
                        found[name] = (mid, seat)
            end = start
    return found


def play_folder(store: Store, stream: TextIO, warn: Callable[[str], None], interim: Interim) -> Report:
    """Print the seed commitment, play what is left in ``store`` (SIGTERM as Ctrl-C), then write the viewer
    pages (with ``interim.html``)."""
    config = store.config
    whole = tuple(store.options.shard) == (1, 1)  # a shard never publishes the seed
    done = whole and store.schedule.recorded >= len(store.schedule)  # a resumed folder with nothing left to play
    when = "standings.json publishes the seed" if done else "the seed is published once the tournament is complete"
    print(f"seed commitment {commit(config.seed)} ({when})", file=stream, flush=True)
    if config.ladder and config.ladder[-1].salt is not None:
        step = config.ladder[-1]
        print(f"ladder step {len(config.ladder)} seed commitment {commit(step.seed(config.seed))} (its salt is "
              "published with the seed)", file=stream, flush=True)  # fmt: skip
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        outcome = play(store, stream=stream, interim=interim)
    except KeyboardInterrupt:
        raise Interrupted.resumable(store.root) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    if interim.html and outcome.pages_error is not None:
        warn(f"no viewer pages: {outcome.pages_error}")
    return Report(outcome, store.root, outcome.home)


def preflight(
    config: TournamentConfig, forfeit_broken: bool, warn: Callable[[str], None], fix: str,
    names: Sequence[str] | None = None,
) -> None:  # fmt: skip
    """Start every bot (or those of ``names``) once before the first match: a bot that fails is an error naming
    it, or with ``forfeit_broken`` a warning (it plays and forfeits). ``fix`` starts the error's advice."""
    failures = check_bots(config, names)
    if not failures:
        return
    if forfeit_broken:
        for line in failures:
            warn(f"{line}; it plays and forfeits (--forfeit-broken)")
        return
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    raise TournamentError(f"{failures[0]}{more}; {fix} let broken bots forfeit: --forfeit-broken")


def _write_pages(root: Path, warn: Callable[[str], None]) -> Path | None:
    """The viewer pages and index of a tournament folder; a failure is a warning (the results are kept)."""
    from referee.replay.html import ViewerError
    from referee.tournament.pages import write_site

    try:
        return write_site(root)
    except ViewerError as exc:
        warn(f"no viewer pages: {exc}")
        return None


@dataclass
class MergeReport:
    """What ``tournament merge`` prints."""

    result: MergeResult
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0, or 1 when a CI gate failed on the merged standings."""
        return EXIT_GATE if self.result.failures else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        """The merged standings as printed by ``--json``."""
        missing = self.result.missing
        st = dataclasses.replace(self.result.standings, pairs=self.result.pairs())  # the pair list, read back
        return to_json(st, {"complete": not missing, "missing": missing})


def merge_folders(
    dirs: list[Path], out: Path | None, key_path: Path | None, *, partial: bool = False, html: bool = False
) -> MergeReport:
    """Merge shard folders, checking (and signing the merged results with) the key when there is one; missing
    shards or matches are an error unless ``partial``; with ``html`` and ``out``, the merged folder's pages."""
    key = signing_key(key_path, create=False)
    result = merge(dirs, out, key, partial=partial)
    warnings = [] if key is not None else [NO_KEY]
    warnings += [w for w in result.warnings if NO_KEY not in w]
    if html and out is not None:
        _write_pages(out, warnings.append)
    missing = result.missing
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        warnings.append(f"{len(missing)} scheduled match(es) missing: {shown}")
    return MergeReport(result, warnings)
