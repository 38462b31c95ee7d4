"""Running a tournament's matches: bot processes reused across a pairing's matches, in parallel workers.

The schedule is cut into small work units (a pairing's consecutive deal pairs, see :func:`work_units`). A
worker keeps one asyncio loop and a cache of started bots, one per bot name: consecutive units of the same
pairing play on the same two processes (the protocol's ``new_match``), and the bots are only closed when the
worker moves to another pairing or ends. A bot that forfeits is closed and started afresh for its next match,
so a crash, hang or stray output never leaks into another match.

Both games of a deal pair are in the same unit, its first-played game first, so one worker plays them one after
the other. Each result goes out with a :class:`~referee.tournament.records.Played` note: which worker played
it (host and process id), the worker's running count of matches and the wall-clock start and end, so that a
report can check that the two games of every pair ran on one worker and never overlapped.

With ``jobs`` above 1, ``jobs`` worker processes take units from a shared queue and send each finished result
back to the main process, which alone writes the progress log. The units are dealt as the queue needs them
(:class:`~referee.tournament.units.Units`): a few a worker are queued at a time, each worker asking for the next
when it ends one. A worker whose parent dies (even by SIGKILL)
kills its bots and exits. When the run writes pages (:attr:`~referee.tournament.folder.Output.pages`), the worker
that played a match writes its viewer page before sending the result, off the main process's path.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import multiprocessing as mp
import os
import queue
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from referee.errors import OutputError, RefereeError
from referee.match import MatchConfig, play_match
from referee.records import MatchResult
from referee.replay.html import ViewerError
from referee.replay.writer import halt_all
from referee.seats import BotSeat
from referee.seats.process import Limits, adopt_orphans, kill_all_now
from referee.tournament.config import TournamentConfig
from referee.tournament.folder import Output, output_error
from referee.tournament.match_page import write_match_page
from referee.tournament.records import Played, Record
from referee.tournament.schedule import MatchSpec
from referee.tournament.units import Units


def bot_limits(config: TournamentConfig, name: str | None = None) -> Limits:
    """The limits of bot ``name`` of ``config`` (None: of a bot without settings of its own): a fresh working
    directory, the tournament's sandbox, and its settings (memory 2048 MiB unless set; 0: no limit)."""
    s = config.settings_of(name) if name is not None else dataclasses.replace(config.settings, env=config.bot_env)
    return s.limits(sandbox=config.sandbox, ponder=config.ponder, require_cgroups=config.require_cgroups)


Emit = Callable[[MatchSpec, MatchResult, Played], None]
"""Called with each finished match, its result and where and when it was played."""


def worker_name() -> str:
    """This process as a worker: ``host/pid`` (two workers alive at the same time never share it)."""
    return f"{socket.gethostname()}/{os.getpid()}"


@dataclass
class Worker:
    """One worker's state across its units: the cache of started bots (by :func:`seat_key`), its name and how
    many matches it has played."""

    seats: dict[str, BotSeat] = field(default_factory=dict)
    name: str = field(default_factory=worker_name)
    played: int = 0

    async def close(self) -> None:
        """Close every cached bot."""
        await close_seats(self.seats)


class WorkerError(RefereeError):
    """A worker process failed outside any bot's fault (a bug or a lost worker); the run can be resumed."""


def match_config(
    config: TournamentConfig, spec: MatchSpec, replay: Path | None, key: bytes | None = None
) -> MatchConfig:
    """The match runner's configuration of one scheduled match (its replay signed with ``key``)."""
    times = (config.time_of(spec.seats[0]), config.time_of(spec.seats[1]))
    return MatchConfig(
        rules=config.rules,
        seed=spec.seed,
        match_id=spec.match_id,
        first_dealer=spec.first_dealer,
        deals=() if spec.suite is None else config.suite[spec.suite],
        time=config.time,
        seat_times=None if times == (config.time, config.time) else times,
        replay_path=replay,
        replay_key=key,
        names=spec.seats,
    )


async def close_seats(seats: dict[str, BotSeat], keep: frozenset[str] = frozenset()) -> None:
    """Close (bye, then kill the process group) every cached seat not named in ``keep``."""
    for key in [k for k in seats if k not in keep]:
        await seats.pop(key).close()


TWINS_VAR = "KOIKOI_REFEREE_TWINS"
"""Set to ``keep``, the processes that played the first game of a pair stay in the cache, frozen, while its second
game is played (a diagnostic for the fairness battery's control; see :func:`ends_first_games`)."""


