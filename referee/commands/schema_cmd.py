"""``schema``: the JSON Schema of every koikoi/1 message."""

from __future__ import annotations

import typer

from referee.protocol import schema_text


def schema_cmd() -> None:
    """Print the JSON Schema of every koikoi/1 message (referee to bot and bot to referee) as one document."""
    typer.echo(schema_text(), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``schema`` to the app."""
    app.command("schema")(schema_cmd)
