"""Running a tournament's matches: bot processes reused across a pairing's matches, in parallel worker
processes.

The schedule is cut into work units (a pairing's consecutive deal pairs, see :func:`work_units`). A unit runs
in one asyncio loop that starts the pairing's two bots once and plays every match of the unit on them (the
protocol's ``new_match``); a bot that forfeits is closed and started afresh for the next match, so a crash,
hang or stray output never leaks into another match. With ``jobs`` above 1 the units run in a pool of worker
processes, each one sending finished results back to the main process, which alone writes the progress log. A
worker whose parent dies (even by SIGKILL) kills its bots and exits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from referee.match import MatchConfig, TimeControl, play_match
from referee.process import kill_all_now
from referee.seats import BotSeat
from referee.tournament.config import TournamentConfig
from referee.tournament.schedule import MatchSpec, work_units

Emit = Callable[[MatchSpec, dict[str, Any]], None]
"""Called with each finished match and its result's JSON."""


def match_config(config: TournamentConfig, spec: MatchSpec, replay: Path | None) -> MatchConfig:
    """The match runner's configuration of one scheduled match."""
    t = config.time
    return MatchConfig(
        rules=config.rules,
        seed=spec.seed,
        match_id=spec.match_id,
        first_dealer=spec.first_dealer,
        time=TimeControl(startup_ms=t.startup_ms, move_ms=t.move_ms, bank_ms=t.bank_ms),
        replay_path=replay,
    )


async def play_unit(
    config: TournamentConfig,
    root: Path,
    specs: Sequence[MatchSpec],
    emit: Emit,
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Play ``specs`` (one pairing) on two reused bot seats; returns the number of matches played."""
    commands = {b.name: b.command for b in config.bots}
    seats: dict[str, BotSeat] = {}
    played = 0

    def seat_for(name: str, spec: MatchSpec) -> BotSeat:
        if name not in seats:
            log = root / "logs" / f"{spec.match_id}.{name}.log"
            seats[name] = BotSeat(commands[name], label=name, stderr_path=log)
        return seats[name]

    try:
        for spec in specs:
            if should_stop():
                break
            pair = (seat_for(spec.seats[0], spec), seat_for(spec.seats[1], spec))
            replay = root / "replays" / f"{spec.match_id}.jsonl"
            result = await play_match(pair, match_config(config, spec, replay))
            emit(spec, result.to_json())
            played += 1
            broken = {spec.seats[result.forfeit.seat]} if result.forfeit is not None else set()
            broken |= {name for name, seat in seats.items() if seat.failed is not None}
            for name in broken:
                await seats.pop(name).close()
    finally:
        for seat in seats.values():
            await seat.close()
    return played


def run_serial(
    config: TournamentConfig,
    root: Path,
    matches: Sequence[MatchSpec],
    emit: Emit,
    should_stop: Callable[[], bool],
) -> None:
    """Play ``matches`` in this process, one unit after another (``-j 1``)."""

    async def _all() -> None:
        for unit in work_units(list(matches), 1):
            if should_stop():
                return
            await play_unit(config, root, unit, emit, should_stop)

    asyncio.run(_all())


# -- worker processes ---------------------------------------------------------------------------------------

_results: Any = None
_stop: Any = None


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.2)
        if os.getppid() != parent:
            kill_all_now()
            os._exit(3)


def _init_worker(results: Any, stop: Any, parent: int) -> None:
    global _results, _stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process stops the workers
    _results, _stop = results, stop
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _worker_unit(config_json: dict[str, Any], root: str, specs: list[MatchSpec]) -> int:
    config = TournamentConfig.from_json(config_json)

    def emit(spec: MatchSpec, result: dict[str, Any]) -> None:
        _results.put((spec.match_id, result))

    return asyncio.run(play_unit(config, Path(root), specs, emit, _stop.is_set))


class ParallelRun:
    """``matches`` in ``jobs`` worker processes. Entering forks the workers and hands them their units (before
    any display thread exists); :meth:`run` then calls ``emit`` in this process, in completion order."""

    def __init__(self, config: TournamentConfig, root: Path, matches: Sequence[MatchSpec], jobs: int) -> None:
        self.config = config
        self.root = root
        self.by_id = {m.match_id: m for m in matches}
        self.units = work_units(list(matches), jobs)
        self.jobs = max(1, min(jobs, len(self.units)))
        self.ctx = mp.get_context("fork")
        self.results: Any = self.ctx.Queue()
        self.stop = self.ctx.Event()
        self.pool: cf.ProcessPoolExecutor | None = None
        self.futures: list[cf.Future[int]] = []

    def __enter__(self) -> ParallelRun:
        self.pool = cf.ProcessPoolExecutor(
            self.jobs,
            mp_context=self.ctx,
            initializer=_init_worker,
            initargs=(self.results, self.stop, os.getpid()),
        )
        cfg = self.config.to_json()
        self.futures = [self.pool.submit(_worker_unit, cfg, str(self.root), unit) for unit in self.units]
        return self

    def run(self, emit: Emit, should_stop: Callable[[], bool]) -> None:
        """Receive every result, stopping the workers once ``should_stop`` says so; re-raise worker errors."""
        received = 0
        while True:
            try:
                match_id, result = self.results.get(timeout=0.1)
            except queue.Empty:
                done = [f for f in self.futures if f.done()]
                for f in done:
                    exc = None if f.cancelled() else f.exception()
                    if exc is not None:
                        raise exc from None
                expected = sum(f.result() for f in done if not f.cancelled())
                if len(done) == len(self.futures) and received >= expected:
                    return
                continue
            received += 1
            emit(self.by_id[match_id], result)
            if should_stop() and not self.stop.is_set():
                self._halt()

    def _halt(self) -> None:
        self.stop.set()
        for f in self.futures:
            f.cancel()

    def __exit__(self, *exc: object) -> None:
        self._halt()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
