"""``bots``: list the house bots shipped with the referee, with the paths to give ``play`` and ``tournament``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from referee.commands import fail
from referee.house_bots import HOUSE_BOTS, bots_folder, find


def bots_cmd(
    path: Annotated[
        str | None,
        typer.Option("--path", help="Print only the path of this bot (e.g. greedy), for a command line."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List the house bots shipped with the referee and their paths, e.g.
    koikoi-referee play "$(koikoi-referee bots --path greedy)" "$(koikoi-referee bots --path random)"."""
    folder = bots_folder()
    if folder is None:
        fail("the house bots are not installed with this referee")
    if path is not None:
        bot = find(path)
        if bot is None:
            fail(f"no house bot {path!r}; choose one of {', '.join(b.name for b in HOUSE_BOTS)}")
        typer.echo(str(folder / bot.file))
        return
    rows = [{"name": b.name, "path": str(folder / b.file), "about": b.about} for b in HOUSE_BOTS]
    if as_json:
        typer.echo(json.dumps({"folder": str(folder), "bots": rows}))
        return
    width = max(len(b.name) for b in HOUSE_BOTS)
    for row in rows:
        typer.echo(f"{row['name']:<{width}}  {row['path']}\n{'':<{width}}  {row['about']}")


def register(app: typer.Typer) -> None:
    """Add ``bots`` to the app."""
    app.command("bots")(bots_cmd)
