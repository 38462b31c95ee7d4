"""What a running tournament keeps: the ids of its finished matches, not their records (those stay on disk and are
read back), and its replays compressed with ``--compress`` through play, resume, merge and the viewer index."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from referee.records import MatchResult, Termination
from referee.replay import verify
from referee.replay.html import find_replays
from referee.tournament import Record, RunOptions, Store
from referee.tournament.folder import replay_file
from tests.helpers import FAST, finished, make_config, merge, referee, standings

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("signing_key_home")]


def _big(rec: Record) -> Record:
    """``rec`` with the per-round data of a long match (what made a kept record weigh kilobytes)."""
    r = rec.result
    rounds = tuple({"event": "round_end", "round": k, "winner": 1, "points": [k, 0], "yaku": []} for k in range(12))
    result = MatchResult(r.match_id, r.winner, r.scores, 12, Termination.ROUNDS, None, r.names, r.seed, 90, rounds)
    return Record(rec.spec, result)


def test_a_running_store_keeps_no_record_and_reads_them_back(tmp_path: Path) -> None:
    store = Store.create(tmp_path, make_config(6, pairs=40), RunOptions())
    records = [_big(finished(spec, 1 + k % 2)) for k, spec in enumerate(list(store.schedule.values())[:600])]
    store.append(records[0])
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for rec in records[1:]:
        store.append(rec)
    gc.collect()
    held = (tracemalloc.get_traced_memory()[0] - before) / (len(records) - 1)
    tracemalloc.stop()
    assert held < 400, f"{held:.0f} bytes kept per finished match"  # a record alone is several kB
    assert store.done == 600 and len(store.pending()) == len(store.schedule) - 600
    assert list(store.iter_records()) == records
    store.close()
    again = Store.open(tmp_path)
    assert again.done == 600 and list(again.iter_records()) == records
    again.close()


def test_compressed_replays_through_play_resume_and_merge(tmp_path: Path, bot: str) -> None:
    common = ("--bot", f"a={bot} first", "--bot", f"b={bot} last", *FAST, "--pairs", "2", "--seed", "5", "--no-html")
    for k in (1, 2):
        referee("tournament", *common, "--compress", "--shard", f"{k}/2", "-o", tmp_path / f"s{k}")
    plain = tmp_path / "plain"
    referee("tournament", *common, "-o", plain)
    for k in (1, 2):
        folder = tmp_path / f"s{k}"
        assert json.loads((folder / "tournament.json").read_text())["options"]["compress"] is True
        replays = sorted((folder / "replays").iterdir())
        assert replays and all(p.name.endswith(".jsonl.gz") for p in replays)
        assert all(verify(p).ok for p in replays)
    merge(tmp_path / "s1", tmp_path / "s2", "-o", tmp_path / "merged")
    merged = sorted(p.name for p in (tmp_path / "merged" / "replays").glob("*.jsonl*"))
    assert merged == sorted(p.name + ".gz" for p in (plain / "replays").iterdir())
    pages = sorted((tmp_path / "merged" / "replays").glob("*.html"))  # drawn from the compressed replays
    assert len(pages) == len(merged) and not any("No board to show" in p.read_text() for p in pages)
    assert standings(tmp_path / "merged") == standings(plain)
    assert len(find_replays(tmp_path / "merged")) == len(merged)


def test_an_interrupted_compressed_replay_is_kept_and_dealt_afresh(tmp_path: Path) -> None:
    store = Store.create(tmp_path, make_config(2, pairs=2), RunOptions(compress=True))
    first, second = list(store.schedule.values())[:2]
    assert store.replay_path(first) == replay_file(tmp_path, first.match_id, True)
    store.replay_path(first).write_bytes(b"partial")  # started, never recorded
    store.close()
    again = Store.open(tmp_path)
    assert again.options.compress and again.redeals == {(first.pairing, first.pair): 1}
    assert (tmp_path / "replays" / f"{first.match_id}.interrupted-1.jsonl.gz").read_bytes() == b"partial"
    assert not again.replay_path(first).exists() and again.spec(second.match_id).deal == 1
    again.close()


def test_a_pair_interrupted_twice_keeps_each_deal_s_replays_under_its_number_and_verifies(tmp_path: Path) -> None:
    # deal 1: only game a had started when the run stopped; deal 2: a finished, b was cut. The kept replays carry
    # the number of the deal that replaced theirs, so verify reads deal 2's pair as interrupted, not as re-dealt
    # after both games had finished
    from referee.engine import PRESETS
    from referee.match import MatchConfig, run_match
    from referee.tournament.verify import verify_folder
    from tests.helpers import FIRST

    done = tmp_path / "done.jsonl"
    run_match((FIRST, FIRST), MatchConfig(PRESETS["cardavia"], 3, replay_path=done))  # a finished replay (no key)
    folder = tmp_path / "t"
    store = Store.create(folder, make_config(2, pairs=1), RunOptions())
    a, b = store.schedule.values()
    store.replay_path(a).write_text(done.read_text().splitlines()[0] + "\n")  # started, cut after its header
    store.close()
    store = Store.open(folder)
    a, b = store.spec(a.match_id), store.spec(b.match_id)
    store.replay_path(a).write_text(done.read_text())  # deal 2: game a finished...
    store.append(finished(a, 1))
    store.replay_path(b).write_text(done.read_text().splitlines()[0] + "\n")  # ... and game b was cut
    store.close()
    Store.open(folder).close()
    kept = sorted(p.name for p in (folder / "replays").glob("*.interrupted-*"))
    assert kept == [f"{a.match_id}.interrupted-1.jsonl", f"{a.match_id}.interrupted-2.jsonl",
                    f"{b.match_id}.interrupted-2.jsonl"]  # fmt: skip
    assert not [p for p in verify_folder(folder).problems if "dealt afresh" in p]
