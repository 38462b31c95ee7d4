"""What runs on a node of the cluster: a worker slot (a Ray actor playing work units on its own bot processes,
shipping each finished match to the driver) and the preflight of one node."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.records import MatchResult
from referee.seats.process import adopt_orphans, kill_all_now
from referee.tournament.config import TournamentConfig
from referee.tournament.folder import Output
from referee.tournament.match_page import match_page
from referee.tournament.preflight import check_all
from referee.tournament.records import Played
from referee.tournament.runner import Worker, play_unit
from referee.tournament.schedule import MatchSpec

BATCH_S = 0.05
"""A slot sends the matches that end within this many seconds together (fewer messages for very short ones)."""


@dataclass
class Shipment:
    """One finished match as an actor sends it to the driver: the result, the replay and new bot log output."""

    match_id: str
    result: MatchResult
    played: Played
    replay: bytes | None
    logs: dict[str, bytes]  # log file name -> bytes written since the last shipment
    node_id: str
    node_ip: str
    page: bytes | None = None  # the match's viewer page, when the run writes pages


def node_of_this_process() -> tuple[str, str]:
    """The node this process runs on: its Ray node id and its address."""
    import ray

    ctx = ray.get_runtime_context()
    return ctx.get_node_id(), ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]


def enter(cwd: str) -> None:
    """Run bot commands relative to the driver's working directory ``cwd`` where the node has it (a shared file
    system); otherwise (or with ``cwd`` empty) stay where Ray put the worker (the copy of a ``runtime_env``
    working directory)."""
    if cwd and os.path.isdir(cwd):
        os.chdir(cwd)


class SlotWorker:
    """A worker slot on a node (a Ray actor): plays units on its own cache of bot processes, result by result."""

    def __init__(self, config_json: dict[str, Any], out: Output, cwd: str) -> None:
        """``out``: the driver's output settings; this slot writes with them into a staging folder of its own."""
        enter(cwd)
        adopt_orphans()  # the bots' orphans re-parent to this actor's process and are reaped here
        self.config = TournamentConfig.from_json(config_json)
        self.staging = Path(tempfile.mkdtemp(prefix="koikoi-ray-"))
        self.out = dataclasses.replace(out, root=self.staging)
        (self.staging / "replays").mkdir()
        (self.staging / "logs").mkdir()
        self.worker = Worker()
        self.stopping = False
        self.shipped: dict[str, int] = {}  # log file name -> bytes already sent
        self.node_id, self.node_ip = node_of_this_process()

    async def node(self) -> tuple[str, str]:
        """The node this slot runs on (id, address); answering also says the actor is placed and ready."""
        return self.node_id, self.node_ip

    async def stop(self) -> None:
        """Finish the current match, then play no more of the unit."""
        self.stopping = True

    async def play(self, unit: list[MatchSpec]) -> AsyncIterator[list[Shipment]]:
        """Play ``unit`` (one pairing's matches), yielding the matches as they end: each batch holds the matches
        that ended within :data:`BATCH_S` of its first (one match, unless they are very short). When the run
        writes pages (the slot's output has the schedule's shape), each match's viewer page is written here and
        shipped with it."""
        done: asyncio.Queue[tuple[MatchSpec, MatchResult, Played] | None] = asyncio.Queue()

        def emit(spec: MatchSpec, result: MatchResult, where: Played) -> None:
            done.put_nowait((spec, result, where))

        task = asyncio.ensure_future(play_unit(self.config, self.out, unit, emit, lambda: self.stopping, self.worker))
        task.add_done_callback(lambda _: done.put_nowait(None))
        loop = asyncio.get_running_loop()
        ended = False
        while not ended:
            item = await done.get()
            batch: list[Shipment] = []
            deadline = loop.time() + BATCH_S
            while item is not None:
                batch.append(self._ship(*item))
                try:
                    item = await asyncio.wait_for(done.get(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    break
            else:
                ended = True
            if batch:
                yield batch
        task.result()  # a failure of the unit (a bug, an unwritable staging folder) reaches the driver

    def _ship(self, spec: MatchSpec, result: MatchResult, where: Played) -> Shipment:
        replay_path = self.out.replay(spec.match_id)
        replay = replay_path.read_bytes() if replay_path.exists() else None
        page_path = self.staging / match_page(spec.match_id)
        page = page_path.read_bytes() if page_path.exists() else None
        for path in (replay_path, page_path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        return Shipment(spec.match_id, result, where, replay, self._new_logs(), self.node_id, self.node_ip, page)

    def _new_logs(self) -> dict[str, bytes]:
        """The bot log output written since the last call; the files of closed bots are then removed."""
        out: dict[str, bytes] = {}
        live = {s.process.stderr_path for s in self.worker.seats.values()}
        for path in [*(self.staging / "logs").iterdir()]:
            start = self.shipped.get(path.name, 0)
            if path.stat().st_size > start or path.name not in self.shipped:  # an empty log is kept too
                with open(path, "rb") as f:
                    f.seek(start)
                    data = f.read()
                out[path.name] = data
                self.shipped[path.name] = start + len(data)
            if path not in live:
                path.unlink()
                self.shipped.pop(path.name, None)
        return out

    async def finish(self) -> dict[str, bytes]:
        """Close every bot; returns the bot log output not sent yet, and removes the staging folder."""
        try:
            await self.worker.close()
            return self._new_logs()
        finally:
            kill_all_now()
            shutil.rmtree(self.staging, ignore_errors=True)


def check_node(config_json: dict[str, Any], cwd: str) -> tuple[str, str, str | None]:
    """The preflight of one node (run there as a Ray task): its id, its address and the first bot that failed
    :func:`~referee.tournament.preflight.check_all` there (None: every bot answered)."""
    enter(cwd)
    node_id, node_ip = node_of_this_process()
    try:
        failures = asyncio.run(check_all(TournamentConfig.from_json(config_json), first_only=True))
        return node_id, node_ip, failures[0] if failures else None
    finally:
        kill_all_now()
