"""The ``koikoi-referee`` command: a thin typer skin over the library.

Each command lives in ``referee/commands/<name>.py`` and registers itself on :data:`app`; every command parses its
options, calls one library function, and turns library errors into a one-line message and exit code 2.
"""

from __future__ import annotations

import sys

import typer

try:  # typer with its own copy of click
    from typer import TyperException as CommandLineError
except ImportError:  # typer on click
    from click import ClickException as CommandLineError  # type: ignore[assignment]

from referee.build_info import version_line
from referee.commands import fail, register_all

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


def usage_line(exc: CommandLineError) -> str:
    """A command-line error as one line: the message, and for a usage error the command's help option
    (``tournament --pairs -3`` gives ``tournament: Invalid value for '--pairs' / '-n': Input should be greater
    than or equal to 1; see koikoi-referee tournament -h``)."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)  # a usage error knows its command
    path = getattr(ctx, "command_path", None)
    if not isinstance(path, str):
        return message
    command = path.partition(" ")[2]
    return f"{command}: {message}; see {path} -h" if command else f"{message}; see {path} -h"


def main() -> None:
    """Console-script entry point. The referee adopts its bots' orphans (see :mod:`referee.seats.process.family`).
    A command-line error (an unknown option, a value out of range) is one line on stderr, exit 2."""
    from referee.seats.process import adopt_orphans

    adopt_orphans()
    try:
        code = app(standalone_mode=False)
    except CommandLineError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # a group given no command: its help, as before
            exc.show()  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)
        fail(usage_line(exc), exc.exit_code)
    except typer.Abort:  # end of input at a prompt
        fail("aborted", 1)
    sys.exit(code if isinstance(code, int) else 0)