def ends_first_games() -> bool:
    """Whether the bot processes that played a pair's first-played game are ended before its second is played.

    A frozen process keeps what it holds of the kernel (open files, threads, memory, AIO contexts), and some of
    that shows in machine-wide counts (``/proc/sys/fs/file-nr``, ``sysinfo(2)``) that the same bot's process in the
    twin game can read: a frozen first-game process could tell it the opponent's hand. Ended, it holds nothing.
    On by default; :data:`TWINS_VAR` ``=keep`` turns it off."""
    return os.environ.get(TWINS_VAR, "").strip().lower() != "keep"


def seat_key(name: str, game: str) -> str:
    """The cache key of a bot process: one per bot and game letter of a pairing.

    Both games of a duplicate pair deal the same cards, so a process that played game ``a`` would know the
    opponent's hand and the stock order in game ``b``. Game ``a`` and game ``b`` therefore run on different
    processes of each bot; each process plays every deal only once, and the processes of a pair's first-played
    game are ended before its second is played (:func:`ends_first_games`).
    """
    return f"{name}/{game}"


async def play_unit(
    config: TournamentConfig,
    out: Output,
    specs: Sequence[MatchSpec],
    emit: Emit,
    should_stop: Callable[[], bool],
    worker: Worker,
) -> int:
    """Play ``specs`` (one pairing, in order) on the ``worker``'s cached bots, starting missing ones, with replays
    and logs written to ``out``; returns matches played.

    :class:`OutputError` when a replay or log cannot be written (a full disk): the match is left interrupted.
    """
    commands = {b.name: config.command_of(b.name) for b in config.bots}
    seats = worker.seats
    if specs:
        await close_seats(seats, frozenset(seat_key(n, s.lot) for s in specs for n in s.seats))
    played = 0
    halves: dict[tuple[int, int], Record] = {}  # a pair's game played in this unit, its twin not yet
    for spec in specs:
        if should_stop():
            break
        keys = (seat_key(spec.seats[0], spec.lot), seat_key(spec.seats[1], spec.lot))
        for name, key in zip(spec.seats, keys, strict=True):
            if key not in seats:
                log = out.log(spec.match_id, name)
                seats[key] = BotSeat(commands[name], label=name, stderr_path=log, limits=bot_limits(config, name))
                seats[key].log_of = partial(out.log, bot=name)  # a reused bot: one log per match
        pair = (seats[keys[0]], seats[keys[1]])
        replay = out.replay(spec.match_id)
        worker.played += 1
        start = time.time()
        try:
            result = await play_match(pair, match_config(config, spec, replay, out.key))
        except OSError as exc:
            raise output_error(exc, replay) from None
        where = Played(worker.name, worker.played, start, time.time())
        broken = {keys[result.forfeit.seat]} if result.forfeit is not None else set()
        broken |= {key for key, seat in seats.items() if seat.failed is not None}
        if spec.order == 1 and ends_first_games():  # nothing that saw this deal lives on while its twin is played
            broken |= {key for key in keys if key in seats}
        # closed first (their last words are in the match's log when its page links it), side by side
        await asyncio.gather(*(seats.pop(key).close() for key in sorted(broken)))
        if out.pages is not None:  # a pair's pages once both its games are played: a page shows the deal
            rec, twin = Record.of(spec, result, where), halves.pop((spec.pairing, spec.pair), None)
            if twin is None:
                halves[(spec.pairing, spec.pair)] = rec
            else:
                write_page(out, twin)
                write_page(out, rec)
        emit(spec, result, where)
        played += 1
    return played


def write_page(out: Output, rec: Record) -> None:
    """The viewer page of a match played (its replay closed) whose twin is played too (a page shows the pair's
    deal, which the twin plays again), linking its neighbours in ``out.pages``; a page that cannot be written, or
    whose twin was played in another unit, is left to the end of the run, which writes the pages a folder lacks
    for its complete pairs."""
    if out.pages is None:
        return
    before, after = out.pages.links(rec.spec)
    with contextlib.suppress(ViewerError):
        write_match_page(out.root, rec, before, after)


def run_serial(
    config: TournamentConfig, out: Output, units: Units, emit: Emit, should_stop: Callable[[], bool]
) -> None:
    """Play ``units`` in this process, one after another (``-j 1``), writing to ``out``."""

    async def _all() -> None:
        worker = Worker()
        try:
            for unit in units:
                if should_stop():
                    return
                await play_unit(config, out, unit, emit, should_stop, worker)
        finally:
            await worker.close()

    asyncio.run(_all())


# -- worker processes ----------------------------------------------------------------------------------------


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.2)
        if os.getppid() != parent:  # the referee died: its matches are interrupted, none ends by this kill
            halt_all()
            kill_all_now()
            os._exit(3)


