"""Tournaments under bad operator files and faults: edited or malformed results, oversized schedules, a full
disk. Each is a one-line error with exit 2 (1 is kept for a failed CI gate), and an interrupted match is dealt
afresh on resume.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import FAST, Output, cli, referee

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

GREEDY = ["-b", "a=bots/greedy_bot.py", "-b", "b=bots/greedy_bot.py"]
NO_HTML = (*FAST, "--no-html")


@pytest.fixture(autouse=True)
def key_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default signing key lives under this test's folder."""
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def one_error(run: Output | subprocess.CompletedProcess[str]) -> str:
    """The only line of the command's stderr, an error."""
    stderr = run.stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("koikoi-referee: warning:")]
    assert len(lines) == 1 and lines[0].startswith("koikoi-referee: error: "), stderr
    return lines[0]


@pytest.fixture
def played(tmp_path: Path) -> Path:
    """A finished two-bot tournament of two pairs, signed under the test's key."""
    out = tmp_path / "played"
    referee("tournament", *GREEDY, *NO_HTML, "--pairs", "2", "--seed", "31", "-j", "1", "-o", out)
    return out


def _rewrite_line(folder: Path, n: int, edit: str) -> None:
    path = folder / "results.jsonl"
    lines = path.read_text().splitlines()
    lines[n] = edit if not edit.startswith("=") else lines[n].replace(*edit[1:].split("=>"))
    path.write_text("".join(line + "\n" for line in lines))


def test_an_edited_result_line_is_rejected_by_merge_and_resume(played: Path, tmp_path: Path) -> None:
    assert cli("tournament", "merge", played, check=0).stderr == ""  # signed and checked: no warning
    line = json.loads((played / "results.jsonl").read_text().splitlines()[1])
    assert isinstance(line["mac"], str) and len(line["mac"]) == 64
    winner = line["result"]["winner"]
    _rewrite_line(played, 1, f'="winner":{winner}=>"winner":{3 - winner}')
    err = one_error(cli("tournament", "merge", played, check=2))
    assert "results.jsonl line 2: the signature does not match" in err
    assert "results.jsonl line 2: the signature does not match" in one_error(
        referee("tournament", "--resume", played, check=2)
    )
    other_key = tmp_path / "other.key"
    other_key.write_text("ab" * 32 + "\n")
    wrong_key = cli("tournament", "merge", played, "--key", other_key, check=2).stderr
    assert "tournament.json: the signature does not match" in wrong_key
    assert "no such file" in cli("tournament", "merge", played, "--key", tmp_path / "none", check=2).stderr


def test_an_edited_description_is_rejected(played: Path) -> None:
    path = played / "tournament.json"
    doc = json.loads(path.read_text())
    doc["options"]["min_score"] = 0.0  # a gate made easy
    path.write_text(json.dumps(doc))
    assert "tournament.json: the signature does not match" in one_error(cli("tournament", "merge", played, check=2))
    del doc["options"]
    path.write_text(json.dumps(doc))
    assert "tournament.json: the signature does not match" in one_error(cli("tournament", "merge", played, check=2))
    path.write_text("[" * 100_000)
    assert "tournament.json: unreadable" in one_error(cli("tournament", "merge", played, check=2))


def test_without_the_key_results_are_read_but_not_checked(played: Path, key_home: Path) -> None:
    shutil.rmtree(key_home)
    err = cli("tournament", "merge", played, check=0).stderr
    assert err.strip() == "koikoi-referee: warning: signature not checked: no key"
    resumed = referee("tournament", "--resume", played)
    assert "signature not checked: no key" in resumed.stderr


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"match_id": 5}', "is not in this folder's schedule"),
        ("=01-a-vs-b-000b=>01-a-vs-b-009b", "is not in this folder's schedule"),
        ('="winner":=>"winner":7,"x":', "bad winner 7"),
        ('="scores":[=>"scores":[[1],', "scores are two integers"),
        ('="seats":["b","a"]=>"seats":["a"]', "seats differ from the schedule"),
        ('="reason":"=>"reason":"nonsense","y":"', "nonsense"),
        ("[" * 100_000 + "]" * 100_000, "not JSON"),
        ('{"redeal": {"pairing": 0, "pair": 9, "deal": 1}}', "not in this folder's schedule"),
        ('{"redeal": {"pairing": 0, "pair": 0, "deal": "x"}}', "whole numbers"),
    ],
)
def test_a_malformed_result_line_is_a_one_line_error(played: Path, key_home: Path, edit: str, reason: str) -> None:
    shutil.rmtree(key_home)  # unchecked, so the parser itself meets the bad line
    _rewrite_line(played, 1, edit)
    err = one_error(cli("tournament", "merge", played, check=2))
    assert "results.jsonl line 2: " in err and reason in err, err
    err = one_error(cli("tournament", "--resume", played, "--no-html", check=2))
    assert "results.jsonl line 2: " in err and reason in err, err


