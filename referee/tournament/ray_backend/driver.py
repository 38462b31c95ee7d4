"""The driver side of a Ray run: one queue of work units fed to the worker slots, every result written into
the output folder as it arrives, lost slots replaced and their unrecorded matches queued again."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, NoReturn

from referee.tournament.config import TournamentConfig
from referee.tournament.folder import Output
from referee.tournament.match_page import match_page
from referee.tournament.preflight import first_line
from referee.tournament.ray_backend.cluster import connect, preflight
from referee.tournament.ray_backend.worker import Shipment, SlotWorker
from referee.tournament.runner import Emit, WorkerError
from referee.tournament.schedule import MatchSpec
from referee.tournament.units import Units

NODES_CSV = "nodes.csv"
"""The file in ``logs/`` that says which node played each match: ``match_id,node_id,node_ip``."""
NO_WORKER_S = 120.0
"""How long the driver waits with no live actor (none placed yet, or every one lost) before it gives up."""
PLACE_S = 30.0
"""How long the start waits for the worker slots to be placed (later ones join the run when placed)."""
POLL_S = 0.5
MAX_LOSSES = 3
"""How many times a match may be lost with its worker slot before the run gives up (a match that kills nodes)."""


@dataclass
class _Slot:
    """An actor and the unit it plays (if any)."""

    actor: Any
    unit: list[MatchSpec] = field(default_factory=list)


class RayRun:
    """``units`` on a Ray cluster: ``jobs`` actors fed from one queue of units, dealt as an actor is free for one
    (only the matches of the units taken and not yet recorded are held); the driver side.

    Entering connects (``address``; None: a local Ray runtime), checks the bots on every node and creates the
    actors; :meth:`run` then calls ``emit`` in this process, in completion order, after writing each match's
    replay and bot logs into ``root``.
    """

    def __init__(
        self,
        config: TournamentConfig,
        out: Output,
        units: Units,
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
        self.fresh = iter(units)
        self.units: deque[list[MatchSpec]] = deque()  # units taken and not played: the next, or a lost slot's
        self.jobs = max(1, min(jobs, len(units)))
        self.inflight: dict[str, MatchSpec] = {}
        """The matches of the units taken (queued, in play or lost with a slot) and not yet recorded, by id."""
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
        # the schedule's shape goes with the output settings, when the run writes pages: a few numbers
        actor = self._actor_class.remote(self.config.to_json(), self.out, self.cwd)
        self._all.append(actor)
        self._starting[actor.node.remote()] = actor

    def run(self, emit: Emit, should_stop: Callable[[], bool]) -> None:
        """Receive every result, stopping the actors once ``should_stop`` says so; :class:`WorkerError` when an
        actor failed (not by the loss of its node) or no actor could run for :data:`NO_WORKER_S` seconds."""
        import ray

        stopped = False
        alone_since = time.monotonic()
        while self._running or (self._more() and not stopped):
            while self._idle and self._more() and not stopped:
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

    def _more(self) -> bool:
        """True when a unit is waiting to be played (the next one dealt when none is taken)."""
        if not self.units:
            unit = next(self.fresh, None)
            if unit is not None:
                self.inflight.update((m.match_id, m) for m in unit)
                self.units.append(unit)
        return bool(self.units)

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
            spec = self.inflight.pop(shipment.match_id, None)
            if spec is None:
                continue  # a result already recorded counts once
            self._write(spec, shipment)
            emit(spec, shipment.result, shipment.played)
            recorded = True
        return recorded

    def _lose(self, slot: _Slot) -> None:
        """The slot's actor or node is gone: its unrecorded matches go back to the queue, a new actor is asked
        for."""
        self.lost += 1
        rest = [m for m in slot.unit if m.match_id in self.inflight]
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
        if shipment.page is not None:
            (self.root / match_page(spec.match_id)).write_bytes(shipment.page)
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
