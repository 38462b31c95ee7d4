"""``replay verify`` and ``replay show``: check replays by re-simulation, print them as a play-by-play."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from referee.commands import fail
from referee.replay import printable, show, verify
from referee.replay.verify import VerifyReport
from referee.signing import SigningError, load_key

replay_app = typer.Typer(help="Check and show replays.", no_args_is_help=True)


def _key(path: Path | None) -> bytes | None:
    """The key of ``--key FILE`` (which must exist), else the user's default key if there is one."""
    try:
        if path is not None:
            if not path.is_file():
                fail(printable(f"--key {path}: " + ("a folder, not a key file" if path.is_dir() else "no such file")))
            return load_key(path, create=False)
        return load_key(None, create=False)
    except SigningError as exc:
        fail(printable(str(exc)))


@replay_app.command("verify")
def verify_cmd(
    files: Annotated[list[Path], typer.Argument(help="Replay files to check.")],
    key_file: Annotated[
        Path | None,
        typer.Option("--key", help="The signing key (default: the user's key, when it exists)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object with a report per file.")] = False,
) -> None:
    """Re-simulate each replay with the engine and check its signatures when the key is there; one line per
    file. Exit 0 when every file verifies, 1 if one does not, 2 for bad input (a path that is not a readable
    file, a missing key file)."""
    for path in files:
        if path.is_dir():
            fail(printable(f"{path}: a folder, not a replay file; {_replays_in(path)}"))
        if not path.is_file():
            fail(printable(f"{path}: not a replay file (no such file)"))
    key = _key(key_file)
    reports = [verify(path, key) for path in files]
    if as_json:
        typer.echo(json.dumps({"ok": all(r.ok for r in reports), "replays": [_report_json(r) for r in reports]}))
    else:
        for report in reports:
            typer.echo(report.summary())
    if not all(r.ok for r in reports):
        raise typer.Exit(1)


def _replays_in(folder: Path) -> str:
    """Where the replays of ``folder`` are (in it or one folder down), as the globs to name them with
    (``T/replays/*.jsonl`` for a tournament's folder), or that it holds none. A glob counts when its first
    file (in name order) is a replay."""
    from referee.replay.html import REPLAY_FORMAT
    from referee.replay.reader import first_line

    globs: list[str] = []
    for pattern in ("*.jsonl", "*.jsonl.gz", "*/*.jsonl", "*/*.jsonl.gz"):
        by_folder: dict[Path, Path] = {}
        for p in sorted(folder.glob(pattern)):
            if p.is_file():
                by_folder.setdefault(p.parent, p)
        for parent, first in by_folder.items():
            line = first_line(first)
            if b'"header"' in line and REPLAY_FORMAT.encode() in line:
                globs.append(f"{shlex.quote(parent.as_posix())}/{pattern.rpartition('/')[2]}")
    if not globs:
        return "it holds no replay (nor do its folders)"
    shown = " ".join(globs[:3]) + (" ..." if len(globs) > 3 else "")
    return f"name its replays: koikoi-referee replay verify {shown}"


def _report_json(report: VerifyReport) -> dict[str, Any]:
    """One file's verification as JSON (``replay verify --json``)."""
    r = report.result
    result = None
    if r is not None:
        result = {
            "winner": r.winner_number, "scores": list(r.scores), "rounds": r.rounds,
            "reason": r.reason.value, "forfeit": None if r.forfeit is None else r.forfeit.to_json(),
            "names": list(r.names),
        }  # fmt: skip
    return {
        "path": report.path, "ok": report.ok, "lines": report.lines, "decisions": report.decisions,
        "truncated": report.truncated, "error_line": report.error_line, "signed": report.signed,
        "summary": report.summary(), "result": result,
    }  # fmt: skip


@replay_app.command("show")
def show_cmd(
    file: Annotated[Path, typer.Argument(help="A replay file.")],
    seat: Annotated[
        int | None,
        typer.Option("--seat", min=1, max=2, help="Only what this seat saw (opponent's hand hidden)."),
    ] = None,
) -> None:
    """Print a replay as a readable play-by-play, optionally as one seat saw it. Exit 1 at a line that does not
    check (after the lines before it), 2 for a path that is not a readable file."""
    if file.is_dir():
        fail(printable(f"{file}: a folder, not a replay file"))
    if not file.is_file():
        fail(printable(f"{file}: not a replay file (no such file)"))
    lines, problem = show(file, seat)
    if lines:
        typer.echo("\n".join(lines))
    if problem is not None:
        if problem.truncated:
            typer.echo(f"(truncated: no result line after {problem.lines} lines)")
            return
        where = f"line {problem.error_line}: " if problem.error_line else ""
        fail(printable(f"{file}: {where}{problem.message}"), 1)


def register(app: typer.Typer) -> None:
    """Add the ``replay`` command group (verify, show, and html) to the app."""
    from referee.commands import replay_html

    replay_html.register(replay_app)
    app.add_typer(replay_app, name="replay")
