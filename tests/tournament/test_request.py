"""The ``tournament`` command's request: which options describe the tournament (and a resume refuses) comes
from each field's metadata, and every option has one flag that the errors name."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import pytest
import typer

from referee.cli import app
from referee.commands.bot_options import SETTING_FLAGS
from referee.commands.tournament import FLAGS
from referee.errors import RefereeError
from referee.seats.settings import BotSettings
from referee.tournament.config import TournamentError
from referee.tournament.launch import TournamentRequest, run

GIVEN: dict[str, Any] = {
    "bots": ("a=a.py",), "config": Path("t.toml"), "rules": "guide", "rounds": 2, "format": "gauntlet",
    "gauntlet": "a", "pairs": 3, "seed": 7, "seed_file": Path("seed"), "startup_ms": 1, "move_ms": 1, "bank_ms": 1,
    "out": Path("out"), "shard": "1/2", "sprt": "0,10", "fail_if_worse": True, "fail_unless_better": True,
    "max_forfeits": 0.2, "min_score": 0.5, "sandbox": "none",
    "bot_env": ("A=1",), "compress": True, "settings": BotSettings(memory_mb=4096), "ponder": True,
    "require_cgroups": True, "bot_options": ("a:cpus=2",), "deals": Path("deals.jsonl"), "event": "e",
    "event_description": "d", "until_separated": True, "max_pairs": 5,
}  # fmt: skip
"""A value given for each option that describes the tournament."""


def _resume(tmp_path: Path, **given: Any) -> TournamentError:
    """The error of resuming the folder ``tmp_path`` with ``given`` options."""
    request = TournamentRequest(resume=tmp_path / "t", **given)
    with pytest.raises(TournamentError) as caught:
        run(request, stream=io.StringIO(), warn=lambda _: None, environ={})
    return caught.value


def test_every_field_says_whether_it_describes_the_tournament() -> None:
    for f in dataclasses.fields(TournamentRequest):
        assert isinstance(f.metadata.get("describes"), bool), f"{f.name}: describes the tournament or not?"
    described = {f.name for f in dataclasses.fields(TournamentRequest) if f.metadata["describes"]}
    assert described == set(GIVEN)  # a new describing option needs a value here, and is then refused below
    assert TournamentRequest().described() == []


@pytest.mark.parametrize("name", sorted(GIVEN))
def test_a_resume_refuses_each_describing_option_by_its_name(tmp_path: Path, name: str) -> None:
    error = _resume(tmp_path, **{name: GIVEN[name]})
    named = "memory_mb" if name == "settings" else name  # the bot settings name the one set
    assert error.settings == (named,)
    assert error.naming(FLAGS).startswith(f"{FLAGS[named]} describes the tournament")


def test_a_resume_takes_the_run_options(tmp_path: Path) -> None:
    run_only = {"jobs": 1, "key": None, "html": False, "forfeit_broken": True, "live_every": 5, "rating_interval": 2}
    error = _resume(tmp_path, **run_only)
    assert "describes the tournament" not in str(error) and not error.settings  # the folder is missing instead


def test_every_option_has_a_flag_of_the_tournament_commands() -> None:
    group = typer.main.get_command(app).commands["tournament"]  # type: ignore[attr-defined]
    declared = {o for p in group.params for o in p.opts}
    declared |= {o for p in group.commands["add"].params for o in p.opts}
    declared |= {o for p in group.params for o in p.secondary_opts}
    request = {f.name for f in dataclasses.fields(TournamentRequest)} - {"settings"}  # a flag for each setting:
    assert request | {f.name for f in dataclasses.fields(BotSettings)} <= set(FLAGS)
    assert set(FLAGS.values()) <= declared
    play = typer.main.get_command(app).commands["play"]  # type: ignore[attr-defined]
    assert set(SETTING_FLAGS.values()) <= {o for p in play.params for o in p.opts}


def test_an_error_about_settings_names_them_as_asked() -> None:
    error = RefereeError.about(("max_pairs", "until_separated"), "{} is the budget of {}")
    assert str(error) == "max_pairs is the budget of until_separated"
    assert error.naming(FLAGS) == "--max-pairs is the budget of --until-separated"
    assert error.naming({}) == str(error)
    braces = RefereeError.about("sprt", "{} '{}': expected numbers")  # a value holding braces stays as it is
    assert braces.naming(FLAGS) == "--sprt '{}': expected numbers"
    assert RefereeError("plain").naming(FLAGS) == "plain"
