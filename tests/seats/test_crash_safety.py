"""A referee killed with SIGKILL in the middle of a match: the replay written so far is a valid prefix that
``replay verify`` reports as truncated (exit 1, one line, no stack trace), and the bots die with the referee."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from referee.replay import verify
from tests import helpers
from tests.helpers import BOTS, slow_match

HOSTILE = helpers.HOSTILE / "hostile_bot.py"


def decisions_in(path: Path) -> int:
    try:
        return path.read_bytes().count(b'"type": "decision"') + path.read_bytes().count(b'"type":"decision"')
    except OSError:
        return 0


def alive(pid: int, start: int) -> bool:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    fields = raw[raw.rindex(b")") + 2 :].split()
    return int(fields[19]) == start and fields[0] != b"Z"


def with_arg(text: str) -> list[int]:
    """Live processes with ``text`` on their command line."""
    out = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in line and alive(int(entry), start_of(int(entry))):
            out.append(int(entry))
    return out


def start_of(pid: int) -> int:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return -1
    return int(raw[raw.rindex(b")") + 2 :].split()[19])


@pytest.mark.slow
def test_a_referee_killed_mid_match_leaves_a_verifiable_prefix_and_no_bot(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    pids = tmp_path / "pids"
    referee = slow_match(referee_exe, replay, pids)
    deadline = time.monotonic() + 60
    while decisions_in(replay) < 6 and referee.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert referee.poll() is None, "the match ended before the kill: make the bot slower"
    referee.send_signal(signal.SIGKILL)
    referee.wait(timeout=30)

    raw = replay.read_bytes()
    complete = raw.split(b"\n")[:-1]  # the text after the last newline may be a line cut short
    objs = [json.loads(line) for line in complete]  # every complete line is valid JSON
    assert objs[0]["type"] == "header" and all(o["type"] != "result" for o in objs)
    report = verify(replay)
    assert report.truncated and not report.ok
    assert report.decisions >= 6 and report.lines >= len(complete) - 1

    out = subprocess.run([str(referee_exe), "replay", "verify", str(replay)], capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert out.returncode == 1
    assert "truncated" in out.stdout and len(out.stdout.strip().splitlines()) == 1
    assert "Traceback" not in out.stdout + out.stderr
    shown = subprocess.run([str(referee_exe), "replay", "show", str(replay)], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    assert "truncated" in shown.stdout and "Traceback" not in shown.stderr

    # The bots die with their referee (the sandbox's --die-with-parent, or the parent-death signal without one):
    # found by their pid file's path on their command line, which holds inside a sandbox too.
    deadline = time.monotonic() + 5
    while (left := with_arg(str(pids))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"bot processes outlived their referee: {left}"
    recorded = [tuple(map(int, x.split())) for x in pids.read_text().splitlines()] if pids.exists() else []
    assert not any(alive(p, s) for p, s in recorded)


@pytest.mark.slow
def test_replay_verify_of_a_cut_file_at_every_byte_never_shows_a_stack_trace(referee_exe: Path, tmp_path: Path) -> None:
    """A finished replay cut at many points: the library reports truncated or a bad line; the CLI exits 1."""
    replay = tmp_path / "full.jsonl"
    bot = str(BOTS / "first_bot.py")
    subprocess.run([str(referee_exe), "play", bot, bot, "--seed", "3", "--replay", str(replay)], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    raw = replay.read_bytes()
    cuts = sorted({*range(0, len(raw) - 1, max(1, len(raw) // 97)), len(raw) - 2})  # the last newline alone is no cut
    for cut in cuts:
        part = tmp_path / f"cut-{cut}.jsonl"
        part.write_bytes(raw[:cut])
        report = verify(part)
        assert not report.ok and (report.truncated or report.error_line is not None), (cut, report)
    some = [str(tmp_path / f"cut-{c}.jsonl") for c in cuts[::10]]
    out = subprocess.run([str(referee_exe), "replay", "verify", *some], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "Traceback" not in out.stdout + out.stderr
    assert len(out.stdout.strip().splitlines()) == len(some)