def _worker(config_json: dict[str, Any], out: Output, tasks: Any, results: Any, stop: Any, parent: int) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process stops the workers
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    adopt_orphans()  # not inherited through fork: the bots' orphans re-parent here and are reaped here
    config = TournamentConfig.from_json(config_json)
    loop = asyncio.new_event_loop()
    worker = Worker()
    played = 0

    def emit(spec: MatchSpec, result: MatchResult, where: Played) -> None:
        results.put(("result", spec.match_id, result, where))

    try:
        while True:
            unit = tasks.get()
            if unit is None:
                break
            if not stop.is_set():
                played += loop.run_until_complete(
                    play_unit(config, out, unit, emit, stop.is_set, worker)
                )
            results.put(("next",))
    except OutputError as exc:
        results.put(("fault", str(exc)))
    except BaseException:
        results.put(("error", traceback.format_exc(limit=8)))
    finally:
        try:
            loop.run_until_complete(worker.close())
            loop.close()
        finally:
            kill_all_now()
            results.put(("done", played))


QUEUED = 2
"""Units queued a worker: one to play next while it plays one (a worker asks for another as it ends each)."""


class ParallelRun:
    """``units`` in ``jobs`` worker processes fed from one queue.

    Entering forks the workers (before any display thread exists) and queues the first units, :data:`QUEUED` a
    worker; :meth:`run` then calls ``emit`` in this process, in completion order, and queues the next unit each
    time a worker ends one. Only the matches of the units queued or in play are held here.
    """

    def __init__(self, config: TournamentConfig, out: Output, units: Units, jobs: int) -> None:
        self.config = config
        self.out = out
        self.units = iter(units)
        self.inflight: dict[str, MatchSpec] = {}
        """The matches of the units queued or in play, by id."""
        self.jobs = max(1, min(jobs, len(units)))
        self.ctx = mp.get_context("fork")
        self.tasks: Any = self.ctx.Queue()
        self.results: Any = self.ctx.Queue()
        self.stop = self.ctx.Event()
        self.workers: list[Any] = []
        self._fed = False  # every unit queued, and the workers' ends after them

    def _feed(self) -> None:
        """Queue the next unit; when none is left (or the run stops), an end for each worker instead."""
        if self._fed:
            return
        unit = None if self.stop.is_set() else next(self.units, None)
        if unit is None:
            self._fed = True
            for _ in range(self.jobs):
                self.tasks.put(None)
            return
        self.inflight.update((m.match_id, m) for m in unit)
        self.tasks.put(unit)

    def __enter__(self) -> ParallelRun:
        for _ in range(QUEUED * self.jobs):
            self._feed()
        args = (self.config.to_json(), self.out, self.tasks, self.results, self.stop, os.getpid())
        for i in range(self.jobs):
            p = self.ctx.Process(target=_worker, args=args, name=f"koikoi-worker-{i + 1}", daemon=False)
            p.start()
            self.workers.append(p)
        return self

    def run(self, emit: Emit, should_stop: Callable[[], bool]) -> None:
        """Receive every result, stopping the workers once ``should_stop`` says so; :class:`OutputError` when a
        worker could not write its output, :class:`WorkerError` when one failed otherwise."""
        done = 0
        errors: list[str] = []
        faults: list[str] = []
        while done < len(self.workers):
            try:
                msg = self.results.get(timeout=0.5)
            except queue.Empty:
                lost = [p for p in self.workers if p.exitcode not in (None, 0)]
                if lost:  # killed from outside before it could report
                    self.stop.set()
                    raise WorkerError(f"worker {lost[0].name} ended with status {lost[0].exitcode}") from None
                continue
            if msg[0] == "result":
                emit(self.inflight.pop(msg[1]), msg[2], msg[3])
                if should_stop():
                    self.stop.set()
            elif msg[0] == "next":
                self._feed()
            elif msg[0] == "error":
                self.stop.set()
                errors.append(msg[1])
            elif msg[0] == "fault":
                self.stop.set()
                faults.append(msg[1])
            else:
                done += 1
        if faults:
            raise OutputError(faults[0])
        if errors:
            log = self.out.root / "logs" / "worker-error.log"
            with contextlib.suppress(OSError):
                log.write_text(errors[0], encoding="utf-8")
            last = errors[0].strip().splitlines()[-1] if errors[0].strip() else "?"
            raise WorkerError(f"a worker failed: {last} (the traceback is in {log})")

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if not self._fed:  # an end for each worker after the units queued (skipped once stopped): none waits on
            self._fed = True  # the queue for a unit that will not come
            for _ in self.workers:
                self.tasks.put(None)
        deadline = time.monotonic() + 30
        while any(p.is_alive() for p in self.workers) and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):  # drain: no worker may block on a full pipe
                self.results.get(timeout=0.1)
        for p in self.workers:
            if p.is_alive():
                p.kill()
            p.join()
