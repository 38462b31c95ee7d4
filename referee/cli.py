"""The ``koikoi-referee`` command: a thin typer skin over the library.

Each command lives in ``referee/commands/<name>.py`` and registers itself on :data:`app`; every command parses its
options, calls one library function, and turns library errors into a one-line message and exit code 2.
"""

from __future__ import annotations

import typer

from referee.build_info import version_line
from referee.commands import register_all

app = typer.Typer(
    name="koikoi-referee",
    help="Run Hanafuda Koi-Koi matches between bot programs, check every move, and keep verifiable replays.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: flags show no value, and no box cuts a line
    context_settings={"max_content_width": 200, "help_option_names": ["-h", "--help"]},  # as wide as the terminal;
    # every command takes -h too
)


def _version(value: bool) -> None:
    if value:
        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Run Hanafuda Koi-Koi matches between bot programs, check every move, and keep verifiable replays."""


register_all(app)


def main() -> None:
    """Console-script entry point. The referee adopts its bots' orphans (see :mod:`referee.seats.process.family`)."""
    from referee.seats.process import adopt_orphans

    adopt_orphans()
    app()
