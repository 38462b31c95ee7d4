"""Compressed replays (``.jsonl.gz``): written line by line with a sync flush per decision, read by every replay
command through the one open function, and crash-safe like plain files (a cut or killed file's prefix verifies
as a truncated prefix)."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from referee.engine import PRESETS
from referee.match import MatchConfig, run_match
from referee.replay import ReplayReader, ReplayWriter, read_replay, show, verify
from referee.replay.html import find_replays, write_index
from referee.replay.reader import Header, first_line, open_replay
from referee.series import replay_paths
from tests.helpers import BOTS, slow_match

FIRST = BOTS / "first_bot.py"
KEY = bytes(range(32))


def _play(path: Path, seed: int = 4, key: bytes | None = None) -> None:
    config = MatchConfig(PRESETS["koikoi-japan"], seed, replay_path=path, replay_key=key)
    command = f"{FIRST}"
    result = run_match((command, command), config)
    assert result.forfeit is None


def _records(path: Path) -> list[object]:
    """The replay's records without the header's creation time."""
    out: list[object] = []
    for _, rec in read_replay(path):
        out.append(rec.__class__.__name__ if isinstance(rec, Header) else rec)
    return out


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same match written plain and compressed by the writer, signed."""
    folder = tmp_path_factory.mktemp("gz")
    plain, packed = folder / "m.jsonl", folder / "m.jsonl.gz"
    _play(plain, key=KEY)
    _play(packed, key=KEY)
    return plain, packed


@pytest.fixture(scope="module")
def copy(pair: tuple[Path, Path]) -> Path:
    """The plain replay's bytes gzipped: the same file, compressed."""
    out = pair[0].with_name("copy.jsonl.gz")
    out.write_bytes(gzip.compress(pair[0].read_bytes()))
    return out


def test_a_compressed_replay_is_gzip_of_the_same_lines_and_verifies(pair: tuple[Path, Path], copy: Path) -> None:
    plain, packed = pair
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    unpacked = gzip.decompress(packed.read_bytes()).splitlines()
    lines = plain.read_bytes().splitlines()
    assert len(unpacked) == len(lines)
    strip = ("created", "mac", "ms")  # the creation time, the signature chain over it, the bots' times
    for a, b in zip(unpacked, lines, strict=True):
        assert {k: v for k, v in json.loads(a).items() if k not in strip} == {
            k: v for k, v in json.loads(b).items() if k not in strip
        }
    assert _records(copy) == _records(plain)
    report = verify(packed, KEY)
    assert report.ok and report.signed and report.lines == len(lines)
    assert len(packed.read_bytes()) * 2 < len(plain.read_bytes())


