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
import os
import secrets
import signal
import time
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from referee.errors import Interrupted
from referee.records import TimeControl
from referee.seats.process import isolation_warnings
from referee.seats.sandbox import MODES, exposed_output, parse_env, resolve
from referee.tournament.commitment import commit
from referee.tournament.config import (
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
from referee.tournament.folder import NO_KEY, RESULTS, signing_key
from referee.tournament.gates import EXIT_GATE, EXIT_OK
from referee.tournament.merge import MergeResult, merge
from referee.tournament.preflight import check_bots
from referee.tournament.report import to_json
from referee.tournament.session import Interim, Outcome, check_new, default_jobs, play, resume, start
from referee.tournament.settings import BotSettings, SettingsError, checked_files, combine, parse_option, parse_setting
from referee.tournament.store import Store
from referee.tournament.suite import load_suite

SEED_ENV = "KOIKOI_SEED"
"""The environment variable that may hold the tournament's secret seed (removed once read)."""
MAX_SEED = 2**64 - 1


@dataclass(frozen=True)
class Request:
    """The ``tournament`` command's options (None: not given)."""

    bots: tuple[str, ...] = ()
    config: Path | None = None
    rules: str | None = None
    rounds: int | None = None
    format: str | None = None
    gauntlet: str | None = None
    pairs: int | None = None
    seed: int | None = None
    seed_file: Path | None = None
    startup_ms: int | None = None
    move_ms: int | None = None
    bank_ms: int | None = None
    jobs: int | None = None
    out: Path | None = None
    resume: Path | None = None
    shard: str | None = None
    sprt: str | None = None
    fail_if_worse: bool = False
    min_score: float | None = None
    html: bool = True
    key: Path | None = None
    sandbox: str | None = None  # auto, bwrap or none (over the tournament file's)
    bot_env: tuple[str, ...] = ()  # NAME=VALUE, added to the tournament file's [bot_env]
    backend: str = "local"  # local or ray (also with --resume)
    ray_address: str | None = None  # with --backend ray: the cluster to join
    ray_working_dir: Path | None = None  # with --backend ray: the folder Ray copies to every node
    compress: bool = False  # replays as .jsonl.gz
    bot_memory_mb: int | None = None  # every bot's limits, over the tournament file's [limits]
    bot_cpu_s: int | None = None
    bot_processes: int | None = None
    bot_cpus: float | None = None
    ponder: bool = False  # bots may think on the opponent's time (over the tournament file's)
    require_cgroups: bool = False  # no fall-back to rlimits where cgroups do not work
    bot_files: tuple[str, ...] = ()
    python: str | None = None
    bot_options: tuple[str, ...] = ()  # NAME:key=value, one bot's setting over everything else
    deals: Path | None = None  # a deal suite (referee.tournament.suite)
    event: str | None = None  # the event's name (over the tournament file's [event])
    event_description: str | None = None
    forfeit_broken: bool = False  # a bot that fails the preflight plays (and forfeits) instead of stopping the run
    live_every: int = 0  # rewrite the report files and home page every N results while running (0: at the end)
    rating_interval: int = 0  # print interim standings every N complete pairs (0: at the end)
    until_separated: bool = False  # then add pairs where adjacent ranks overlap (referee.tournament.separation)
    max_pairs: int | None = None  # the budget of pairs --until-separated adds

    def tournament_options_given(self) -> bool:
        """Any option that describes the tournament (not allowed with ``--resume``)."""
        values = [self.bots, self.config, self.rules, self.rounds, self.format, self.gauntlet, self.pairs,
                  self.seed, self.seed_file, self.startup_ms, self.move_ms, self.bank_ms, self.out, self.shard,
                  self.sprt, self.min_score, self.sandbox, self.bot_env, self.bot_memory_mb, self.bot_cpu_s,
                  self.bot_processes, self.bot_cpus, self.bot_files, self.python, self.bot_options,
                  self.deals, self.event, self.event_description, self.max_pairs]  # fmt: skip
        flags = (self.fail_if_worse, self.compress, self.ponder, self.require_cgroups, self.until_separated)
        return any(v is not None and v != () for v in values) or any(flags)


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
        extra: dict[str, Any] = {"folder": str(self.root), "complete": self.outcome.complete}
        if self.index is not None:
            extra["index"] = str(self.index)
        return to_json(self.outcome.standings, extra)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    # KeyboardInterrupt, not an exception of our own: asyncio lets only KeyboardInterrupt and SystemExit out of a
    # callback, so any other exception raised where the signal lands could be logged and swallowed.
    raise KeyboardInterrupt


def read_seed(text: str, source: str) -> int:
    """A seed written as a whole number 0 .. 2**64-1 (surrounding blanks allowed)."""
    value = text.strip()
    if not value.isdigit() or int(value) > MAX_SEED:
        raise TournamentError(f"{source}: a seed is a whole number from 0 to {MAX_SEED}")
    return int(value)


def secret_seed(seed_file: Path | None, environ: MutableMapping[str, str]) -> int | None:
    """The seed of ``--seed-file`` or of :data:`SEED_ENV` (the file first), or None. The variable is removed
    from ``environ`` either way, so that no bot started afterwards inherits it."""
    from_env = environ.pop(SEED_ENV, None)
    if seed_file is not None:
        try:
            text = seed_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TournamentError(f"--seed-file {seed_file}: cannot read: {getattr(exc, 'strerror', exc)}") from None
        return read_seed(text, f"--seed-file {seed_file}")
    if from_env is not None:
        return read_seed(from_env, f"${SEED_ENV}")
    return None


def build_config(req: Request, secret: int | None) -> TournamentConfig:
    """The tournament of the options, on top of the tournament file if one is given."""
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
        raise TournamentError(f"--format {fmt!r}: choose round-robin or gauntlet") from None
    if req.seed is not None and secret is not None:
        raise TournamentError(f"--seed and a secret seed (--seed-file or ${SEED_ENV}) are both given; choose one")
    given = req.seed if req.seed is not None else secret
    from_file = base is not None and not base.seed_drawn
    t0 = base.time if base else TimeControl()
    if req.sandbox is not None and req.sandbox not in MODES:
        raise TournamentError(f"--sandbox {req.sandbox!r}: choose auto, bwrap or none")
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
        settings=_global_settings(req).over(base.settings if base else BotSettings()),
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


def _global_settings(req: Request) -> BotSettings:
    """The settings of every bot given by flags (``--bot-memory-mb``, ``--bot-file``, ``--python``...)."""
    try:
        files = [parse_setting("file", f, f"--bot-file {f!r}") for f in req.bot_files]
        python = [parse_setting("python", req.python, "--python")] if req.python is not None else []
        flags = BotSettings(memory_mb=req.bot_memory_mb, cpu_s=req.bot_cpu_s, processes=req.bot_processes,
                            cpus=req.bot_cpus)  # fmt: skip
        settings = combine([flags, *files, *python])
        checked_files(settings, "--bot-file")
    except SettingsError as exc:
        raise TournamentError(str(exc)) from None
    return settings


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
    req: Request,
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


def _run(req: Request, stream: TextIO, warn: Callable[[str], None], environ: MutableMapping[str, str]) -> Report:
    jobs = req.jobs or default_jobs()
    if req.backend not in ("local", "ray"):
        raise TournamentError(f"--backend {req.backend!r}: choose local or ray")
    if (req.ray_address is not None or req.ray_working_dir is not None) and req.backend != "ray":
        raise TournamentError("--ray-address and --ray-working-dir need --backend ray")
    ray_dir = str(req.ray_working_dir.resolve()) if req.ray_working_dir is not None else None
    if req.resume is not None:
        environ.pop(SEED_ENV, None)
        if req.tournament_options_given():
            raise TournamentError(
                "--resume takes only --jobs, --key, --backend, --ray-* (and --json, --html, --live-every, "
                "--rating-interval, --forfeit-broken): the tournament's "
                "options, its sandbox "
                "included, are in its folder"
            )
        key = signing_key(req.key, create=False)
        if key is None:
            warn(f"{req.resume / RESULTS}: {NO_KEY}")
        store = resume(req.resume, jobs, key)
        store.options = dataclasses.replace(
            store.options, backend=req.backend, ray_address=req.ray_address, ray_working_dir=ray_dir
        )
        _isolation(store.config.sandbox, store.config.require_cgroups, warn)
        if req.backend == "local" and store.pending():
            try:
                preflight(store.config, req.forfeit_broken, warn, "fix it and resume, or")
            except TournamentError:
                store.close()
                raise
        for w in store.warnings:
            if NO_KEY not in w:
                warn(w)
        where: Path = req.resume
    else:
        if not req.bots and req.config is None:
            raise TournamentError(
                "name the bots with --bot NAME=COMMAND (twice or more) or a tournament file with --config"
            )
        config = build_config(req, secret_seed(req.seed_file, environ))
        # the folder records the sandbox the bots really run in, and a resumed run needs the same
        config = dataclasses.replace(config, sandbox=resolve(config.sandbox, warn))
        _isolation(config.sandbox, config.require_cgroups, warn)
        if config.seed_drawn and req.shard:
            raise TournamentError(
                f"--shard needs the seed every shard shares: --seed-file FILE or ${SEED_ENV} (or --seed)"
            )
        options = RunOptions(
            jobs=jobs,
            shard=parse_shard(req.shard) if req.shard else (1, 1),
            sprt=Sprt.parse(req.sprt) if req.sprt else None,
            fail_if_worse=req.fail_if_worse,
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
        exposed = exposed_output([("the output folder", where)], [("the readable file", Path(f)) for f in readable])
        if exposed is not None:
            raise TournamentError(exposed)
        key = signing_key(req.key, create=True)
        check_new(config, options, where)
        if req.backend == "local":
            preflight(config, req.forfeit_broken, warn, "fix it, or")
        store = start(config, options, where, key, checked=True)
        if config.seed_drawn:
            warn(f"seed drawn at random (kept in {where / 'tournament.json'})")
    interim = Interim(results=req.live_every, pairs=req.rating_interval, html=req.html)
    return play_folder(store, stream, warn, interim)


def play_folder(store: Store, stream: TextIO, warn: Callable[[str], None], interim: Interim) -> Report:
    """Print the seed commitment, play what is left in ``store`` (SIGTERM as Ctrl-C), then write the viewer
    pages (with ``interim.html``)."""
    config = store.config
    print(f"seed commitment {commit(config.seed)} (the seed is published once the tournament is complete)",
          file=stream, flush=True)  # fmt: skip
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
    index = _write_pages(store.root, warn) if interim.html else None
    return Report(outcome, store.root, index)


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
