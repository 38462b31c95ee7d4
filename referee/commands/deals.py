"""``deals generate``: write a deal suite for ``tournament --deals`` (see :mod:`referee.tournament.suite`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from referee.commands import fail
from referee.errors import RefereeError

deals_app = typer.Typer(help="Deal suites for tournaments (tournament --deals FILE).", no_args_is_help=True)


@deals_app.command("generate")
def generate_cmd(
    count: Annotated[int, typer.Option("--count", "-n", min=1, help="Deal sequences to write (one a line).")],
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", min=0, max=2**64 - 1, help="Seed of the shuffles (default: drawn at random and not shown)."
        ),
    ] = None,
    length: Annotated[
        int | None,
        typer.Option(
            "--length", min=1, help="Deals per sequence (default: the rules' rounds plus 2 spare for misdeals)."
        ),
    ] = None,
    rules: Annotated[
        str, typer.Option("--rules", "-r", help="A preset or rules file (for the default length).")
    ] = "guide",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the suite here (default: stdout).")] = None,
) -> None:
    """Write a deal suite: COUNT lines, each a JSON array of shuffled deals that a tournament's deal pair opens
    with. Without --seed the seed is secret: nobody, not even the organiser, can deal the suite again."""
    from referee.engine import EngineError, load_rules
    from referee.tournament.suite import generate, suite_lines

    try:
        n = length if length is not None else load_rules(rules).rounds + 2
        suite, _ = generate(count, n, seed)
    except EngineError as exc:
        fail(str(exc))
    except RefereeError as exc:
        fail(exc.naming({"count": "--count", "length": "--length"}))
    text = suite_lines(suite)
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"{out}: cannot write: {exc.strerror or exc}")
    typer.echo(f"{count} deal sequence(s) of {n} deal(s) written to {out}", err=True)


def register(app: typer.Typer) -> None:
    """Add the ``deals`` command group to the app."""
    app.add_typer(deals_app, name="deals")
