"""Shared fixtures of the test suite."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from referee.engine import PRESETS, Rules
from tests.helpers import BATTERY, KIT_TIMES, BatteryTally

# In CI the property tests replay a fixed set of examples, so a run can only fail on a change to the code; on a
# developer's machine they explore new examples every run.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The run, and every referee and bot it starts, keeps its temporary files (a referee's bot logs and unsandboxed
# bots' working folders among them) in one folder of its own, removed at the end: a run leaves nothing in /tmp.
# pytest's own folders (tmp_path) stay where pytest keeps them, the last runs' for a look after a failure.
os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
# Test workers (pytest-xdist) share the folder of the run that started them: paths stay short (a Ray socket's
# path must fit in 107 bytes).
_TEMP = os.environ.get("KOIKOI_TEST_TEMP", "")
if not _TEMP:
    _TEMP = os.environ["KOIKOI_TEST_TEMP"] = tempfile.mkdtemp(prefix="koikoi-test-")
    atexit.register(shutil.rmtree, _TEMP, True)
os.environ["TMPDIR"] = tempfile.tempdir = _TEMP

# Tests never read or make the user's signing key (referee.signing.default_key_path): the run, and every referee
# it starts, gets a data directory of its own (in the run's temporary folder, removed with it).
_DATA_HOME = tempfile.mkdtemp(prefix="koikoi-test-data-")
os.environ["XDG_DATA_HOME"] = _DATA_HOME

PRESET_NAMES: tuple[str, ...] = ("guide", "cardavia", "koikoi-japan", "nintendo")


@pytest.fixture(params=PRESET_NAMES)
def preset(request: pytest.FixtureRequest) -> Rules:
    """Each rules preset in turn."""
    return PRESETS[request.param]


@pytest.fixture(scope="session")
def referee_exe() -> Path:
    """The installed ``koikoi-referee`` console script of the running virtualenv."""
    exe = Path(sys.executable).parent / "koikoi-referee"
    assert exe.exists(), f"{exe} is missing: install the project into the virtualenv"
    return exe


@pytest.fixture
def battery(request: pytest.FixtureRequest) -> BatteryTally:
    """The run's battery tally: hostile-bot cases and hidden-information checks add to it."""
    return request.config.stash.setdefault(BATTERY, BatteryTally())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """One line about the hostile-bot battery, when any of it ran."""
    kits = config.stash.get(KIT_TIMES, None)
    if kits:
        shown = ", ".join(f"{lang} {s:.1f} s" for lang, s in sorted(kits.items()))
        terminalreporter.write_line(f"starter kits, new-bot to a verified match: {shown}")
    t = config.stash.get(BATTERY, None)
    if t is not None:
        terminalreporter.write_line(
            f"battery: {t.cases} cases tried, {t.expected} outcomes as expected, {t.orphans} orphans left, "
            f"{t.leaked_bytes} hidden-card bytes leaked, ways out found: {t.ways_out}"
            + (f" ({t.open_channels} known open, their defence not in this tree)" if t.open_channels else "")
        )
