"""Pages at scale: a match's page is written by the worker that played it, before its result is recorded; a
resumed or merged folder keeps the pages it has; the home page and bot pages list a bounded number of matches
however many were played (every match is in matches.csv)."""

from __future__ import annotations

import dataclasses
import random
import re
import sys
from pathlib import Path

import pytest

from referee.engine import PRESETS
from referee.records import MatchResult, Termination
from referee.tournament import BotSpec, Record, RunOptions, TournamentConfig, compute, start
from referee.tournament.config import Format
from referee.tournament.digest import BOT_GAMES, LAST_MATCHES, Digest
from referee.tournament.folder import RESULTS
from referee.tournament.ladder import extended
from referee.tournament.ledger import Ledger
from referee.tournament.match_page import match_page
from referee.tournament.pages import write_home
from referee.tournament.runner import ParallelRun
from referee.tournament.schedule import MatchSpec, build_schedule
from referee.tournament.store import Store, dumps_line
from referee.tournament.units import Units
from tests.helpers import FAST, ROOT, make_config, merge, referee

BOT = ROOT / "bots" / "random_bot.py"


def _pages(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every match page of ``folder``: (inode, mtime in ns, bytes) by file name."""
    out = {}
    for p in sorted((folder / "replays").glob("*.html")):
        st = p.stat()
        out[p.name] = (st.st_ino, st.st_mtime_ns, p.read_bytes())
    return out


@pytest.mark.slow  # real bots
def test_a_pair_s_match_pages_exist_when_its_second_result_reaches_the_main_process(tmp_path: Path) -> None:
    # a page shows its deal: the first game of a pair gets its page only with its twin, which plays that deal
    bots = (BotSpec("one", f"{sys.executable} {BOT} --seed 1"), BotSpec("two", f"{sys.executable} {BOT} --seed 2"))
    config = TournamentConfig(bots=bots, rules=PRESETS["cardavia"], pairs=3, seed=5, sandbox="none")
    store = start(config, RunOptions(jobs=2), tmp_path / "t")
    out = dataclasses.replace(store.output(), pages=store.schedule.links())
    seen: list[tuple[str, bool, bool]] = []
    arrived: set[str] = set()

    def emit(spec: object, result: MatchResult, played: object) -> None:
        mid, pair = result.match_id, result.match_id[:-1]
        pages = [tmp_path / "t" / match_page(pair + game) for game in "ab"]
        if pair in arrived:  # the second game of its pair: both pages are there, each drawn
            seen.append((mid, all(p.is_file() for p in pages),
                         all(f'"id":"{pair + g}"' in p.read_text() for g, p in zip("ab", pages, strict=True))))
        else:  # the first: no page shows the deal yet
            seen.append((mid, not any(p.is_file() for p in pages), True))
        arrived.add(pair)

    try:
        with ParallelRun(config, out, Units.pending(store.schedule, 2), 2) as run:
            run.run(emit, lambda: False)  # type: ignore[arg-type]
    finally:
        store.close()
    assert sorted(mid for mid, _, _ in seen) == sorted(m.match_id for m in store.schedule.values())
    assert all(right and drawn for _, right, drawn in seen), seen
    ids = [m.match_id for m in sorted(store.schedule.values(), key=lambda m: m.index)]
    first = (tmp_path / "t" / match_page(ids[1])).read_text()  # previous and next follow the schedule
    assert f'href="{ids[0]}.html"' in first and f'href="{ids[2]}.html"' in first


@pytest.mark.slow  # real bots
def test_a_resumed_finished_folder_keeps_its_match_pages(tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = ["-b", "a=bots/random_bot.py --seed 1", "-b", "b=bots/random_bot.py --seed 2", *FAST, "--pairs", "2",
            "--seed", "4", "-j", "2", "--sandbox", "none", "-o", out]  # fmt: skip
    referee("tournament", *args)
    before = _pages(out)
    assert len(before) == 4
    home = (out / "index.html").stat().st_mtime_ns
    referee("tournament", "--resume", out)
    assert _pages(out) == before  # same files (inode), untouched (mtime), same bytes
    assert (out / "index.html").stat().st_mtime_ns >= home
    missing = out / "replays" / next(iter(before))
    missing.unlink()  # a page that is missing is written again, the others are left alone
    referee("replay", "html", out)
    assert missing.is_file() and {k: v for k, v in _pages(out).items() if k != missing.name} == {
        k: v for k, v in before.items() if k != missing.name
    }


@pytest.mark.slow  # real bots
def test_a_merge_copies_the_shards_pages(tmp_path: Path) -> None:
    common = ["-b", "a=bots/random_bot.py --seed 1", "-b", "b=bots/random_bot.py --seed 2", *FAST, "--pairs", "2",
              "--seed", "4", "-j", "1", "--sandbox", "none"]  # fmt: skip
    shards = [tmp_path / "s1", tmp_path / "s2"]
    for k, d in enumerate(shards, 1):
        referee("tournament", *common, "--shard", f"{k}/2", "-o", d)
    merge(*shards, "-o", tmp_path / "m", "--html")
    merged = _pages(tmp_path / "m")
    theirs = {**_pages(shards[0]), **_pages(shards[1])}
    assert sorted(merged) == sorted(theirs) and len(merged) == 4
    # copied as they were: each links its neighbours in its own shard's schedule, not the merged one's
    assert all(merged[name][2] == theirs[name][2] for name in merged)
    home = (tmp_path / "m" / "index.html").read_text()
    assert all(f'href="replays/{name}"' in home for name in merged)


def _synthetic(folder: Path, bots: int, pairs: int) -> int:
    """A folder of ``bots`` bots with one synthetic result per scheduled match (no bot run, no replay)."""
    config = make_config(bots, pairs=pairs)
    store = start(config, RunOptions(), folder, checked=True)
    rng = random.Random(7)
    lines = []
    for spec in store.schedule.values():
        winner = rng.choice([0, 1, None])
        scores = (5, 0) if winner == 0 else (0, 5) if winner == 1 else (0, 0)
        result = MatchResult(spec.match_id, winner, scores, 1, Termination.ROUNDS, None, spec.seats, spec.seed, 9)
        lines.append(dumps_line(Record(spec, result).to_json()) + "\n")
    (folder / RESULTS).write_text("".join(lines), encoding="utf-8")
    store.close()
    return len(lines)


def test_the_home_page_of_many_results_lists_the_last_matches_only(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    n = _synthetic(folder, 3, 200)  # 1,200 results
    assert n > 2 * max(LAST_MATCHES, BOT_GAMES)
    store = Store.open_readonly(folder)
    st = compute(store.config, store.iter_records())
    write_home(folder, st, Digest.of(store.config, folder, store.iter_records()), "facts")  # one pass each
    home = (folder / "index.html").read_text()
    rows = re.findall(r'<tr data-match="([^"]+)">', home)
    finished = [r.spec.match_id for r in store.iter_records()]
    assert sorted(rows) == sorted(finished[-LAST_MATCHES:])  # the last ones to finish
    assert f"the last {LAST_MATCHES} of {n} matches" in home and 'href="matches.csv"' in home
    assert len(re.findall(r'<tr class="pairing" id="pairing-', home)) == 3  # each pairing's anchor is there
    assert len(re.findall(r"<polyline data-bot=", home)) == 3
    points = re.search(r'<polyline data-bot="bot0"[^>]*points="([^"]+)"', home)
    assert points is not None and 40 <= len(points.group(1).split()) <= 81  # the ratings, at bounded checkpoints
    page = (folder / "bots" / "bot0.html").read_text()
    assert len(re.findall(r'<tr data-match="', page)) == BOT_GAMES and "../matches.csv" in page


def _neighbours(entries: list[MatchSpec], spec: MatchSpec) -> tuple[str | None, str | None]:
    """The ids of the entries just before and just after ``spec``'s schedule position (the links' meaning)."""
    ordered = sorted(entries, key=lambda m: m.index)
    before = [m.match_id for m in ordered if m.index < spec.index]
    after = [m.match_id for m in ordered if m.index > spec.index]
    return (before[-1] if before else None), (after[0] if after else None)


def test_links_follow_the_folders_schedule() -> None:
    config = make_config(3, pairs=2)
    schedule = build_schedule(config)
    ledger = Ledger(config, (2, 3))  # pair positions 1 and 4: schedule positions 2, 3, 8, 9
    shard = list(ledger.values())
    assert [m.index for m in shard] == [2, 3, 8, 9]
    links = ledger.links()
    assert [links.links(m) for m in shard] == [
        (None, shard[1].match_id), (shard[0].match_id, shard[2].match_id),
        (shard[1].match_id, shard[3].match_id), (shard[2].match_id, None),
    ]  # fmt: skip
    assert links.links(schedule[5]) == (shard[1].match_id, shard[2].match_id)  # a match not in it: its place


@pytest.mark.parametrize("shard", [(1, 1), (1, 2), (2, 2), (1, 3), (3, 3)])
@pytest.mark.parametrize("fmt", [Format.ROUND_ROBIN, Format.GAUNTLET])
def test_the_links_worked_out_from_the_schedule_are_those_of_its_entries_in_order(
    shard: tuple[int, int], fmt: Format
) -> None:
    config = make_config(4, pairs=3, fmt=fmt, **({"gauntlet": "bot1"} if fmt is Format.GAUNTLET else {}))
    ledger = Ledger(config, shard)

    def check() -> None:
        specs = list(ledger.values())
        links = ledger.links()
        assert [links.links(m) for m in specs] == [_neighbours(specs, m) for m in specs]
        others = [m for m in build_schedule(ledger.config) if m.match_id not in {s.match_id for s in specs}]
        assert [links.links(m) for m in others] == [_neighbours(specs, m) for m in others]  # not in it: its place

    check()
    for step, name in enumerate(("new1", "new2")):  # ladder steps, after the schedule (and after a gap)
        entrant = BotSpec(name, f"python3 {name}.py")
        ledger.restage(extended(ledger.config, [entrant], (), ledger.next_index() + 6 * step))
        check()
    if shard == (1, 1):  # pairs added (--until-separated), one pairing twice
        for pairing in (0, 2, 0):
            ledger.add_pair(pairing, ledger.pairs_of(pairing), ledger.next_index())
        check()
