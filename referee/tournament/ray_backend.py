"""Running a tournament's matches on a Ray cluster (``tournament --backend ray``).

The same work units as the local backend (:func:`~referee.tournament.schedule.work_units`) go to ``jobs`` Ray
actors, one per worker slot, placed by Ray on the cluster's nodes (one CPU each). An actor keeps a cache of bot
processes exactly like a local worker and plays each unit with the local backend's
:func:`~referee.tournament.runner.play_unit`, each bot in the sandbox of the node it runs on. Replays and bot
logs are written in a staging folder on the node and sent back with each result, so the nodes need no shared
file system for the output: the driver (this process) writes the output folder through the same
:class:`~referee.tournament.store.Store` as the local backend, result by result, and also records which node
played each match in ``logs/nodes.csv``.

Before any match, every node of the cluster starts every bot and waits for its ``hello`` (:func:`preflight`);
a failure is one error naming the node and the bot. A node that joins later is checked the same way before its
first slot gets work.

A lost node (or a lost actor) is handled by the driver's own bookkeeping, not by Ray's restarts or retries
(actors are created with ``max_restarts=0``): an actor streams each finished match (those that end within
:data:`BATCH_S` of each other together), the driver records it at once, and when the actor dies the matches of
its unit that have no result yet go back to the queue, for another actor, with the same deals. A match is
recorded only when its result arrives, and a second result for a recorded match is ignored, so nothing is lost
or counted twice. A replacement actor is requested for each lost one; Ray places it once the cluster has room.
When the lost unit had played the first game of a pair but not the second, the second goes to another slot and
is played there on bot processes of that slot: the processes that played the first game died with the lost
actor (bots die with their parent) or sit on a node cut off from the cluster, so no local channel joins them.

Ray is an optional dependency (``pip install 'koikoi-referee[ray]'``), imported only here and only when the
backend is chosen.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import dataclasses
import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn

from referee.records import MatchResult
from referee.seats.descendants import adopt_orphans
from referee.seats.process import kill_all_now
from referee.tournament.config import TournamentConfig, TournamentError
from referee.tournament.preflight import check_all, first_line
from referee.tournament.records import Played
from referee.tournament.runner import Emit, Worker, WorkerError, play_unit
from referee.tournament.schedule import MatchSpec, work_units
from referee.tournament.store import Output

BACKENDS = ("local", "ray")
"""The values of ``--backend``."""
NEEDS_RAY = "--backend ray needs Ray: pip install 'koikoi-referee[ray]'"
NODES_CSV = "nodes.csv"
"""The file in ``logs/`` that says which node played each match: ``match_id,node_id,node_ip``."""
NO_WORKER_S = 120.0
"""How long the driver waits with no live actor (none placed yet, or every one lost) before it gives up."""
LOCAL_STORE = 200_000_000
"""Object store bytes of a Ray runtime started here (results and replays are small)."""
CONNECT_S = 10.0
"""How long the head's address may take to accept a connection."""
PLACE_S = 30.0
"""How long the start waits for the worker slots to be placed (later ones join the run when placed)."""
POLL_S = 0.5
BATCH_S = 0.05
"""A slot sends the matches that end within this many seconds together (fewer messages for very short ones)."""
MAX_LOSSES = 3
"""How many times a match may be lost with its worker slot before the run gives up (a match that kills nodes)."""


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


def _node() -> tuple[str, str]:
    import ray

    ctx = ray.get_runtime_context()
    return ctx.get_node_id(), ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]


def _enter(cwd: str) -> None:
    """Run bot commands relative to the driver's working directory ``cwd`` where the node has it (a shared file
    system); otherwise (or with ``cwd`` empty) stay where Ray put the worker (the copy of a ``runtime_env``
    working directory)."""
    if cwd and os.path.isdir(cwd):
        os.chdir(cwd)