@pytest.mark.slow
def test_every_cut_of_a_compressed_replay_is_a_valid_prefix(pair: tuple[Path, Path], tmp_path: Path) -> None:
    """Cut anywhere (a killed referee, a partial copy): the lines before the cut verify, as a truncated file."""
    _, packed = pair
    raw = packed.read_bytes()
    full = verify(packed, KEY).lines
    previous = 0
    for cut in sorted({*range(0, len(raw), max(1, len(raw) // 150)), len(raw) - 1}):
        part = tmp_path / f"cut-{cut}.jsonl.gz"
        part.write_bytes(raw[:cut])
        report = verify(part, KEY)
        if report.ok:  # only the end of the stream is missing (its trailer): every line is there
            assert report.lines == full, cut
            continue
        if report.error_line is not None:  # no complete first line yet
            assert report.error_line == 1 and report.lines == 0, (cut, report)
            continue
        assert report.truncated and report.signed, (cut, report)
        assert previous <= report.lines < full  # the prefix only grows with the bytes kept
        previous = report.lines
    assert previous > full * 0.8


def test_a_flushed_writer_leaves_a_readable_compressed_prefix(pair: tuple[Path, Path], tmp_path: Path) -> None:
    plain, _ = pair
    path = tmp_path / "live.jsonl.gz"
    writer = ReplayWriter(path, key=KEY)
    source = plain.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(source[:40], 1):
        writer.write_line(line.split(',"mac":')[0] + "}")
        writer.flush()  # no close: what a killed referee leaves after a decision
        report = verify(path, KEY)
        assert report.truncated and report.signed and report.lines == n
    writer.close()


@pytest.mark.slow
def test_a_referee_killed_mid_match_leaves_a_verifiable_compressed_prefix(referee_exe: Path, tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl.gz"
    referee = slow_match(referee_exe, replay, tmp_path / "pids")

    def decisions() -> int:
        return sum(b'"type":"decision"' in line for line in open_replay(replay)) if replay.exists() else 0

    deadline = time.monotonic() + 60
    while decisions() < 6 and referee.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert referee.poll() is None, "the match ended before the kill: make the bot slower"
    referee.send_signal(signal.SIGKILL)
    referee.wait(timeout=30)
    with pytest.raises(EOFError):  # no gzip trailer: the stream was never finished
        gzip.decompress(replay.read_bytes())
    report = verify(replay)
    assert report.truncated and not report.ok and report.decisions >= 6
    out = subprocess.run([str(referee_exe), "replay", "verify", str(replay)], capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert out.returncode == 1 and "truncated" in out.stdout and "Traceback" not in out.stdout + out.stderr
    shown = subprocess.run([str(referee_exe), "replay", "show", str(replay)], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    assert "truncated" in shown.stdout and "Traceback" not in shown.stderr


def test_corrupt_compressed_data_is_a_line_error_never_a_stack_trace(
    pair: tuple[Path, Path], tmp_path: Path, referee_exe: Path
) -> None:
    _, packed = pair
    raw = bytearray(packed.read_bytes())
    for k in range(len(raw) // 2, len(raw) // 2 + 64):
        raw[k] ^= 0x55
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(bytes(raw))
    report = verify(bad, KEY)
    assert not report.ok and report.error_line is not None and report.error_line > 1
    not_gz = tmp_path / "plain-named.jsonl.gz"
    not_gz.write_bytes(pair[0].read_bytes())
    report = verify(not_gz)
    assert report.error_line == 1 and "decompress" in report.message
    out = subprocess.run([str(referee_exe), "replay", "verify", str(bad), str(not_gz)], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert out.returncode == 1 and len(out.stdout.strip().splitlines()) == 2
    assert "Traceback" not in out.stdout + out.stderr


def test_concatenated_gzip_members_read_as_one_file(pair: tuple[Path, Path], tmp_path: Path) -> None:
    plain, _ = pair
    lines = plain.read_bytes().splitlines(keepends=True)
    joined = tmp_path / "joined.jsonl.gz"
    joined.write_bytes(gzip.compress(b"".join(lines[:10])) + gzip.compress(b"".join(lines[10:])))
    assert list(open_replay(joined)) == lines
    assert verify(joined, KEY).ok


def test_show_html_and_series_names_take_compressed_replays(
    pair: tuple[Path, Path], copy: Path, tmp_path: Path
) -> None:
    plain, packed = pair
    text, problem = show(copy)
    assert problem is None and text == show(plain)[0]
    assert first_line(packed).startswith(b'{"type":"header"') and first_line(tmp_path / "missing.jsonl.gz") == b""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "a.jsonl.gz").write_bytes(packed.read_bytes())
    (folder / "b.jsonl").write_bytes(plain.read_bytes())
    assert [p.name for p in find_replays(folder)] == ["a.jsonl.gz", "b.jsonl"]
    index = write_index(folder)
    assert (folder / "a.html").is_file() and (folder / "b.html").is_file()
    assert 'href="a.html"' in index.read_text(encoding="utf-8")
    assert [p.name for p in replay_paths(tmp_path / "s.jsonl.gz", 2) if p] == ["s-001.jsonl.gz", "s-002.jsonl.gz"]
    assert [p.name for p in replay_paths(tmp_path / "s.jsonl", 2) if p] == ["s-001.jsonl", "s-002.jsonl"]


def test_the_reader_counts_lines_of_a_compressed_file_like_a_plain_one(pair: tuple[Path, Path]) -> None:
    plain, packed = pair
    a, b = ReplayReader(plain), ReplayReader(packed)
    assert len(list(a)) == len(list(b)) and a.lines == b.lines and not a.cut_short and not b.cut_short
