"""``replay html``: a replay (or a folder of replays) as self-contained HTML pages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.commands import fail
from referee.replay.html import ViewerError, find_replays, write_html, write_index
from referee.replay.safe import printable
from referee.replay.writer import plain_name


def html_cmd(
    path: Annotated[Path, typer.Argument(help="A replay file, or a folder of replays (tournament output).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="The page to write for a replay file (default: its name, .html)."),
    ] = None,
    seat: Annotated[
        int | None,
        typer.Option(
            "--seat",
            min=1,
            max=2,
            help="Only what this seat saw: the page holds no other hand, stock card or seed (a replay file only).",
        ),
    ] = None,
) -> None:
    """Write a replay as one HTML page to step through; for a folder, a page per replay and an index.html (a
    tournament's folder: the match pages it lacks, then its home page and bot pages)."""
    from referee.tournament.pages import is_tournament, write_site  # a tournament's folder: its own pages

    try:
        if path.is_dir():
            if out is not None:
                fail("--out applies to a replay file; a folder gets pages next to its replays and index.html")
            if seat is not None:  # a folder's pages show every card: never write them as if they were a seat's
                fail("--seat applies to a replay file (a folder's pages show every hand, the stock and the seed); "
                     "write a seat's page for each replay file")  # fmt: skip
            if not is_tournament(path) and not find_replays(path):
                fail(f"{path}: holds no replay (nor do its folders)")
            index = write_site(path) if is_tournament(path) else write_index(path)
            typer.echo(f"wrote {index}")
            return
        if not path.is_file():
            fail(f"{path}: no such file or folder")
        target = out if out is not None else plain_name(path).with_suffix(".html")
        write_html(path, target, seat=seat)
    except ViewerError as exc:
        fail(printable(str(exc)))
    typer.echo(f"wrote {target}")


def register(replay_app: typer.Typer) -> None:
    """Add ``html`` to the ``replay`` command group."""
    replay_app.command("html")(html_cmd)
