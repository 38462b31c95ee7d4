"""``koikoi-referee score`` and ``rules``: a few runs of the installed command, the rest in-process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.engine import PRESETS, load_rules


def run(exe: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed command, as a user runs it."""
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, check=False)


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    """The same command in-process (cheaper), with the same result shape."""
    result = CliRunner().invoke(app, list(args))
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


@pytest.mark.slow
def test_score_json_has_the_documented_shape(referee_exe: Path) -> None:
    cards = [
        "pine-crane",
        "cherry-curtain",
        "pampas-moon",
        "chrysanthemum-sake",
        "pine-ribbon",
        "plum-ribbon",
    ]
    proc = run(referee_exe, "score", "--json", "--rules", "guide", *cards)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    data = json.loads(proc.stdout)
    assert data == {
        "yaku": [
            {"name": "three_brights", "points": 5, "cards": ["pine-crane", "cherry-curtain", "pampas-moon"]},
            {"name": "cherry_viewing", "points": 5, "cards": ["cherry-curtain", "chrysanthemum-sake"]},
            {"name": "moon_viewing", "points": 5, "cards": ["pampas-moon", "chrysanthemum-sake"]},
        ],
        "total": 15,
    }


@pytest.mark.parametrize(
    ("rules", "calls", "total"), [("guide", 2, 20), ("cardavia", 2, 6), ("koikoi-japan", 4, 10)]
)
def test_score_applies_the_koikoi_calls_of_each_preset(rules: str, calls: int, total: int) -> None:
    # Three dry brights: 5 (guide), 6 (cardavia), 5 (koikoi-japan).
    proc = invoke(
        "score", "--json", "-r", rules, "-k", str(calls), "pine-crane", "pampas-moon", "paulownia-phoenix"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total"] == total


def test_score_without_yaku_in_text() -> None:
    proc = invoke("score", "pine-crane", "willow-rainman")
    assert proc.returncode == 0
    assert "0" in proc.stdout and proc.stderr == ""
    proc = invoke("score", "--json", "pine-crane", "willow-rainman")
    assert json.loads(proc.stdout) == {"yaku": [], "total": 0}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["score", "pine-crane", "pine-dragon"], "pine-dragon"),
        (["score", "--json", "pine-crane", "pine-dragon"], "pine-dragon"),
        (["score", "-r", "no-such-preset", "pine-crane"], "no-such-preset"),
        (["score", "pine-crane", "pine-crane"], "repeated"),
        (["rules", "no-such-preset"], "no-such-preset"),
        (["score", "-r", "nintendo", "-k", "1", "-o", "1", "pine-crane"],
         "2 koi-koi calls in a round: the rules nintendo allow 1 call a round"),
        (["score", "-r", "nintendo", "-k", "2", "pine-crane"], "koikoi_calls_per_round"),
    ],
)  # fmt: skip
def test_bad_input_is_exit_2_with_one_line(args: list[str], needle: str) -> None:
    proc = invoke(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_score_refuses_an_impossible_number_of_koikoi_calls() -> None:
    # x2 per call: a huge count would be a huge power of two (memory exhaustion), not a score
    proc = invoke("score", "-r", "guide", "-k", "999999999999", "pine-crane", "cherry-curtain", "pampas-moon")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "koikoi-calls" in proc.stderr
    assert invoke("score", "-r", "guide", "-k", "48", "pine-crane").returncode == 0
    assert invoke("score", "-r", "nintendo", "-o", "1", "pine-crane").returncode == 0  # the round's one call


def test_score_with_a_rules_file(tmp_path: Path) -> None:
    path = tmp_path / "r.toml"
    path.write_text('base = "guide"\nthree_brights = 9\n')
    proc = invoke("score", "--json", "-r", str(path), "pine-crane", "pampas-moon", "paulownia-phoenix")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total"] == 9
    path.write_text('base = "guide"\nthree_brights = "lots"\n')
    proc = invoke("score", "-r", str(path), "pine-crane")
    assert proc.returncode == 2 and "three_brights" in proc.stderr


def test_rules_lists_the_presets() -> None:
    proc = invoke("rules")
    assert proc.returncode == 0
    listed = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    assert listed == list(PRESETS)


@pytest.mark.parametrize("name", list(PRESETS))
def test_rules_prints_toml_that_loads_back(tmp_path: Path, name: str) -> None:
    proc = invoke("rules", name)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / f"{name}.toml"
    path.write_text(proc.stdout)
    assert load_rules(path) == PRESETS[name]


def test_rules_json_loads_back(tmp_path: Path) -> None:
    proc = invoke("rules", "--json", "koikoi-japan")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "k.json"
    path.write_text(proc.stdout)
    assert load_rules(path) == PRESETS["koikoi-japan"]


def test_rules_of_a_file_prints_its_full_option_set(tmp_path: Path) -> None:
    path = tmp_path / "short.toml"
    path.write_text('base = "koikoi-japan"\nrounds = 3\n')
    proc = invoke("rules", str(path))
    assert proc.returncode == 0, proc.stderr
    again = tmp_path / "again.toml"
    again.write_text(proc.stdout)
    assert load_rules(again) == load_rules(path)


@pytest.mark.slow
def test_the_installed_command_reports_bad_input_and_prints_rules(referee_exe: Path, tmp_path: Path) -> None:
    proc = run(referee_exe, "score", "pine-crane", "pine-dragon")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == ["koikoi-referee: error: unknown card id 'pine-dragon'"]
    proc = run(referee_exe, "rules", "koikoi-japan")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "k.toml"
    path.write_text(proc.stdout)
    assert load_rules(path) == PRESETS["koikoi-japan"]
