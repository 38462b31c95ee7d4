"""A results folder read a record at a time: the schedule dealt on demand (:class:`Ledger`) is the list
``build_schedule`` makes, ``tournament.json`` is written and checked an entry at a time with the bytes and MAC of
the whole-document form, and the end-of-run report streamed from a folder is the report computed from every
record held in memory."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from referee.signing import Chain, key_id
from referee.tournament import Record, RunOptions, Store
from referee.tournament.config import Sprt
from referee.tournament.document import read_head, write_document
from referee.tournament.ledger import Ledger
from referee.tournament.pages import HOME, write_site
from referee.tournament.records import MATCH_FIELDS, PAIR_FIELDS
from referee.tournament.report import indented, pair_entry, to_json
from referee.tournament.schedule import build_schedule, shard_of
from referee.tournament.session import summarize
from referee.tournament.standings import compute
from tests.helpers import finished, make_config

KEY = bytes(range(32))


@pytest.mark.parametrize("shard", [(1, 1), (1, 3), (2, 3), (3, 3)])
def test_the_ledger_deals_the_schedule_build_schedule_lists(shard: tuple[int, int]) -> None:
    config = make_config(6, pairs=7)
    want = shard_of(build_schedule(config), shard)
    ledger = Ledger(config, shard)
    assert list(ledger.values()) == want and len(ledger) == len(want)
    assert all(ledger.get(m.match_id) == m for m in want)
    assert ledger.next_index() == max(m.index for m in want) + 1
    others = {m.match_id for m in build_schedule(config)} - {m.match_id for m in want}
    assert all(ledger.get(mid) is None for mid in [*others, "01-bot0-vs-bot1-007a", "nonsense", "99-x-001a"])


def test_the_ledger_keeps_offsets_past_four_bytes() -> None:
    config = make_config(3, pairs=4)
    ledger = Ledger(config, (1, 1))
    specs = list(ledger.values())
    far = [2**31 - 1, 2**31, 2**33 + 5]
    for spec, offset in zip(specs, [7, *far], strict=False):
        ledger.mark(spec, offset)
    assert [ledger.offset(s) for s in specs[:4]] == [7, *far]
    assert ledger.recorded == 4 and all(ledger.offset(s) == -1 for s in specs[4:])
    assert sorted(ledger.slot_offset(s.pairing, s.pair, 'ab'.index(s.game)) for s in specs[:4]) == [7, *far]
    ledger.redeal(specs[2].pairing, specs[2].pair, 1)
    assert ledger.recorded == 2 and ledger.offset(ledger[specs[3].match_id]) == -1


@pytest.mark.parametrize("key", [None, KEY])
@pytest.mark.parametrize("entries", [0, 1, 40])
def test_the_description_is_written_and_checked_an_entry_at_a_time(tmp_path: Path, key: bytes | None,
                                                                   entries: int) -> None:  # fmt: skip
    schedule = [m.to_json() for m in build_schedule(make_config(4, pairs=10))][:entries]
    head = {"format": "x", "fingerprint": "f", "config": {"bots": ["é", "b"], "n": [1, 2]}, "options": {}}
    doc = {**head, "schedule": schedule, **({"key_id": key_id(key)} if key else {})}
    buf = io.StringIO()
    write_document(buf, head, iter(schedule), key)
    assert buf.getvalue() == json.dumps(Chain(key).sign(doc), indent=1) + "\n"
    path = tmp_path / "t.json"
    path.write_text(buf.getvalue(), encoding="utf-8")
    read = read_head(path, key)
    assert read == {k: v for k, v in Chain(key).sign(doc).items() if k != "schedule"}
    if key is not None:
        assert read_head(path, bytes(32)) is None  # another key: not checked here (the caller says why)
        if entries:
            path.write_text(buf.getvalue().replace('"index": 0,', '"index": 5,', 1), encoding="utf-8")
            assert read_head(path, key) is None  # an edited entry


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_the_streamed_report_is_the_report_of_every_record_in_memory(tmp_path: Path) -> None:
    config = make_config(7, pairs=6)
    store = Store.create(tmp_path, config, RunOptions(), KEY)
    rng = random.Random(4)
    specs = list(store.schedule.values())
    rng.shuffle(specs)  # finished in an order far from the schedule's: pairs' games far apart in the log
    for spec in specs[: len(specs) - 5]:  # a few pairs left open
        store.append(finished(spec, rng.choice([1, 2, None])))
    store.close()
    store = Store.open(tmp_path, 1, KEY)
    records: list[Record] = list(store.iter_records())
    assert len(records) == len(specs) - 5 == store.done
    outcome = summarize(store)
    want = compute(config, records)
    assert outcome.standings.open_pairs == want.open_pairs > 0
    meta = json.loads((tmp_path / "standings.json").read_text())
    head = {k: meta[k] for k in list(meta)[: list(meta).index("matches")]}
    assert (tmp_path / "standings.json").read_text() == json.dumps(to_json(want, head), indent=1) + "\n"
    ordered = sorted(records, key=lambda r: r.spec.index)
    pairs = Counter((r.spec.pairing, r.spec.pair) for r in ordered)  # a game of an open pair: without its deal
    assert _rows((tmp_path / "matches.csv").read_text()) == [
        MATCH_FIELDS, *([str(r.csv_row(pairs[(r.spec.pairing, r.spec.pair)] == 2)[f]) for f in MATCH_FIELDS]
                        for r in ordered)
    ]  # fmt: skip
    assert any(n == 1 for n in pairs.values()) and any(n == 2 for n in pairs.values())
    assert _rows((tmp_path / "pairs.csv").read_text()) == [
        PAIR_FIELDS, *([str(p.csv_row()[f]) for f in PAIR_FIELDS] for p in want.pairs)
    ]
    store.close()


def test_the_pages_of_the_report_pass_are_those_of_a_folder_read_afresh(tmp_path: Path) -> None:
    config = make_config(2, pairs=30)
    store = Store.create(tmp_path, config, RunOptions(sprt=Sprt(0, 60)), KEY)
    rng = random.Random(9)
    specs = list(store.schedule.values())
    rng.shuffle(specs)
    for spec in specs[:-3]:
        store.append(finished(spec, rng.choice([1, 1, 2, None])))
    store.close()
    store = Store.open(tmp_path, 1, KEY)
    outcome = summarize(store, pages=True)
    store.close()
    assert outcome.home == tmp_path / HOME and outcome.pages_error is None
    pages = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.html")}
    unplayed = {(m.pairing, m.pair) for m in specs[-3:]}  # a pair with a game unplayed: no page shows its deal
    complete = [m for m in specs if (m.pairing, m.pair) not in unplayed]
    assert len([p for p in pages if p.parent.name == "replays"]) == len(complete) < len(specs) - 3
    for p in tmp_path.rglob("*.html"):
        p.unlink()
    write_site(tmp_path)
    assert {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.html")} == pages


REPORT = ("standings.json", "standings.csv", "pairs.csv", "matches.csv", "index.html")


def _report(root: Path) -> dict[str, bytes]:
    """The report files and pages of ``root`` (removed, so that the next report writes them afresh)."""
    found = {name: (root / name).read_bytes() for name in REPORT}
    found |= {f"bots/{p.name}": p.read_bytes() for p in sorted((root / "bots").glob("*.html"))}
    for name in found:
        (root / name).unlink()
    return found


def test_the_report_of_a_running_store_is_that_of_its_folder_read_afresh(tmp_path: Path) -> None:
    config = make_config(4, pairs=5)
    store = Store.create(tmp_path, config, RunOptions(), KEY)
    rng = random.Random(11)
    specs = list(store.schedule.values())
    rng.shuffle(specs)  # finished far from schedule order
    for spec in specs[:-4]:
        store.append(finished(spec, rng.choice([1, 2, None])))
    added = store.extend([0, 2])  # pairs added to the schedule, as --until-separated does
    for spec in added[:3]:
        store.append(finished(spec, 2))
    assert store.collected is not None and not store.collected.stale
    assert summarize(store, pages=True).pages_error is None  # from what the store gathered as results came
    running = _report(tmp_path)
    assert all(m.match_id.encode() in running["matches.csv"] for m in added[:3])
    store.close()
    for opened in (lambda: Store.open(tmp_path, 1, KEY), lambda: Store.open_readonly(tmp_path, KEY),
                   lambda: Store.open_readonly(tmp_path, KEY, collect=True)):  # fmt: skip
        again = opened()
        summarize(again, pages=True)
        again.close()
        assert _report(tmp_path) == running

    # a pair cut by a stop (one game recorded, the other started) is dealt afresh on resume: the counted game no
    # longer counts, the store's collection goes stale and the report reads the results again
    open_pair = next(m for m in store.pending() if store.schedule.twin_recorded(m))
    store.replay_path(open_pair).write_text("{}\n")
    resumed = Store.open(tmp_path, 1, KEY)
    assert resumed.collected is not None and resumed.collected.stale and resumed.done == len(specs) - 4 + 3 - 1
    outcome = summarize(resumed, pages=True)
    resumed.close()
    assert outcome.standings.matches == len(specs) - 4 + 3 - 1
    redealt = _report(tmp_path)
    assert redealt != running
    for collect in (False, True):
        again = Store.open_readonly(tmp_path, KEY, collect=collect)
        summarize(again, pages=True)
        assert _report(tmp_path) == redealt


def test_indented_is_the_text_of_json_dumps_with_an_indent() -> None:
    rng = random.Random(1)
    scalars = [None, True, False, 0, -3, 1.5, 2.0, 1e300, 'a"\n\u00e9\u2603', "", float("nan")]

    def value(depth: int) -> object:
        c = rng.random()
        if depth > 3 or c < 0.4:
            return rng.choice(scalars)
        if c < 0.7:
            return {rng.choice("abxy\u00e9") + str(i): value(depth + 1) for i in range(rng.randrange(4))}
        if c < 0.8:
            return {i: value(depth + 1) for i in range(rng.randrange(3))}  # keys json.dumps turns to strings
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    for _ in range(3000):
        v, depth = value(0), rng.randrange(4)
        lines = json.dumps(v, indent=1).split("\n")
        assert indented(v, depth) == "\n".join([lines[0], *(" " * depth + line for line in lines[1:])])


def test_a_pair_entry_is_the_text_of_json_dumps_with_an_indent() -> None:
    rng = random.Random(2)
    names = ["bot0", 'q"uote', "\u00e9t\u00e9", "\u2603", ""]
    scalars: list[object] = [None, True, 0, 7, 1.0, 0.5, float("inf"), "rounds", "x\ny"]

    def game() -> dict[str, object]:
        return {"match_id": rng.choice(names), "seats": [rng.choice(names), rng.choice(names)],
                "winner": rng.choice([None, 1, 2]), "scores": [rng.randrange(50), rng.choice([0, 31, -1])],
                "reason": rng.choice(["rounds", "forfeit"]), "order": rng.choice([None, 1, 2])}  # fmt: skip

    for k in range(2000):
        entry: dict[str, object] = {key: rng.choice(scalars) for key in ("pairing", "pair", "first", "complete")}
        entry["games"] = {g: game() for g in rng.sample("ab", rng.randrange(1, 3))}
        if k % 5 == 0:  # shapes off the fixed layout: through indented
            games = entry["games"]
            assert isinstance(games, dict)
            twist = rng.randrange(5)
            if twist == 0:
                entry["games"] = {}
            elif twist == 1:
                next(iter(games.values()))["seats"] = ["one"]
            elif twist == 2:
                next(iter(games.values()))["extra"] = 1
            elif twist == 3:
                entry["pair"] = [1, {"a": 2}]
            else:
                entry["last"] = "after games"
        lines = json.dumps(entry, indent=1).split("\n")
        assert pair_entry(entry) == "\n".join(["  " + lines[0], *("  " + line for line in lines[1:])])


def test_a_light_record_keeps_every_field_but_round_ends_and_histograms() -> None:
    import dataclasses

    from referee.records import Failure, Forfeit, MatchResult, SeatStats, Termination
    from referee.tournament.digest import light
    from referee.tournament.records import Played

    spec = build_schedule(make_config(2, pairs=1))[1]
    stats = tuple(SeatStats(4 + i, 12.5, 9.0, 100.0 - i, {3: 2, 5: 2}, 1000 + i) for i in range(2))
    forfeit = Forfeit(1, Failure.TIMEOUT, "slow")
    result = MatchResult(spec.match_id, 1, (3, 9), 2, Termination.FORFEIT, forfeit, spec.seats, spec.seed, 8,
                         ({"event": "round_end", "round": 1},), stats)  # fmt: skip
    rec = Record(spec, result, Played("w1", 3, 1.5, 2.5), 2)
    want = dataclasses.replace(rec, result=dataclasses.replace(
        result, round_ends=(), seat_stats=tuple(dataclasses.replace(s, histogram={}) for s in stats)))
    got = light(rec)
    assert got == want and got.to_json() == want.to_json() and got.result.round_ends == ()
    assert [s.histogram for s in got.result.seat_stats] == [{}, {}]
    # light builds these field by field: a new field would be dropped there, so this list is checked
    assert [f.name for f in dataclasses.fields(MatchResult)] == [
        "match_id", "winner", "scores", "rounds", "reason", "forfeit", "names", "seed", "decisions", "round_ends",
        "seat_stats"]  # fmt: skip
    assert [f.name for f in dataclasses.fields(SeatStats)] == [
        "decisions", "total_ms", "max_ms", "bank_left_ms", "histogram", "peak_memory"]  # fmt: skip
    assert [f.name for f in dataclasses.fields(Record)] == ["spec", "result", "played", "order"]