def test_a_schedule_too_large_is_refused_before_it_is_built(tmp_path: Path) -> None:
    three = [*GREEDY, "-b", "c=bots/greedy_bot.py"]
    err = one_error(cli("tournament", *three, "--pairs", "1000000", "-o", tmp_path / "big", check=2))
    assert "make 6000000 matches, more than 2000000" in err
    toml = tmp_path / "big.toml"
    toml.write_text('pairs = 1000000\n[bots]\na = "bots/greedy_bot.py"\nb = "x"\nc = "y"\n')
    assert "more than 2000000" in one_error(cli("tournament", "--config", toml, "-o", tmp_path / "b2", check=2))
    assert not (tmp_path / "big").exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_disk_stops_the_run_with_exit_2_and_resume_deals_the_match_afresh(tmp_path: Path, jobs: str) -> None:
    out = tmp_path / "full"
    # Files may grow to 6000 bytes: tournament.json fits, the first replay (about 9 kB) does not.
    proc = referee("tournament", *GREEDY, *NO_HTML, "--pairs", "3", "--seed", "32", "-j", jobs, "-o", out, check=2,
                   fsize=6000)  # fmt: skip
    err = one_error(proc)
    assert "cannot write the tournament's output: File too large" in err and "replays" in err, err
    partial = sorted(p.name for p in (out / "replays").glob("*.jsonl"))
    assert partial and (out / "results.jsonl").read_text() == ""
    resumed = referee("tournament", "--resume", out, "-j", jobs)
    assert "interrupted: dealt afresh" in resumed.stderr
    kept = sorted(p.name for p in (out / "replays").glob("*.interrupted-1.jsonl"))
    assert kept == [name.replace(".jsonl", ".interrupted-1.jsonl") for name in partial]
    assert json.loads((out / "standings.json").read_text())["matches"] == 6


def test_a_full_disk_while_logging_a_result_is_exit_2_and_nothing_is_lost(tmp_path: Path) -> None:
    out = tmp_path / "full"
    # 20000 bytes: every replay (about 9 kB) fits, results.jsonl (about 500 bytes a match) overflows first.
    proc = referee("tournament", *GREEDY, *NO_HTML, "--pairs", "40", "--seed", "33", "-j", "1", "-o", out, check=2,
                   fsize=20000)  # fmt: skip
    err = one_error(proc)
    assert "results.jsonl: cannot write the tournament's output: File too large" in err, err
    referee("tournament", "--resume", out, "-j", "2")
    doc = json.loads((out / "standings.json").read_text())
    assert doc["matches"] == 80 and doc["complete"] is True
    assert cli("tournament", "merge", out, check=0).stderr == ""  # the resumed log still checks, line by line


def test_an_unwritable_output_folder_is_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("")
    err = one_error(cli("tournament", *GREEDY, *NO_HTML, "--pairs", "1", "-o", target, check=2))
    assert "cannot write the tournament folder" in err


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 32 kB tmpfs (skipped where mounting is not allowed: it needs root)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(mount)], capture_output=True,
                          check=False)  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_really_full_disk_is_exit_2_and_the_run_resumes_once_there_is_room(tiny_disk: Path) -> None:
    out = tiny_disk / "t"
    proc = referee("tournament", *GREEDY, *NO_HTML, "--pairs", "3", "--seed", "34", "-j", "1", "-o", out, check=2)
    assert "cannot write the tournament's output: No space left on device" in one_error(proc)
    subprocess.run(["mount", "-o", "remount,size=4m", str(tiny_disk)], check=True)
    resumed = referee("tournament", "--resume", out)
    assert "interrupted: dealt afresh" in resumed.stderr
    assert json.loads((out / "standings.json").read_text())["matches"] == 6
    assert list((out / "replays").glob("*.interrupted-1.jsonl"))
