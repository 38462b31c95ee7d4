"""Replays ``koikoi-replay/1``: the writer, :func:`verify` (re-simulation with the engine) and :func:`show`.

A replay is JSON lines: a header, the bots' hellos, then every engine event (full information) and every
decision (written before the events it caused), and a result line. The writer flushes as the match goes, so a
referee killed mid-match leaves a valid prefix; :func:`verify` calls such a file truncated and says how long
its valid prefix is. No file content makes :func:`verify` or :func:`show` raise: problems are reported with a
line number.
"""

from referee.replay.reader import (
    Decision,
    EventLine,
    Header,
    Hello,
    Line,
    LineError,
    ReplayError,
    ReplayReader,
    Result,
    read_replay,
)
from referee.replay.replayer import Simulation, Step
from referee.replay.safe import printable
from referee.replay.show import show
from referee.replay.verify import VerifyReport, verify
from referee.replay.writer import FORMAT, ReplayWriter

__all__ = [
    "FORMAT", "Decision", "EventLine", "Header", "Hello", "Line", "LineError", "ReplayError", "ReplayReader",
    "ReplayWriter", "Result", "Simulation", "Step", "VerifyReport", "printable", "read_replay", "show", "verify",
]  # fmt: skip
