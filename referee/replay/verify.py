"""``replay verify``: a replay re-simulated with the engine (and its signature chain checked with the key), summed
up in one line.

No file content makes :func:`verify` raise: a problem is reported with its line number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from referee.replay.reader import LineError, ReplayError, Result
from referee.replay.replayer import Simulation, outcome_text
from referee.replay.safe import printable

NO_HEADER = "no header line (an empty file, or its first line is cut short)"
"""The message for a file with no complete first line."""
NO_KEY = "signature not checked: no key"
"""What a summary says when no key was given."""


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of :func:`verify`. ``lines``: the valid prefix (every line when ``ok``). ``signed``: the
    signature chain was checked (a key was given)."""

    path: str
    ok: bool
    lines: int
    decisions: int
    truncated: bool = False
    error_line: int | None = None
    message: str = ""
    result: Result | None = field(default=None, compare=False)
    signed: bool = False

    def summary(self) -> str:
        """One printable line: ``PATH: ok ...``, ``PATH: truncated ...`` or ``PATH: line N: what is wrong``."""
        sig = "signature checked" if self.signed else NO_KEY
        if self.ok:
            text = f"{self.path}: ok ({self.lines} lines, {self.decisions} decisions, {self.message}; {sig})"
        elif self.truncated:
            head = f"{self.path}: truncated: no result line"
            text = f"{head}; the first {self.lines} lines are valid{self.message}; {sig}"
        else:
            where = f"line {self.error_line}: " if self.error_line else ""
            text = f"{self.path}: {where}{self.message}"
        return printable(text)


def report_of(sim: Simulation, error: LineError | ReplayError | None, signed: bool) -> VerifyReport:
    """The report of a simulation that stopped (at ``error``, or at the end of the file)."""
    path = str(sim.path)
    if isinstance(error, ReplayError):
        return VerifyReport(path, False, 0, 0, message=str(error), signed=signed)
    if isinstance(error, LineError):
        return VerifyReport(
            path, False, error.line - 1, sim.decisions, error_line=error.line, message=error.message, signed=signed
        )
    if sim.header is None:
        return VerifyReport(path, False, 0, 0, error_line=1, message=NO_HEADER, signed=signed)
    if sim.result is None:
        return VerifyReport(
            path, False, sim.lines, sim.decisions, truncated=True, message=f" ({sim.decisions} decisions)",
            signed=signed,
        )  # fmt: skip
    r = sim.result
    return VerifyReport(path, True, sim.lines, sim.decisions, message=outcome_text(r), result=r, signed=signed)


def verify(path: Path | str, key: bytes | None = None) -> VerifyReport:
    """Re-simulate a replay with the engine from its header and check every line; with ``key``, check the
    signature chain too (an unsigned line is then an error).

    Checks each decision's legal set and action, each event line against its full-information form
    (``full_event_json``), and the result. Reports the first bad line; a file without a result line is
    truncated (with its valid prefix).
    """
    sim = Simulation(path, key)
    try:
        for _ in sim.steps():
            pass
    except (LineError, ReplayError) as exc:
        return report_of(sim, exc, key is not None)
    return report_of(sim, None, key is not None)
