"""Shared fixtures of the test suite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.engine import PRESETS, Rules

PRESET_NAMES: tuple[str, ...] = ("guide", "cardavia", "koikoi-japan")


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
