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
:data:`~.worker.BATCH_S` of each other together), the driver records it at once, and when the actor dies the matches of
its unit that have no result yet go back to the queue, for another actor, with the same deals. A match is
recorded only when its result arrives, and a second result for a recorded match is ignored, so nothing is lost
or counted twice. A replacement actor is requested for each lost one; Ray places it once the cluster has room.
When the lost unit had played the first game of a pair but not the second, the second goes to another slot and
is played there on bot processes of that slot: the processes that played the first game died with the lost
actor (bots die with their parent) or sit on a node cut off from the cluster, so no local channel joins them.

The package has three parts: :mod:`~referee.tournament.ray_backend.cluster` (joining a cluster, the preflight
of its nodes), :mod:`~referee.tournament.ray_backend.worker` (what runs on a node: a worker slot, a node's
preflight) and :mod:`~referee.tournament.ray_backend.driver` (the queue of units and the writing of results).
Ray is an optional dependency (``pip install 'koikoi-referee[ray]'``), imported only in this package and only
when the backend is chosen.
"""

from referee.tournament.ray_backend.cluster import connect, preflight
from referee.tournament.ray_backend.driver import RayRun

__all__ = ["RayRun", "connect", "preflight"]
