"""One run of a tournament: start or resume an output folder, play what is left, report, and judge the CI
gates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from referee.seats.process import ProcessError, check_command
from referee.tournament.config import RunOptions, TournamentConfig, TournamentError
from referee.tournament.progress import ProgressDisplay
from referee.tournament.report import table, write_report
from referee.tournament.schedule import MatchSpec
from referee.tournament.standings import Record, Standings, compute
from referee.tournament.stats import SprtState, sprt
from referee.tournament.store import FORMAT, Store

EXIT_OK = 0
EXIT_GATE = 1
"""A CI gate failed: ``--fail-if-worse`` and the SPRT accepted H0, or ``--min-score`` was not reached."""


@dataclass
class Outcome:
    """What a run produced and how a CI job should read it."""

    standings: Standings
    table: str
    complete: bool  # every scheduled match of this folder is played (or the SPRT decided)
    failures: list[str] = field(default_factory=list)  # CI gate failures, one line each
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0, or 1 when a CI gate failed."""
        return EXIT_GATE if self.failures else EXIT_OK


def _check_commands(config: TournamentConfig) -> None:
    for bot in config.bots:
        try:
            check_command(bot.command)
        except ProcessError as exc:
            raise TournamentError(f"bot {bot.name!r}: {exc}") from None


def start(config: TournamentConfig, options: RunOptions, root: Path) -> Store:
    """A new output folder for ``config``; the description and schedule are written before any match."""
    if options.sprt is not None and len(config.bots) != 2:
        raise TournamentError("--sprt compares exactly two bots")
    if options.fail_if_worse and options.sprt is None:
        raise TournamentError("--fail-if-worse needs --sprt")
    if options.min_score is not None and not 0.0 <= options.min_score <= 1.0:
        raise TournamentError("--min-score takes a score rate between 0 and 1, e.g. 0.55")
    if not 1 <= options.jobs <= 256:
        raise TournamentError("--jobs takes 1 to 256")
    _check_commands(config)
    return Store.create(root, config, options)


def resume(root: Path, jobs: int) -> Store:
    """The folder of an interrupted run, its finished matches read back (a torn last line dropped)."""
    store = Store.open(root, jobs)
    _check_commands(store.config)
    return store


class _SprtTracker:
    """Pentanomial counts of complete pairs of the first pairing, updated match by match."""

    def __init__(self, store: Store) -> None:
        self.params = store.options.sprt
        self.first = store.config.hero
        self.partial: dict[int, float] = {}
        self.counts = [0] * 5
        self.decided = False
        for rec in sorted(store.records.values(), key=lambda r: r.spec.index):
            self.add(rec)

    def add(self, rec: Record) -> None:
        if self.params is None or rec.spec.pairing != 0:
            return
        pts = rec.points_of(self.first)
        if rec.spec.pair not in self.partial:
            self.partial[rec.spec.pair] = pts
            return
        total = self.partial.pop(rec.spec.pair) + pts
        self.counts[round(total * 2)] += 1
        p = self.params
        if sprt(self.counts, p.elo0, p.elo1, p.alpha, p.beta).state is not SprtState.CONTINUE:
            self.decided = True


def play(store: Store, *, stream: TextIO | None = None, live: bool | None = None) -> Outcome:
    """Play every pending match of ``store`` (stopping early once the SPRT decides), then report."""
    tracker = _SprtTracker(store)
    pending = [] if tracker.decided else store.pending()
    jobs = store.options.jobs
    from referee.tournament.runner import ParallelRun, run_serial

    def emit(spec: MatchSpec, result: dict[str, object]) -> None:
        rec = store.append(spec, dict(result))
        bar.advance(rec)
        tracker.add(rec)

    def should_stop() -> bool:
        return tracker.decided

    bar = ProgressDisplay(len(store.schedule), len(store.records), stream=stream, live=live)
    try:
        if pending and jobs > 1:
            with ParallelRun(store.config, store.root, pending, jobs) as runner, bar:
                runner.run(emit, should_stop)
        elif pending:
            with bar:
                run_serial(store.config, store.root, pending, emit, should_stop)
    finally:
        store.close()
    return summarize(store, decided=tracker.decided)


def summarize(store: Store, *, decided: bool = False, warnings: list[str] | None = None) -> Outcome:
    """Standings of the recorded matches, the report files, and the CI gates."""
    records = list(store.records.values())
    st = compute(store.config, records, store.options.sprt)
    complete = decided or not store.pending()
    meta = {
        "format": FORMAT,
        "fingerprint": store.config.fingerprint(),
        "seed": store.config.seed,
        "shard": list(store.options.shard),
        "scheduled": len(store.schedule),
        "complete": complete,
    }
    write_report(store.root, st, records, meta)
    failures = judge(store.config, store.options, st)
    return Outcome(st, table(st), complete, failures, list(warnings or []))


def judge(config: TournamentConfig, options: RunOptions, st: Standings) -> list[str]:
    """The CI gates that failed, one line each: ``--fail-if-worse`` (SPRT accepted H0), ``--min-score``."""
    failures = []
    if options.fail_if_worse and st.sprt is not None and st.sprt.state is SprtState.H0:
        failures.append(
            f"SPRT accepted H0 (LLR {st.sprt.llr:.2f} <= {st.sprt.lower:.2f}): {config.hero} is not stronger"
        )
    if options.min_score is not None:
        hero = next(b for b in st.bots if b.name == config.hero)
        est = hero.estimate
        if est is None or est.score < options.min_score:
            got = "no games" if est is None else f"{est.score:.3f}"
            failures.append(f"{hero.name} scored {got}, below --min-score {options.min_score:g}")
    return failures


def default_jobs() -> int:
    """``os.cpu_count()`` (1 if unknown)."""
    return os.cpu_count() or 1
