"""A folder's checkpoint: a folder closed by its run opens from it, checking only the lines written after it, and
gives the report a full read gives; anything that does not fit (an edited or rewritten file, a damaged, forged
or foreign checkpoint, a pickle that would run code) leaves it unused, and the folder is read and checked in full
as without one."""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest

from referee.tournament import RunOptions, Store
from referee.tournament import checkpoint as cp
from referee.tournament.config import TournamentError
from referee.tournament.folder import DESCRIPTION, RESULTS
from referee.tournament.report import scratch
from referee.tournament.session import summarize
from tests.helpers import finished, make_config

KEY = bytes(range(32))
REPORT = ("standings.json", "standings.csv", "matches.csv", "pairs.csv")
ROOT = Path(__file__).resolve().parents[2]


def _made(root: Path, played: int, seed: int = 4) -> list[str]:
    """A folder of 5 bots, ``played`` of its matches finished in a shuffled order, closed as a run's end closes
    it; returns the ids of the matches left."""
    store = Store.create(root, make_config(5, pairs=6), RunOptions(), KEY)
    rng = random.Random(seed)
    specs = list(store.schedule.values())
    rng.shuffle(specs)
    for spec in specs[:played]:
        store.append(finished(spec, rng.choice([1, 2, None])))
    store.close()
    return [m.match_id for m in specs[played:]]


