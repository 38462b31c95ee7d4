"""Every command's ``--help``: it has help text, and a yes/no option is a flag that takes no value."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from referee.cli import app


def commands() -> list[tuple[list[str], Any]]:
    """Every command and group of the app (typer's click objects) with its argument path, the root first."""
    out: list[tuple[list[str], Any]] = []
    todo: list[tuple[list[str], Any]] = [([], typer.main.get_command(app))]
    while todo:
        path, command = todo.pop(0)
        out.append((path, command))
        todo += [([*path, name], sub) for name, sub in sorted(getattr(command, "commands", {}).items())]
    return out


ALL = commands()


def test_the_walk_finds_every_command_group() -> None:
    names = {" ".join(path) for path, _ in ALL}
    assert {"play", "tournament", "tournament merge", "replay verify", "deals generate", "bots"} <= names


@pytest.mark.slow
@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(p) or "koikoi-referee" for p, _ in ALL])
def test_help_shows_flags_as_flags(path: list[str], command: Any) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert (command.help or "").strip(), f"{path}: no help text"
    assert "<bool>" not in result.output and "BOOLEAN" not in result.output
    for param in command.params:
        annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
        if param.param_type_name == "option" and annotation is bool:
            assert param.is_flag, f"{path}: {param.opts} takes a value"
            for opt in param.opts:
                line = next(x for x in result.output.splitlines() if re.search(rf"(^|[\s,/]){re.escape(opt)}\b", x))
                after = line.split(opt, 1)[1]
                assert not re.match(r"\s*(<|[A-Z]{3,})", after), f"{path}: help shows a value for {opt}: {line}"


@pytest.mark.slow
@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(p) or "koikoi-referee" for p, _ in ALL])
def test_every_command_takes_dash_h_for_help(path: list[str], command: Any) -> None:
    short = CliRunner().invoke(app, [*path, "-h"], terminal_width=200)
    long = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert short.exit_code == 0 and short.output == long.output


def test_a_flag_given_a_value_is_refused() -> None:
    result = CliRunner().invoke(app, ["tournament", "merge", "x", "--json", "true"])
    assert result.exit_code == 2
