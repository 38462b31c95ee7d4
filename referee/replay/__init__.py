"""Replays ``koikoi-replay/1``: writing, reading, checking and showing them.

A replay is JSON lines: a header, the bots' hellos, then every engine event (full information) and every
decision (written before the events it caused), and a result line. The modules, by concept:

- :mod:`~referee.replay.writer`: :class:`ReplayWriter`, line by line, flushed after each decision (a referee
  killed mid-match leaves a valid prefix), each line signed in a MAC chain when given a key; a ``.jsonl.gz``
  path is written gzip-compressed, its prefix as readable as a plain file's.
- :mod:`~referee.replay.reader`: :func:`~referee.replay.reader.open_replay`, the one place that opens a replay
  (plain or ``.gz``), and the one strict reader, :class:`ReplayReader` / :func:`read_replay`: typed
  records (:class:`Header`, :class:`Hello`, :class:`EventLine`, :class:`Decision`, :class:`Result`), exact
  types, the signature chain under a key, a :class:`LineError` naming the first bad line.
- :mod:`~referee.replay.replayer`: :class:`Simulation`, the records replayed through the engine, checked line by
  line, with the engine state after each.
- :mod:`~referee.replay.verify`: :func:`verify`, one line per file; :mod:`~referee.replay.show`: :func:`show`,
  a play-by-play (as one seat saw it, with ``seat``), printable in any terminal (:func:`printable`).
- :mod:`~referee.replay.pictures` and :mod:`~referee.replay.html`: the HTML viewer, built with the engine and
  the observer.

No file content makes :func:`verify` or :func:`show` raise: problems are reported with a line number.
"""

from referee.replay.reader import (
    Decision,
    EventLine,
    Header,
    HeaderBot,
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
    "FORMAT", "Decision", "EventLine", "Header", "HeaderBot", "Hello", "Line", "LineError", "ReplayError",
    "ReplayReader", "ReplayWriter", "Result", "Simulation", "Step", "VerifyReport", "printable", "read_replay", "show",
    "verify",
]  # fmt: skip