class SlotWorker:
    """A worker slot on a node (a Ray actor): plays units on its own cache of bot processes, result by result."""

    def __init__(self, config_json: dict[str, Any], out: Output, cwd: str) -> None:
        """``out``: the driver's output settings; this slot writes with them into a staging folder of its own."""
        _enter(cwd)
        adopt_orphans()  # the bots' orphans re-parent to this actor's process and are reaped here
        self.config = TournamentConfig.from_json(config_json)
        self.staging = Path(tempfile.mkdtemp(prefix="koikoi-ray-"))
        self.out = dataclasses.replace(out, root=self.staging)
        (self.staging / "replays").mkdir()
        (self.staging / "logs").mkdir()
        self.worker = Worker()
        self.stopping = False
        self.shipped: dict[str, int] = {}  # log file name -> bytes already sent
        self.node_id, self.node_ip = _node()

    async def node(self) -> tuple[str, str]:
        """The node this slot runs on (id, address); answering also says the actor is placed and ready."""
        return self.node_id, self.node_ip

    async def stop(self) -> None:
        """Finish the current match, then play no more of the unit."""
        self.stopping = True

    async def play(self, unit: list[MatchSpec]) -> AsyncIterator[list[Shipment]]:
        """Play ``unit`` (one pairing's matches), yielding the matches as they end: each batch holds the matches
        that ended within :data:`BATCH_S` of its first (one match, unless they are very short)."""
        done: asyncio.Queue[tuple[MatchSpec, MatchResult, Played] | None] = asyncio.Queue()

        def emit(spec: MatchSpec, result: MatchResult, where: Played) -> None:
            done.put_nowait((spec, result, where))

        task = asyncio.ensure_future(
            play_unit(self.config, self.out, unit, emit, lambda: self.stopping, self.worker)
        )
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
        with contextlib.suppress(FileNotFoundError):
            replay_path.unlink()
        return Shipment(spec.match_id, result, where, replay, self._new_logs(), self.node_id, self.node_ip)

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
    _enter(cwd)
    node_id, node_ip = _node()
    try:
        failures = asyncio.run(check_all(TournamentConfig.from_json(config_json), first_only=True))
        return node_id, node_ip, failures[0] if failures else None
    finally:
        kill_all_now()


def node_label(node_id: str, node_ip: str) -> str:
    """How errors name a node: its address and the start of its Ray node id."""
    return f"{node_ip} ({node_id[:12]})"


def _cluster_events_to_stderr() -> None:
    """Ray's driver prints cluster events (a node marked dead, say) on stdout, where ``--json`` prints the
    standings: they go to stderr instead."""
    from ray._private import worker

    original: Any = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "koikoi_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.koikoi_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def _check_reachable(address: str) -> None:
    """A quick TCP connection to a ``HOST:PORT`` address, so that a wrong one is an error within seconds (Ray
    itself retries for minutes); other address forms (``auto``, ``ray://...``) are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S).close()
    except (OSError, ValueError) as exc:
        raise TournamentError(f"--ray-address {address}: no Ray head answers there: {first_line(exc)}") from None


def connect(address: str | None, jobs: int, working_dir: str | None = None) -> bool:
    """Join the cluster at ``address`` (None: start a Ray runtime on this machine with ``jobs`` CPUs), with
    ``working_dir`` copied to every node (None: nothing copied); returns True when this call connected (and the
    caller should disconnect)."""
    try:
        import ray
    except ImportError:
        raise TournamentError(NEEDS_RAY) from None
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report to Ray's usage server
    _cluster_events_to_stderr()
    quiet: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if working_dir is not None:
        if not os.path.isdir(working_dir):
            raise TournamentError(f"--ray-working-dir {working_dir}: not a folder")
        quiet["runtime_env"] = {"working_dir": working_dir}
    # Ray's core worker takes over SIGTERM and SIGINT (and exits); the referee's handlers come back, so that both
    # still interrupt the run for a later --resume
    if address is not None:
        _check_reachable(address)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if address is not None:
            ray.init(address=address, **quiet)
        else:  # "local": a runtime of its own, even where a cluster was started on this machine
            ray.init(address="local", num_cpus=jobs, include_dashboard=False, object_store_memory=LOCAL_STORE, **quiet)
    except (OSError, RuntimeError, ValueError) as exc:
        where = f"--ray-address {address}" if address else "a local Ray runtime"
        raise TournamentError(f"{where}: cannot connect: {first_line(exc)}") from None
    finally:
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                if handler is not None:
                    signal.signal(sig, handler)
    return True


def preflight(config: TournamentConfig, cwd: str, nodes: Sequence[str] | None = None) -> set[str]:
    """Check every bot on ``nodes`` (None: every live node with a CPU, where slots can go), the bots started
    from ``cwd`` (see :func:`_enter`); returns the ids of the nodes checked (a node lost meanwhile is not).

    :class:`TournamentError` naming the first node and bot that failed."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if nodes is None:
        alive = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
        nodes = [n["NodeID"] for n in alive if n.get("Resources", {}).get("CPU", 0) >= 1]
    task = ray.remote(num_cpus=0, max_retries=0)(check_node)
    refs = [
        task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(
            config.to_json(), cwd
        )
        for n in nodes
    ]
    checked: set[str] = set()
    for ref in refs:
        try:
            node_id, node_ip, error = ray.get(ref)
        except ray.exceptions.RayError:
            continue  # the node went away; a slot placed there later is checked then
        if error is not None:
            raise TournamentError(f"node {node_label(node_id, node_ip)}: {error}")
        checked.add(node_id)
    return checked