class _Reads:
    """Counts the results lines a store checks one by one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = Store._read_line

        def counted(store: Store, line: bytes, where: str, offset: int) -> list[str]:
            self.count += 1
            return real(store, line, where, offset)

        monkeypatch.setattr(Store, "_read_line", counted)


def _killed_run(root: Path, mids: list[str], every: float | None = None) -> None:
    """A run in another process that records ``mids`` (checkpointing every ``every`` seconds; None: the default)
    and is killed: it never closes its store."""
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from referee.tournament import Store\n"
        "from tests.helpers import finished\n"
        "store = Store.open(Path(sys.argv[1]), 1, bytes(range(32)))\n"
        f"store.checkpoint_every = {every!r} if {every!r} is not None else store.checkpoint_every\n"
        f"for mid in {mids!r}:\n"
        "    store.append(finished(store.spec(mid), 1))\n"
        "os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(root)], cwd=ROOT)
    assert done.returncode == -9


def _report(root: Path) -> dict[str, bytes]:
    """The report files of ``root`` written from a store opened afresh (and closed)."""
    store = Store.open(root, 1, KEY)
    try:
        summarize(store)
    finally:
        store.close()
    return {name: (root / name).read_bytes() for name in REPORT}


def _full_report(root: Path) -> dict[str, bytes]:
    """The report of ``root`` with every line read: its checkpoint removed first (the open writes it again)."""
    (root / cp.CHECKPOINT).unlink()
    return _report(root)


def _reopened(root: Path, monkeypatch: pytest.MonkeyPatch, checked: int, done: int) -> _Reads:
    """Open ``root``: ``checked`` lines are checked one by one and ``done`` matches are recorded; its report is the
    report of a full read. Returns the count of lines checked (the full read's added)."""
    reads = _Reads(monkeypatch)
    store = Store.open(root, 1, KEY)
    assert reads.count == checked and store.done == done
    summarize(store)
    store.close()
    got = {name: (root / name).read_bytes() for name in REPORT}
    assert _full_report(root) == got
    return reads


def _lines(root: Path) -> int:
    return len((root / RESULTS).read_bytes().splitlines())


def test_a_closed_folder_opens_from_its_checkpoint_and_reports_as_a_full_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _made(tmp_path, 50)
    assert (tmp_path / cp.CHECKPOINT).is_file()
    reads = _reopened(tmp_path, monkeypatch, checked=0, done=50)
    assert reads.count == 50  # the full read's


def test_only_the_lines_after_the_checkpoint_are_checked_after_a_killed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    left = _made(tmp_path, 30)
    _killed_run(tmp_path, left[:7])  # no close, so no new checkpoint
    assert _lines(tmp_path) == 37
    _reopened(tmp_path, monkeypatch, checked=7, done=37)


def test_an_edited_result_line_is_found_as_without_a_checkpoint(tmp_path: Path) -> None:
    _made(tmp_path, 20)
    path = tmp_path / RESULTS
    lines = path.read_bytes().splitlines(keepends=True)
    obj = json.loads(lines[3])
    obj["winner"] = 1 if obj.get("winner") != 1 else 0
    lines[3] = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
    path.write_bytes(b"".join(lines))
    with pytest.raises(TournamentError, match="line 4: the signature does not match"):
        Store.open(tmp_path, 1, KEY)


@pytest.mark.parametrize("damage", ["flip-rows", "flip-state", "cut", "empty", "other-format"])
def test_a_damaged_checkpoint_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    _made(tmp_path, 40)
    want = _report(tmp_path)
    path = tmp_path / cp.CHECKPOINT
    data = bytearray(path.read_bytes())
    header_end = data.index(b"\n") + 1
    if damage == "flip-rows":  # the scratch rows follow the header
        data[header_end + 40] ^= 1
    elif damage == "flip-state":  # the state's pickle comes last, before the MAC
        data[-100] ^= 1
    elif damage == "cut":
        del data[len(data) // 2 :]
    elif damage == "empty":
        data = bytearray()
    else:
        data[:header_end] = data[:header_end].replace(b"koikoi-checkpoint/1", b"koikoi-checkpoint/9")
    path.write_bytes(bytes(data))
    reads = _Reads(monkeypatch)
    assert _report(tmp_path) == want
    assert reads.count == 40


def test_a_checkpoint_of_another_key_is_not_used(tmp_path: Path) -> None:
    _made(tmp_path, 10)
    assert cp.read(tmp_path, KEY, scratch) is not None
    assert cp.read(tmp_path, bytes(32), scratch) is None
    assert cp.read(tmp_path, None, scratch) is None


class _Payload:
    """A state that would run a command when loaded by a plain unpickler."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.target}",)


def test_a_checkpoint_never_runs_code_even_signed_with_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "t"
    _made(folder, 12)
    want = _report(folder)
    target = tmp_path / "ran"
    assert pickle.loads(pickle.dumps(_Payload(target))) == 0 and target.exists()  # what a plain unpickler does
    target.unlink()
    size = (folder / RESULTS).stat().st_size
    description = cp.file_digest(folder / "tournament.json") or ""
    cp.write(folder, KEY, description, (size, 12, cp.file_digest(folder / RESULTS) or ""), {"ledger": _Payload(target)},
             {}, {}, {})  # fmt: skip
    assert cp.read(folder, KEY, scratch) is not None  # its MAC checks: only the unpickler stands in the way
    reads = _Reads(monkeypatch)
    assert _report(folder) == want
    assert reads.count == 12 and not target.exists()


def test_a_description_rewritten_is_read_and_checked_in_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _made(tmp_path, 16)
    want = _report(tmp_path)
    path = tmp_path / DESCRIPTION
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"index": 0,', '"index":  0,', 1), encoding="utf-8")  # same content, other bytes
    reads = _Reads(monkeypatch)
    assert _report(tmp_path) == want and reads.count == 16  # opened by a full read
    path.write_text(text.replace('"index": 0,', '"index": 5,', 1), encoding="utf-8")  # an edited entry
    with pytest.raises(TournamentError):
        Store.open(tmp_path, 1, KEY)


def test_a_description_rewritten_while_a_store_is_open_does_not_pass_for_its_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The checkpoint names tournament.json as the store read it, not as it is when the checkpoint is written.
    _made(tmp_path, 12)
    want = _report(tmp_path)
    store = Store.open(tmp_path, 1, KEY)
    path = tmp_path / DESCRIPTION
    path.write_text(path.read_text(encoding="utf-8").replace('"index": 0,', '"index":  0,', 1), encoding="utf-8")
    store.close()  # writes the checkpoint
    reads = _Reads(monkeypatch)
    assert _report(tmp_path) == want and reads.count == 12  # opened by a full read


def test_a_torn_line_after_the_checkpoint_is_cut_and_its_match_played_again(tmp_path: Path) -> None:
    _made(tmp_path, 20)
    with open(tmp_path / RESULTS, "ab") as f:
        f.write(b'{"match_id":"01-bot0-vs-bot1')
    store = Store.open(tmp_path, 1, KEY)
    assert store.done == 20 and any("incomplete last line" in w for w in store.warnings)
    store.close()
    assert (tmp_path / RESULTS).read_bytes().endswith(b"\n") and _lines(tmp_path) == 20


def test_no_checkpoint_without_a_key_nor_from_a_read_only_open(tmp_path: Path) -> None:
    unsigned = tmp_path / "unsigned"
    store = Store.create(unsigned, make_config(3, pairs=2), RunOptions(), None)
    store.append(finished(next(iter(store.schedule.values())), 1))
    store.close()
    assert not (unsigned / cp.CHECKPOINT).exists()
    signed = tmp_path / "signed"
    _made(signed, 8)
    (signed / cp.CHECKPOINT).unlink()
    Store.open_readonly(signed, KEY, collect=True)
    assert not (signed / cp.CHECKPOINT).exists()


def test_a_pair_dealt_afresh_after_the_checkpoint_gives_the_report_of_a_full_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    left = _made(tmp_path, 25)
    store = Store.open(tmp_path, 1, KEY)
    spec = store.spec(left[0])
    twin = store.schedule.pair(spec.pairing, spec.pair)
    done = [m for m in twin if store.is_done(m.match_id)]
    store.close()
    # the pair's replay exists but its other game has no result: an interrupted pair, dealt afresh on open
    (tmp_path / "replays" / f"{left[0]}.jsonl").write_text("")
    store = Store.open(tmp_path, 1, KEY)
    assert any("dealt afresh" in w for w in store.warnings)
    assert store.done == 25 - len(done)
    summarize(store)
    store.close()
    got = {name: (tmp_path / name).read_bytes() for name in REPORT}
    assert _full_report(tmp_path) == got


def test_a_playing_store_checkpoints_as_results_come(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    left = _made(tmp_path, 10)
    _killed_run(tmp_path, left[:5], every=0)  # a checkpoint after every result, then killed
    _reopened(tmp_path, monkeypatch, checked=0, done=15)
