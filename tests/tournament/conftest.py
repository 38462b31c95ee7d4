"""Fixtures of the tournament tests: a signing key of the test's own, and the scripted bot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import SCRIPTED_BOT


@pytest.fixture
def signing_key_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default signing key is made under this test's folder, not the user's data directory; no
    ``KOIKOI_SEED`` from the environment. Its value: where the key goes."""
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv("KOIKOI_SEED", raising=False)
    return home / "koikoi-referee" / "key"


@pytest.fixture
def bot(tmp_path: Path) -> str:
    """The scripted bot's command; append a mode (first, last, crash, hang, illegal, invalid) and a delay."""
    path = tmp_path / "scripted_bot.py"
    path.write_text(SCRIPTED_BOT)
    return f"{sys.executable} {path}"