@dataclass
class _Slot:
    """An actor and the unit it plays (if any)."""

    actor: Any
    unit: list[MatchSpec] = field(default_factory=list)


class RayRun:
    """``matches`` on a Ray cluster: ``jobs`` actors fed from one queue of units; the driver side.

    Entering connects (``address``; None: a local Ray runtime), checks the bots on every node and creates the
    actors; :meth:`run` then calls ``emit`` in this process, in completion order, after writing each match's
    replay and bot logs into ``root``.
    """

    def __init__(
        self,
        config: TournamentConfig,
        out: Output,
        matches: Sequence[MatchSpec],
        jobs: int,
        address: str | None = None,
        working_dir: str | None = None,
    ) -> None:
        # with a shipped working directory, relative bot paths are read in each node's copy of it
        self.config = config if working_dir is None else dataclasses.replace(config, workdir=None)
        self.out = out
        self.root = out.root
        self.address = address
        self.working_dir = working_dir
        # bots start from the copy of the working directory where one is shipped, else from the driver's folder
        self.cwd = "" if working_dir is not None else os.getcwd()
        self.by_id = {m.match_id: m for m in matches}
        self.units: deque[list[MatchSpec]] = deque(work_units(list(matches), jobs))
        self.jobs = max(1, min(jobs, len(self.units)))
        self.recorded: set[str] = set()
        self.lost = 0  # actors lost while running
        self.checked: set[str] = set()  # nodes whose preflight passed
        self.losses: dict[str, int] = {}  # match id -> times it was lost with its slot
        self.failed_starts = 0  # slots that died before they were placed
        self._owner = False
        self._actor_class: Any = None
        self._starting: dict[Any, Any] = {}  # the ready call of an actor not placed yet -> the actor
        self._idle: list[Any] = []
        self._running: dict[Any, _Slot] = {}  # an actor's stream of results -> the slot
        self._all: list[Any] = []
        self._nodes: IO[str] | None = None

    def __enter__(self) -> RayRun:
        self._owner = connect(self.address, self.jobs, self.working_dir)
        try:
            import ray

            self.checked = preflight(self.config, self.cwd)
            self._actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(SlotWorker)
            for _ in range(self.jobs):
                self._add_actor()
            # wait for the slots the cluster has room for (the others join when a node with a free CPU appears)
            deadline = time.monotonic() + PLACE_S
            while self._starting and time.monotonic() < deadline:
                ready, _ = ray.wait(list(self._starting), num_returns=len(self._starting), timeout=POLL_S)
                for ref in ready:
                    self._placed(ref)
                if self._idle and len(self._idle) >= ray.cluster_resources().get("CPU", 0):  # type: ignore[no-untyped-call]
                    break
        except BaseException:
            self._disconnect()
            raise
        return self

    def _add_actor(self) -> None:
        actor = self._actor_class.remote(self.config.to_json(), self.out, self.cwd)
        self._all.append(actor)
        self._starting[actor.node.remote()] = actor

    def run(self, emit: Emit, should_stop: Callable[[], bool]) -> None:
        """Receive every result, stopping the actors once ``should_stop`` says so; :class:`WorkerError` when an
        actor failed (not by the loss of its node) or no actor could run for :data:`NO_WORKER_S` seconds."""
        import ray

        stopped = False
        alone_since = time.monotonic()
        while self._running or (self.units and not stopped):
            while self._idle and self.units and not stopped:
                actor = self._idle.pop()
                unit = self.units.popleft()
                self._running[actor.play.remote(unit)] = _Slot(actor, unit)
            if self._running or self._idle:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since > NO_WORKER_S:
                raise WorkerError(
                    f"no worker could run on the cluster for {NO_WORKER_S:.0f} s ({self.lost} lost); "
                    "the run can be resumed"
                )
            waiting = [*self._running, *self._starting]
            if not waiting:
                if stopped:  # idle slots only: nothing left to receive
                    break
                raise WorkerError("no worker slot is left on the cluster; the run can be resumed")
            ready, _ = ray.wait(waiting, num_returns=1, timeout=POLL_S)
            for ref in ready:
                if ref in self._starting:
                    self._placed(ref)
                elif self._receive(ref, emit) and should_stop() and not stopped:
                    stopped = True
                    for slot in self._running.values():
                        slot.actor.stop.remote()

    def _placed(self, ref: Any) -> None:
        import ray

        actor = self._starting.pop(ref)
        try:
            node_id, _ = ray.get(ref)
        except ray.exceptions.RuntimeEnvSetupError as exc:  # --ray-working-dir could not be set up on a node
            raise WorkerError(f"Ray could not prepare a worker slot: {first_line(exc)}") from None
        except ray.exceptions.RayError as exc:  # the slot died before it got any work: its node went away, say
            self.failed_starts += 1
            if self.failed_starts > 2 * self.jobs + 2:
                raise WorkerError(f"worker slots keep failing to start: {first_line(exc)}") from None
            self._add_actor()
            return
        if node_id not in self.checked:  # a node that joined the cluster after the start
            self.checked |= preflight(self.config, self.cwd, [node_id])
        if node_id in self.checked:
            self._idle.append(actor)
        else:
            ray.kill(actor)
            self._add_actor()

    def _receive(self, stream: Any, emit: Emit) -> bool:
        """Take the next batch of an actor's stream; True when a result was recorded."""
        import ray

        slot = self._running[stream]
        try:
            batch: list[Shipment] = ray.get(next(stream))
        except StopIteration:
            del self._running[stream]
            self._idle.append(slot.actor)
            return False
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, ray.exceptions.ObjectLostError):
            del self._running[stream]
            self._lose(slot)
            return False
        except ray.exceptions.RayTaskError as exc:
            del self._running[stream]
            self._fail(exc)
        except ray.exceptions.RayError:  # any other loss of the slot (its worker process killed, say)
            del self._running[stream]
            self._lose(slot)
            return False
        recorded = False
        for shipment in batch:
            if shipment.match_id in self.recorded or shipment.match_id not in self.by_id:
                continue  # a result already recorded counts once
            spec = self.by_id[shipment.match_id]
            self._write(spec, shipment)
            emit(spec, shipment.result, shipment.played)
            self.recorded.add(spec.match_id)
            recorded = True
        return recorded

    def _lose(self, slot: _Slot) -> None:
        """The slot's actor or node is gone: its unrecorded matches go back to the queue, a new actor is asked
        for."""
        self.lost += 1
        rest = [m for m in slot.unit if m.match_id not in self.recorded]
        for m in rest:
            self.losses[m.match_id] = self.losses.get(m.match_id, 0) + 1
            if self.losses[m.match_id] > MAX_LOSSES:
                raise WorkerError(
                    f"match {m.match_id} was lost with its worker slot {MAX_LOSSES + 1} times (a node failing, or "
                    f"Ray stopping the slot: see `ray status` and the Ray logs); the run can be resumed"
                )
        if rest:
            self.units.appendleft(rest)
        with contextlib.suppress(Exception):
            import ray

            ray.kill(slot.actor)
        self._add_actor()

    def _fail(self, exc: Exception) -> NoReturn:
        log = self.root / "logs" / "worker-error.log"
        text = str(exc)
        with contextlib.suppress(OSError):
            log.write_text(text, encoding="utf-8")
        last = text.strip().splitlines()[-1] if text.strip() else "?"
        raise WorkerError(f"a worker failed: {last} (the traceback is in {log})")

    def _write(self, spec: MatchSpec, shipment: Shipment) -> None:
        """The match's replay, its bots' new log output and its node, into the output folder (written like the
        local backend's: the result line that follows is the one fsynced)."""
        if shipment.replay is not None:
            self.out.replay(spec.match_id).write_bytes(shipment.replay)
        self._append_logs(shipment.logs)
        if self._nodes is None:
            path = self.root / "logs" / NODES_CSV
            new = not path.exists()
            self._nodes = open(path, "a", encoding="utf-8", newline="")  # noqa: SIM115 - closed in __exit__
            if new:
                csv.writer(self._nodes).writerow(["match_id", "node_id", "node_ip"])
        csv.writer(self._nodes).writerow([spec.match_id, shipment.node_id, shipment.node_ip])
        self._nodes.flush()

    def _append_logs(self, logs: dict[str, bytes]) -> None:
        for name, data in logs.items():
            if "/" in name or name.startswith("."):
                continue
            with open(self.root / "logs" / name, "ab") as f:
                f.write(data)

    def __exit__(self, *exc: object) -> None:
        try:
            import ray

            for slot in self._running.values():
                with contextlib.suppress(Exception):
                    slot.actor.stop.remote()
            live = [a for a in self._all if a not in self._starting.values()]
            finishing = {a.finish.remote(): a for a in live}
            with contextlib.suppress(Exception):
                done, _ = ray.wait(list(finishing), num_returns=len(finishing), timeout=30)
                for ref in done:
                    with contextlib.suppress(Exception):
                        self._append_logs(ray.get(ref))
            for actor in self._all:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
        finally:
            if self._nodes is not None:
                with contextlib.suppress(OSError):
                    self._nodes.close()
                self._nodes = None
            self._disconnect()

    def _disconnect(self) -> None:
        if self._owner:
            import ray

            with contextlib.suppress(Exception):
                ray.shutdown()
            self._owner = False
