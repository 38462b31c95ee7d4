"""The fingerprint of a bot's own files (``referee.seats.files``): what it covers, and that it follows contents."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from referee.seats.files import fingerprint, own_paths


def test_own_paths_are_the_package_folder_or_the_program_script_and_named_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text("print('hi')\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "w.json").write_text("{}")
    assert own_paths("bot.py ./data/w.json --depth 3") == [str(tmp_path / "bot.py"), str(tmp_path / "data" / "w.json")]
    assert own_paths(f"{sys.executable} bot.py") == [str(tmp_path / "bot.py")]  # the referee's Python is not the bot's
    assert own_paths("python3 bot.py --book=/usr/share/dict/words") == [str(tmp_path / "bot.py")]  # the system's
    assert own_paths("cat") == []  # a bare program on PATH
    assert own_paths("bot.py ./data") == [str(tmp_path / "bot.py")]  # a folder on a plain command line: any size
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "bot.toml").write_text('command = "main.py"\n')
    (pkg / "main.py").write_text("")
    assert own_paths("pkg") == [str(pkg)]
    binary = tmp_path / "engine"
    binary.write_bytes(b"\x7fELF")
    binary.chmod(0o755)
    assert own_paths("./engine") == [str(binary)]


def test_the_fingerprint_follows_names_and_contents_not_times(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    (folder / "lib").mkdir(parents=True)
    (folder / "main.py").write_text("a")
    (folder / "lib" / "x.py").write_text("b")
    first = fingerprint([str(folder)])
    assert first.startswith("sha256:") and len(first) == len("sha256:") + 16
    os.utime(folder / "main.py", (1, 1))  # touched: the same contents
    assert fingerprint([str(folder)]) == first
    (folder / "lib" / "x.py").write_text("c")  # another version
    assert fingerprint([str(folder)]) != first
    (folder / "lib" / "x.py").write_text("b")
    assert fingerprint([str(folder)]) == first
    (folder / "lib" / "x.py").rename(folder / "lib" / "y.py")  # the same contents under another name
    assert fingerprint([str(folder)]) != first
    assert fingerprint([]) == "none"
