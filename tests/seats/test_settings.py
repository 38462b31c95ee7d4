"""One record of a bot's settings: one unit per setting, None for *not set* (the default applies), 0 for *no
limit*, and the process layer's limits built from it in one place, the same for play, a tournament and the
learning environment's opponent."""

from __future__ import annotations

from pathlib import Path

from referee.engine import load_rules
from referee.records import TimeControl
from referee.rl.opponents import BotOpponent
from referee.seats.process import DEFAULT_CPUS, DEFAULT_MEMORY_MB, DEFAULT_PROCESSES, Limits
from referee.seats.settings import BotSettings
from referee.series import PlaySetup
from referee.tournament.config import BotSpec, TournamentConfig
from referee.tournament.runner import bot_limits


def test_unset_settings_take_the_defaults() -> None:
    limits = BotSettings().limits()
    assert limits == Limits(memory_bytes=DEFAULT_MEMORY_MB << 20)
    assert (limits.cpu_seconds, limits.processes, limits.cpus) == (None, DEFAULT_PROCESSES, DEFAULT_CPUS)
    assert BotSettings().time == TimeControl()


def test_zero_is_no_limit_for_every_limit() -> None:
    limits = BotSettings(memory_mb=0, cpu_s=0, processes=0, cpus=0).limits()
    assert (limits.memory_bytes, limits.cpu_seconds, limits.processes, limits.cpus) == (None, None, None, None)


def test_each_setting_reaches_the_limits_in_its_unit(tmp_path: Path) -> None:
    settings = BotSettings(startup_ms=5, move_ms=6, bank_ms=7, memory_mb=8, cpu_s=3, processes=4, cpus=0.5,
                           env=(("A", "1"),), files=("/book",), python="python3")  # fmt: skip
    limits = settings.limits(sandbox="none", cwd=tmp_path, ponder=True, require_cgroups=True)
    assert limits == Limits(cpu_seconds=3, memory_bytes=8 << 20, cwd=tmp_path, sandbox="none", processes=4,
                            env=(("A", "1"),), files=("/book",), python="python3", cpus=0.5, ponder=True,
                            require_cgroups=True)  # fmt: skip
    assert settings.time == TimeControl(5, 6, 7)
    as_text = settings.limits(sandbox="none", cwd=str(tmp_path), ponder=True, require_cgroups=True)
    assert as_text == limits and as_text.cwd == tmp_path  # a folder given as a str is a Path


def test_play_lays_each_seat_over_both_bots(tmp_path: Path) -> None:
    both, one = BotSettings(memory_mb=0, move_ms=50, python="py-both"), BotSettings(python="py-one")
    setup = PlaySetup(seats=("a.py", "b.py"), bots=both, seat_bots=(one, BotSettings()), bot_cwd=tmp_path,
                      sandbox="none")  # fmt: skip
    first, second = setup.limits_of(0), setup.limits_of(1)
    assert (first.python, second.python) == ("py-one", "py-both")
    assert first.memory_bytes is None and first.cwd == tmp_path and first.sandbox == "none"
    assert setup.bots.time == TimeControl(move_ms=50)
    assert PlaySetup(seats=("a.py", "b.py")).limits_of(0) == BotSettings().limits()


def test_a_tournament_bot_gets_its_own_settings_over_the_tournaments() -> None:
    config = TournamentConfig(
        bots=(BotSpec("a", "a.py", BotSettings(memory_mb=8192)), BotSpec("b", "b.py")), rules=load_rules("guide"),
        sandbox="none", bot_env=(("E", "1"),), settings=BotSettings(cpu_s=9),
    )  # fmt: skip
    assert bot_limits(config, "a") == BotSettings(memory_mb=8192, cpu_s=9, env=(("E", "1"),)).limits(sandbox="none")
    assert bot_limits(config, "b").memory_bytes == DEFAULT_MEMORY_MB << 20
    assert bot_limits(config) == BotSettings(cpu_s=9, env=(("E", "1"),)).limits(sandbox="none")


def test_the_learning_opponent_leaves_memory_unlimited_unless_set() -> None:
    assert BotOpponent("bot.py").limits == Limits()
    assert BotOpponent("bot.py", settings=BotSettings(memory_mb=64), sandbox="none").limits == Limits(
        memory_bytes=64 << 20, sandbox="none"
    )
