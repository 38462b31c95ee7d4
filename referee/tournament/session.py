"""One run of a tournament: start or resume an output folder, play what is left, report, and judge the CI
gates.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from referee.errors import RefereeError
from referee.records import MatchResult
from referee.seats import package
from referee.seats.process import ProcessError, check_command, readable
from referee.tournament.config import RunOptions, TournamentConfig, TournamentError
from referee.tournament.folder import RESULTS, Output, output_error
from referee.tournament.gates import EXIT_GATE, EXIT_OK, judge
from referee.tournament.live import Interim, LiveReport
from referee.tournament.progress import ProgressDisplay
from referee.tournament.records import Played, Record
from referee.tournament.report import report_meta, table, write_standings_texts
from referee.tournament.runner import Emit
from referee.tournament.schedule import MatchSpec, check_size
from referee.tournament.separation import DEFAULT_MAX_PAIRS, next_pairings, summary, summary_line
from referee.tournament.standings import Standings, Tally, tally_of
from referee.tournament.stats import SprtState
from referee.tournament.store import Store
from referee.tournament.units import Units

__all__ = [
    "EXIT_GATE", "EXIT_OK", "Interim", "Outcome", "check_new", "default_jobs", "judge", "play", "resume", "start",
    "summarize",
]  # fmt: skip


@dataclass
class Outcome:
    """What a run produced and how a CI job should read it."""

    standings: Standings
    table: str
    complete: bool  # every scheduled match of this folder is played (or the SPRT decided)
    failures: list[str] = field(default_factory=list)  # CI gate failures, one line each
    warnings: list[str] = field(default_factory=list)
    home: Path | None = None  # the home page, when the report wrote the pages
    pages_error: str | None = None  # why the pages could not be written

    @property
    def exit_code(self) -> int:
        """0, or 1 when a CI gate failed."""
        return EXIT_GATE if self.failures else EXIT_OK


def _check_commands(config: TournamentConfig, root: Path) -> None:
    """Build each bot package, check each command, and refuse an output folder that a bot may read."""
    for bot in config.bots:
        command = config.command_of(bot.name)
        settings = config.settings_of(bot.name)
        try:
            found = package.find(command)
            if found is not None:
                package.build(found, root / "logs" / f"build.{bot.name}.log", config.sandbox)
            check_command(command, python=settings.python)
            sandboxed = config.sandbox != "none"
            folders = readable(command, settings.files, settings.python, planned=sandboxed)
            package.refuse_outputs({"the output folder": root}, folders)
        except (ProcessError, package.PackageError) as exc:
            raise TournamentError(f"bot {bot.name!r}: {exc}") from None


def check_new(config: TournamentConfig, options: RunOptions, root: Path) -> None:
    """:class:`TournamentError` unless ``config`` and ``options`` make a tournament that can start in ``root``:
    the checks that need no bot started (the options agree, the schedule is not too large, every package is built
    and every command exists, no bot may read the output folder)."""
    if options.sprt is not None and len(config.bots) != 2:
        raise TournamentError("--sprt compares exactly two bots")
    if options.fail_if_worse and options.sprt is None:
        raise TournamentError("--fail-if-worse needs --sprt")
    if options.fail_unless_better and options.sprt is None:
        raise TournamentError("--fail-unless-better needs --sprt")
    if not 0.0 <= options.max_forfeits <= 1.0:
        raise TournamentError("--max-forfeits takes a share of a bot's games between 0 and 1, e.g. 0.1")
    if options.min_score is not None and not 0.0 <= options.min_score <= 1.0:
        raise TournamentError("--min-score takes a score rate between 0 and 1, e.g. 0.55")
    if options.until_separated and options.sprt is not None:
        raise TournamentError("--until-separated and --sprt each decide when to stop: choose one")
    if options.until_separated and tuple(options.shard) != (1, 1):
        raise TournamentError("--until-separated chooses pairs from all results: it does not run in shards")
    if options.max_pairs is not None and not options.until_separated:
        raise TournamentError("--max-pairs is the budget of --until-separated")
    if not 1 <= options.jobs <= 256:
        raise TournamentError("--jobs takes 1 to 256")
    check_size(config)
    _check_commands(config, root)


def start(
    config: TournamentConfig, options: RunOptions, root: Path, key: bytes | None = None, *, checked: bool = False
) -> Store:
    """A new output folder for ``config`` (after :func:`check_new`, unless ``checked`` says it ran); the
    description and schedule are written before any match. ``key`` signs the results (None: unsigned)."""
    if not checked:
        check_new(config, options, root)
    return Store.create(root, config, options, key)


def resume(root: Path, jobs: int, key: bytes | None = None) -> Store:
    """The folder of an interrupted run, its finished matches read back and checked against ``key`` (None: not
    checked), a torn last line dropped and interrupted deal pairs dealt afresh."""
    store = Store.open(root, jobs, key)
    try:
        _check_commands(store.config, root)
    except TournamentError:
        store.close()
        raise
    return store


class _SprtTracker:
    """The SPRT of the first pairing, updated match by match on its complete pairs only (a pair's first game
    waits for its second)."""

    def __init__(self, store: Store) -> None:
        self.params = store.options.sprt
        self.tally = Tally(store.config)
        self.decided = False
        if self.params is not None:
            for rec in store.records_in_order(pairing=0):
                self.add(rec)

    def add(self, rec: Record) -> None:
        if self.params is None:
            return
        before = self.tally.prows[0].pairs
        self.tally.add(rec)
        if self.tally.prows[0].pairs > before and self.tally.sprt(self.params).state is not SprtState.CONTINUE:
            self.decided = True


def open_twins(store: Store) -> list[MatchSpec]:
    """The pending matches whose pair twin is recorded: what finishes the pairs a stop cut in two."""
    ledger = store.schedule
    return [m for m in store.pending() if ledger.twin_recorded(m)]


def play(
    store: Store, *, stream: TextIO | None = None, live: bool | None = None, interim: Interim | None = None
) -> Outcome:
    """Play every pending match of ``store`` (stopping early once the SPRT decides), then report; ``interim``:
    how often the report is rewritten and shown while the run goes on.

    When the SPRT decides, the pairs in flight whose first game is played are finished (their twins played), so
    every count covers whole pairs; the report says how many. :class:`~referee.errors.OutputError` when
    the output cannot be written (a full disk): the matches recorded so far are kept, and a resume deals the
    interrupted ones afresh.
    """
    tracker = _SprtTracker(store)
    jobs = store.options.jobs
    pending = Units.of(open_twins(store), jobs) if tracker.decided else Units.pending(store.schedule, jobs)
    out = store.output()
    if interim is not None and interim.html:  # each worker writes the page of each match it plays
        out = replace(out, pages=store.schedule.links())

    def emit(spec: MatchSpec, result: MatchResult, played: Played) -> None:
        try:
            rec = store.append(Record.of(spec, result, played))
        except OSError as exc:
            raise output_error(exc, store.root / RESULTS) from None
        bar.advance(rec)
        tracker.add(rec)
        if report is not None:
            report.add(rec)

    bar = ProgressDisplay(len(store.schedule), store.done, stream=stream, live=live,
                          quiet=interim is not None and interim.quiet)  # fmt: skip
    report = LiveReport(store, interim, bar.note) if interim is not None and interim.active else None
    try:
        if pending.matches:
            _run(store, out, pending, emit, lambda: tracker.decided, bar)
        twins = open_twins(store) if tracker.decided else []
        if twins:
            _run(store, out, Units.of(twins, jobs), emit, lambda: False, bar)
        if store.options.until_separated and not tracker.decided:
            while chosen := next_pairings(_standings(store), store.config, budget(store) - store.extended):
                added = store.extend(chosen)
                bar.total += len(added)
                _run(store, out, Units.of(added, jobs), emit, lambda: False, bar)
        return summarize(store, decided=tracker.decided, pages=interim is not None and interim.html)
    except KeyboardInterrupt:
        # the games the workers finished while the run stopped: their replays end with the result line
        with contextlib.suppress(OSError, RefereeError):
            store.record_finished()
        if report is not None:
            report.interrupted()
        raise
    except OSError as exc:
        raise output_error(exc) from None
    finally:
        store.close()


def budget(store: Store) -> int:
    """The most pairs an ``--until-separated`` run of ``store`` adds (over all its runs and ladder steps)."""
    given = store.options.max_pairs
    return DEFAULT_MAX_PAIRS if given is None else given


def _standings(store: Store) -> Standings:
    c = store.collected
    if c is not None and not c.stale:
        return c.tally.standings(store.options.sprt)
    return tally_of(store.config, store.records_in_order()).standings(store.options.sprt)


def _run(
    store: Store, out: Output, pending: Units, emit: Emit, should_stop: Callable[[], bool], bar: ProgressDisplay,
) -> None:  # fmt: skip
    """Play ``pending`` on the run's backend (Ray, worker processes or this process) until ``should_stop``."""
    from referee.tournament.runner import ParallelRun, run_serial

    jobs = store.options.jobs
    if store.options.backend == "ray":
        from referee.tournament.ray_backend import RayRun

        where = (store.options.ray_address, store.options.ray_working_dir)
        with RayRun(store.config, out, pending, jobs, *where) as ray_run, bar:
            ray_run.run(emit, should_stop)
    elif jobs > 1:
        with ParallelRun(store.config, out, pending, jobs) as runner, bar:
            runner.run(emit, should_stop)
    else:
        with bar:
            run_serial(store.config, out, pending, emit, should_stop)


