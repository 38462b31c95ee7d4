"""Joining a Ray cluster (or starting a runtime on this machine) and checking every bot on its nodes."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any

from referee.tournament.config import TournamentConfig, TournamentError
from referee.tournament.preflight import first_line
from referee.tournament.ray_backend.worker import check_node

NEEDS_RAY = "{} ray needs Ray: pip install 'koikoi-referee[ray]'"
"""The error of the ray backend where Ray is not installed (``{}`` names the setting ``backend``)."""
LOCAL_STORE = 200_000_000
"""Object store bytes of a Ray runtime started here (results and replays are small)."""
CONNECT_S = 10.0
"""How long the head's address may take to accept a connection."""


def node_label(node_id: str, node_ip: str) -> str:
    """How errors name a node: its address and the start of its Ray node id."""
    return f"{node_ip} ({node_id[:12]})"


class _ToStderr:
    """Ray's printer of driver output, made to print on stderr."""

    def __init__(self, original: Callable[[dict[str, Any], bool], None]) -> None:
        self.original = original

    def __call__(self, data: dict[str, Any], ignore_prefix: bool) -> None:
        self.original({**data, "is_err": True}, ignore_prefix)


def _cluster_events_to_stderr() -> None:
    """Ray's driver prints cluster events (a node marked dead, say) on stdout, where ``--json`` prints the
    standings: they go to stderr instead."""
    from ray._private import worker

    original: Any = getattr(worker, "print_to_stdstream", None)
    if original is None or isinstance(original, _ToStderr):
        return
    worker.print_to_stdstream = _ToStderr(original)


def _check_reachable(address: str) -> None:
    """A quick TCP connection to a ``HOST:PORT`` address, so that a wrong one is an error within seconds (Ray
    itself retries for minutes); other address forms (``auto``, ``ray://...``) are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S).close()
    except (OSError, ValueError) as exc:
        raise TournamentError.about(
            "ray_address", f"{{}} {address}: no Ray head answers there: {first_line(exc)}"
        ) from None


def connect(address: str | None, jobs: int, working_dir: str | None = None) -> bool:
    """Join the cluster at ``address`` (None: start a Ray runtime on this machine with ``jobs`` CPUs), with
    ``working_dir`` copied to every node (None: nothing copied); returns True when this call connected (and the
    caller should disconnect)."""
    try:
        import ray
    except ImportError:
        raise TournamentError.about("backend", NEEDS_RAY) from None
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report to Ray's usage server
    _cluster_events_to_stderr()
    quiet: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if working_dir is not None:
        if not os.path.isdir(working_dir):
            raise TournamentError.about("ray_working_dir", f"{{}} {working_dir}: not a folder")
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
        if address is None:
            raise TournamentError(f"a local Ray runtime: cannot connect: {first_line(exc)}") from None
        raise TournamentError.about("ray_address", f"{{}} {address}: cannot connect: {first_line(exc)}") from None
    finally:
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                if handler is not None:
                    signal.signal(sig, handler)
    return True


def preflight(config: TournamentConfig, cwd: str, nodes: Sequence[str] | None = None) -> set[str]:
    """Check every bot on ``nodes`` (None: every live node with a CPU, where slots can go), the bots started
    from ``cwd`` (see :func:`~referee.tournament.ray_backend.worker.enter`); returns the ids of the nodes
    checked (a node lost meanwhile is not).

    :class:`TournamentError` naming the first node and bot that failed."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if nodes is None:
        alive = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
        nodes = [n["NodeID"] for n in alive if n.get("Resources", {}).get("CPU", 0) >= 1]
    task = ray.remote(num_cpus=0, max_retries=0)(check_node)
    refs = [
        task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote(config.to_json(), cwd)
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
