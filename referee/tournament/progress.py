"""Progress of a running tournament: a live bar on a terminal, one plain line per finished match otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from referee.text import scores_text
from referee.tournament.records import Record


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def describe(rec: Record) -> str:
    """``a vs b: a wins 5-0`` for one finished match."""
    a, b = rec.spec.seats
    winner = rec.winner_name
    outcome = f"{winner} wins" if winner else "draw"
    text = f"{a} vs {b}: {outcome} {scores_text(list(rec.result.scores))}"
    off = rec.offender
    if off:
        text += f" ({off[0]} forfeits: {off[1].value})"
    return text


class ProgressDisplay:
    """Matches done out of the total, elapsed time and an estimate of the time left."""

    def __init__(self, total: int, done: int, *, stream: TextIO | None = None, live: bool | None = None,
                 quiet: bool = False) -> None:  # fmt: skip
        self.stream = stream or sys.stdout
        self.quiet = quiet  # nothing a match (interim standings are still shown)
        self.total = total
        self.done = done
        self.start_done = done
        self.t0 = time.monotonic()
        self.live = not quiet and (self.stream.isatty() if live is None else live)
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressDisplay:
        if self.live:
            self._bar = Progress(
                TextColumn("[bold]matches"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("elapsed"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("matches", total=self.total, completed=self.done)
        return self

    def advance(self, rec: Record) -> None:
        """One more match finished."""
        self.done += 1
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.done)
            return
        if self.quiet:
            return
        elapsed = time.monotonic() - self.t0
        played = self.done - self.start_done
        eta = elapsed / played * (self.total - self.done) if played else 0.0
        width = len(str(self.total))
        print(
            f"[{self.done:>{width}}/{self.total}] {rec.spec.match_id} {describe(rec)}"
            f"  elapsed {_clock(elapsed)} eta {_clock(eta)}",
            file=self.stream,
            flush=True,
        )

    def note(self, text: str) -> None:
        """Print a block of text (interim standings) above the live bar, or between the plain lines."""
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
            return
        print(text, file=self.stream, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