def summarize(
    store: Store, *, decided: bool = False, warnings: list[str] | None = None, pages: bool = False
) -> Outcome:
    """Standings of the recorded matches, the report files, the CI gates, and with ``pages`` the folder's pages
    (:class:`~referee.tournament.pages.Site`; a failure is :attr:`Outcome.pages_error`).

    The report is written from what the store gathered as its results were read and appended
    (:attr:`Store.collected <referee.tournament.store.Store.collected>`): the records are not read again, unless
    the store kept nothing or a pair was dealt afresh after one of its games was counted; then they are read once,
    in the order they finished."""
    complete = decided or not any(True for _ in store.schedule.pending())
    sprt = store.options.sprt
    c = store.collection()
    c.rows.write(store.root)
    stop = c.stop.point if c.stop is not None else None
    st = c.tally.standings(sprt)
    meta = report_meta(store.config, store.options.shard, len(store.schedule), complete, st, stop)
    text = table(st, store.config.sandbox, store.config.ponder)
    if store.config.retired:
        meta["retired"] = list(store.config.retired)
        text += f"\nretired (no new pairings): {', '.join(store.config.retired)}"
    if store.options.until_separated:
        meta["until_separated"] = summary(st, store.config, store.extended, budget(store))
        text += "\n" + summary_line(meta["until_separated"])
    write_standings_texts(store.root, st, meta, c.pairs_done().texts())
    failures = judge(store.config, store.options, st)
    outcome = Outcome(st, text, complete, failures, list(warnings or []))
    if pages:
        from referee.replay.html import ViewerError
        from referee.tournament.pages import Site

        try:
            outcome.home = Site(store, c).write(st)
        except ViewerError as exc:
            outcome.pages_error = str(exc)
    return outcome


def default_jobs() -> int:
    """``os.cpu_count()`` (1 if unknown)."""
    return os.cpu_count() or 1
