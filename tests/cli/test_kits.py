"""Starter kits: each ``new-bot`` kit passes ``check`` and plays a verified match, and the suite reports the
time from ``new-bot`` to that verified match."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from referee.kits import LANGUAGES, KitError, write_kit
from tests.helpers import KIT_TIMES, RANDOM

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

TOOLS = {"python": "python3", "javascript": "node", "java": "javac", "rust": "cargo", "cpp": "c++", "go": "go"}


def run(exe: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_kit_passes_check_and_plays_a_verified_match(
    referee_exe: Path, tmp_path: Path, lang: str, request: pytest.FixtureRequest
) -> None:
    if shutil.which(TOOLS[lang]) is None:
        pytest.fail(f"{TOOLS[lang]} is needed for the {lang} kit")
    t0 = time.perf_counter()
    made = run(referee_exe, "new-bot", lang, "mybot", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    checked = run(referee_exe, "check", "mybot", "--rules", "cardavia", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1].startswith("passed (")
    replay = tmp_path / "games" / "m.jsonl"
    played = run(referee_exe, "play", "mybot", RANDOM, "--rules", "koikoi-japan", "--seed", "7", "--replay",
                 str(replay), "--json", cwd=tmp_path)  # fmt: skip
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout)
    assert result["forfeit"] is None and result["names"][0] == "mybot"
    verified = run(referee_exe, "replay", "verify", str(replay), cwd=tmp_path)
    assert verified.returncode == 0 and ": ok (" in verified.stdout, verified.stdout + verified.stderr
    request.config.stash.setdefault(KIT_TIMES, {})[lang] = time.perf_counter() - t0
    readme = (tmp_path / "mybot" / "README.md").read_text()
    assert "# mybot" in readme and "stderr" in readme


def test_the_command_a_kit_s_manifest_gives_plays(referee_exe: Path, tmp_path: Path) -> None:
    # the first line of bot.toml says how to play the new bot: that line, run by a shell, plays a match
    write_kit("python", tmp_path / "mybot")
    first = (tmp_path / "mybot" / "bot.toml").read_text().splitlines()[0]
    command = first.split("The bot package: ", 1)[1].split(", or ", 1)[0].replace("THIS_FOLDER", "mybot")
    env = {**os.environ, "PATH": f"{referee_exe.parent}:{os.environ['PATH']}"}
    played = subprocess.run(["bash", "-c", f"{command} --rounds 1 --seed 3 --json"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env=env)  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["forfeit"] is None


def test_new_bot_refuses_an_unknown_language_a_bad_name_and_a_full_folder(tmp_path: Path) -> None:
    with pytest.raises(KitError, match="no starter kit for 'cobol'"):
        write_kit("cobol", tmp_path / "a")
    with pytest.raises(KitError, match="bot name"):
        write_kit("python", tmp_path / "b", "no spaces")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("")
    with pytest.raises(KitError, match="not an empty folder"):
        write_kit("python", tmp_path / "c")
    written = write_kit("py", tmp_path / "d", "d1")
    assert {p.name for p in written} == {"bot.toml", "main.py", "README.md"}
    assert '"d1"' in (tmp_path / "d" / "main.py").read_text()
