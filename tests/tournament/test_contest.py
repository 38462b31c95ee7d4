"""Running a contest: whole pairs as the unit of every count, an SPRT stop that finishes the pairs in flight,
shared ranks, the local preflight, and the seed commitment that ``tournament verify`` checks.

Real subprocess bots (``bots/greedy_bot.py`` and ``bots/random_bot.py`` with a fixed seed) on the single-deal
cardavia rules, so that each tournament here takes a second or two.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from referee.signing import load_key
from referee.tournament import RunOptions, Store
from referee.tournament.commitment import commit, opens
from referee.tournament.config import Sprt, TournamentError
from referee.tournament.pages import write_site
from referee.tournament.records import PairingRow
from referee.tournament.session import open_twins, play
from referee.tournament.standings import check_consistent, compute, sprt_stop_point
from tests.helpers import FAST, ROOT, referee

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("signing_key_home")]

GREEDY, RANDOM = "greedy=bots/greedy_bot.py", "random=bots/random_bot.py --seed 3"


def _whole_pairs_agree(doc: dict[str, object]) -> None:
    """Every bot's games are whole pairs and every pairing's W/D/L are its pentanomial pairs' games."""
    for p in doc["pairings"]:  # type: ignore[attr-defined]
        games = p["wins"] + p["draws"] + p["losses"]
        assert games == 2 * sum(p["pentanomial"]) == 2 * p["pairs"]
        assert 2 * p["wins"] + p["draws"] == sum(k * n for k, n in enumerate(p["pentanomial"]))
    for b in doc["standings"]:  # type: ignore[attr-defined]
        assert b["games"] % 2 == 0


def test_an_sprt_stop_mid_pair_finishes_the_pair_and_counts_whole_pairs(tmp_path: Path) -> None:
    # real results of six pairs, recorded again in an order where the SPRT decides while pair 5 is half played
    played = tmp_path / "played"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "6", "--seed", "11", "-j", "1",
            "-o", played, "--no-html")  # fmt: skip
    source = Store.open_readonly(played)
    records = sorted(source.iter_records(), key=lambda r: r.spec.index)
    gate = Sprt(-400.0, 0.0, 0.3, 0.3)  # greedy beats random: H1 within the first five pairs
    half, rest = records[10], records[:10]
    assert sprt_stop_point(source.config, rest, gate) is not None

    folder = tmp_path / "stopped"
    store = Store.create(folder, source.config, RunOptions(sprt=gate))
    for rec in [half, *rest]:
        store.append(rec)
    assert [m.match_id for m in open_twins(store)] == [records[11].spec.match_id]
    outcome = play(store, stream=io.StringIO(), live=False)  # the SPRT has decided: only the twin is played

    doc = json.loads((folder / "standings.json").read_text())
    stop = doc["sprt_stopped_after_pairs"]
    assert outcome.complete and doc["complete"] and doc["open_pairs"] == 0
    assert doc["matches"] == doc["counted_matches"] == 12 and doc["sprt"]["pairs"] == 6 > stop
    _whole_pairs_agree(doc)
    page = write_site(folder).read_text()
    pairs = "1 pair" if stop == 1 else f"{stop} pairs"
    assert f"stopped by the SPRT after {pairs} ({6 - stop} more in flight finished)" in page
    assert 'id="sprt" data-state="H1"' in page and "pentanomial [" in page


def test_a_pair_with_one_game_played_is_left_out_of_every_count(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "3", "--seed", "4", "-o", folder, "--no-html")
    store = Store.open_readonly(folder)
    records = list(store.iter_records())
    cut = [r for r in records if r.spec.match_id != records[-1].spec.match_id]
    st = compute(store.config, cut)
    assert st.open_pairs == 1 and st.matches == 5 and st.counted == 4
    assert [b.games for b in st.bots] == [4, 4] and st.pairings[0].pairs == 2
    assert sum(st.pairings[0].pentanomial) * 2 == st.pairings[0].games


def test_results_whose_wdl_disagree_with_the_pentanomial_counts_are_refused() -> None:
    row = PairingRow("a", "b", wins=2, draws=0, losses=0, pentanomial=[0, 0, 0, 0, 1])
    check_consistent(row)
    for bad in (PairingRow("a", "b", 1, 1, 0, [0, 0, 0, 0, 1]), PairingRow("a", "b", 3, 0, 0, [0, 0, 0, 0, 1])):
        with pytest.raises(TournamentError, match="disagrees with the pentanomial"):
            check_consistent(bad)


def test_bots_that_cannot_be_told_apart_share_their_rank(tmp_path: Path) -> None:
    # two copies of one deterministic bot: every duplicate pair is 1-1, so nothing can separate them
    folder = tmp_path / "twins"
    referee("tournament", "-b", "one=bots/greedy_bot.py", "-b", "two=bots/greedy_bot.py", *FAST, "--pairs", "2",
            "--seed", "9", "-o", folder)  # fmt: skip
    doc = json.loads((folder / "standings.json").read_text())
    assert doc["pairings"][0]["pentanomial"] == [0, 0, 2, 0, 0]
    assert [b["rank"] for b in doc["standings"]] == [1, 1]
    assert '<td>1=</td><td><a href="bots/one.html">one</a></td>' in (folder / "index.html").read_text()


def test_a_bot_that_fails_the_preflight_is_named_before_any_match(tmp_path: Path) -> None:
    broken = ("-b", "ok=bots/greedy_bot.py", "-b", f"b={sys.executable} {tmp_path / 'nofile.py'}", *FAST)
    proc = referee("tournament", *broken, "--pairs", "1", "-o", tmp_path / "t", check=2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "bot 'b' does not start and answer hello" in lines[0] and "--forfeit-broken" in lines[0]
    assert not (tmp_path / "t").exists()
    referee("tournament", *broken, "--pairs", "1", "-o", tmp_path / "f", "--forfeit-broken", "--no-html")
    doc = json.loads((tmp_path / "f" / "standings.json").read_text())
    assert {b["name"]: b["crashes"] for b in doc["standings"]} == {"ok": 0, "b": 2}


def test_a_bot_slower_to_start_than_its_start_up_time_fails_the_preflight(tmp_path: Path) -> None:
    # the preflight waits 10 s at least (a cold first start), but a bot over its own start-up time in two starts
    # would forfeit every match
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(4)\nfrom referee.bot import run\nrun(lambda legal: legal[0])\n")
    args = ("-b", "ok=bots/greedy_bot.py", "-b", f"slow={sys.executable} {slow}", "--rules", "cardavia",
            "--move-ms", "5000", "--pairs", "1")  # fmt: skip
    proc = referee("tournament", *args, "--startup-ms", "2500", "-o", tmp_path / "t", check=2)
    line = proc.stderr.strip().splitlines()[-1]
    assert "bot 'slow' took" in line and "more than its start-up time of 2.5 s" in line and "--startup-ms" in line
    assert not (tmp_path / "t").exists()


def test_the_seed_is_committed_at_the_start_and_published_only_when_complete(tmp_path: Path) -> None:
    proc = referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "21", "-o",
                   tmp_path / "t", "--event", "Spring cup", "--event-description", "house bots only")  # fmt: skip
    assert f"seed commitment {commit(21)}" in proc.stdout and opens(commit(21), 21) and not opens(commit(21), 22)
    doc = json.loads((tmp_path / "t" / "standings.json").read_text())
    assert doc["seed"] == "21" and doc["seed_commitment"] == commit(21) and doc["event"]["name"] == "Spring cup"
    home = (tmp_path / "t" / "index.html").read_text()
    assert "<title>Spring cup</title>" in home and "house bots only" in home
    assert "ok: 4 match(es)" in referee("tournament", "verify", tmp_path / "t").stdout

    shard = tmp_path / "s1"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "21", "--shard", "1/2",
            "-o", shard)  # fmt: skip
    sdoc = json.loads((shard / "standings.json").read_text())
    assert sdoc["seed"] is None and sdoc["seed_commitment"] == commit(21)
    assert "seed 21" not in (shard / "index.html").read_text()


def test_a_changed_deal_under_a_published_commitment_fails_verify(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "5", "-o", folder, "--no-html")
    replay = folder / "replays" / "01-greedy-vs-random-001a.jsonl"
    lines = replay.read_text().splitlines()
    header = json.loads(lines[0])
    header["seed"] = str(int(header["seed"]) + 1)  # another deal for this match
    replay.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    proc = referee("tournament", "verify", folder, check=1)
    assert "01-greedy-vs-random-001a" in proc.stdout and "1 problem(s)" in proc.stdout

    # the folder of another seed, under the commitment published for seed 5
    other = tmp_path / "other"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "6", "-o", other, "--no-html")
    proc = referee("tournament", "verify", other, "--commitment", commit(5), check=1)
    assert "does not open the commitment" in proc.stdout


def _cut(folder: Path, copy: Path, keep: int) -> list[str]:
    """``folder`` copied to ``copy`` with only the first ``keep`` lines of its results; the cut match ids."""
    shutil.copytree(folder, copy)
    lines = (folder / "results.jsonl").read_text().splitlines(keepends=True)
    (copy / "results.jsonl").write_text("".join(lines[:keep]))
    (copy / ".checkpoint").unlink(missing_ok=True)
    return [json.loads(line)["match_id"] for line in lines[keep:]]


def test_a_bot_whose_files_change_between_runs_is_named_on_resume_and_by_verify(tmp_path: Path) -> None:
    bot = tmp_path / "mine.py"
    shutil.copy(ROOT / "bots" / "greedy_bot.py", bot)
    folder = tmp_path / "t"
    referee("tournament", "-b", f"mine={bot}", "-b", RANDOM, *FAST, "--pairs", "3", "--seed", "5", "-j", "1",
            "-o", folder, "--no-html")  # fmt: skip
    header = json.loads((folder / "replays" / "01-mine-vs-random-000a.jsonl").read_text().splitlines()[0])
    mine = header["bots"][0]["files"]
    assert mine.startswith("sha256:") and header["bots"][1]["files"].startswith("sha256:")
    cut = _cut(folder, tmp_path / "cut", 4)  # the last pair is to be played again, by the new version
    for mid in cut:
        (tmp_path / "cut" / "replays" / f"{mid}.jsonl").unlink()
    bot.write_text(bot.read_text() + "\n# a new version\n")
    resumed = referee("tournament", "--resume", tmp_path / "cut", "--no-html")
    assert "bot 'mine': its files are not those of its last game" in resumed.stderr and mine in resumed.stderr
    assert "bot 'random'" not in resumed.stderr
    verified = referee("tournament", "verify", tmp_path / "cut").stdout
    assert f"note: mine played with 2 versions of its files: {mine} in 4 match(es) from" in verified
    assert "note: random" not in verified and "ok: 6 match(es)" in verified
    doc = json.loads(referee("tournament", "verify", tmp_path / "cut", "--json").stdout)
    assert doc["ok"] is True and doc["problems"] == [] and doc["checked"] == 6
    assert len(doc["versions"]["mine"]) == 2 and len(doc["versions"]["mine"][mine]) == 4
    assert len(doc["versions"]["random"]) == 1


def test_results_cut_off_the_end_are_found_by_verify_and_recorded_again_by_resume(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "3", "--seed", "5", "-o", folder, "--no-html")
    cut = _cut(folder, tmp_path / "cut", 3)
    assert len(cut) == 3
    proc = referee("tournament", "verify", tmp_path / "cut", check=1)
    for mid in cut:  # each finished game missing from the results is named
        assert f"{mid}: its replay ends with a result that results.jsonl does not hold" in proc.stdout
    # and the published report, made from all six results, is not that of the three left
    assert "standings.json: its standings are not those of results.jsonl" in proc.stdout
    assert "matches.csv: the row of" not in proc.stdout  # the rows of the games left are still theirs
    published = [ln for ln in proc.stdout.splitlines() if ln.startswith(("standings.", "matches.csv", "index.html"))]
    assert f"{3 + len(published)} problem(s)" in proc.stdout

    resumed = referee("tournament", "--resume", tmp_path / "cut", "--no-html")
    assert "recorded from the replay" in resumed.stderr and "dealt afresh" not in resumed.stderr
    assert not list((tmp_path / "cut" / "replays").glob("*.interrupted-*"))  # no deal was dealt again
    assert (tmp_path / "cut" / "matches.csv").read_text() == (folder / "matches.csv").read_text()
    assert "ok: 6 match(es)" in referee("tournament", "verify", tmp_path / "cut").stdout


def test_verify_finds_a_published_report_that_is_not_the_results(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "5", "-o", folder)
    assert "ok: 4 match(es)" in referee("tournament", "verify", folder).stdout
    edits = {
        "standings.json": lambda t: t.replace('"name": "greedy"', '"name": "X"').replace('"name": "random"',
                                                                                        '"name": "greedy"')
        .replace('"name": "X"', '"name": "random"'),
        "standings.csv": lambda t: t.replace(",greedy,4,", ",greedy,5,"),
        "matches.csv": lambda t: t.replace(",greedy,random,", ",random,greedy,", 1),
        "index.html": lambda t: t.replace(">greedy</a></td>", ">greedy-2</a></td>", 1),
    }
    for name, edit in edits.items():
        copy = tmp_path / f"edited-{name}"
        shutil.copytree(folder, copy)
        text = (copy / name).read_text()
        assert edit(text) != text, name
        (copy / name).write_text(edit(text))
        found = referee("tournament", "verify", copy, check=1).stdout
        assert f"{name}: " in found and "1 problem(s)" in found, (name, found)


def test_verify_finds_an_edited_result_with_or_without_the_key(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "1", "--seed", "5", "-o", folder, "--no-html")
    lines = (folder / "results.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["result"]["scores"] = [s + 1 for s in first["result"]["scores"]]  # both scores: the winner is the same
    (folder / "results.jsonl").write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    (folder / ".checkpoint").unlink(missing_ok=True)
    signed = referee("tournament", "verify", folder, check=1)  # the default key: the line's MAC fails
    assert "results.jsonl line 1: the signature does not match" in signed.stdout
    nokey = tmp_path / "nokey"
    nokey.mkdir()
    env = {**os.environ, "XDG_DATA_HOME": str(nokey)}  # no key: the replay still tells the result
    unsigned = referee("tournament", "verify", folder, check=1, env=env)
    assert f"{first['match_id']}: its recorded result is not the one its replay ends with" in unsigned.stdout
    assert "signature not checked: no key" in unsigned.stdout


def test_verify_finds_a_pair_dealt_afresh_after_its_games_had_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the results cut and the folder opened by a build that dealt such pairs afresh: each finished game's kept
    # replay ends with its result, which no interruption leaves
    folder = tmp_path / "t"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "5", "-o", folder, "--no-html")
    cut = _cut(folder, tmp_path / "cut", 2)
    monkeypatch.setattr(Store, "record_finished", lambda self: [])
    store = Store.open(tmp_path / "cut", 1, load_key(None, create=False))
    store.close()
    kept = sorted(p.name for p in (tmp_path / "cut" / "replays").glob("*.interrupted-1.jsonl"))
    assert {f"{mid}.interrupted-1.jsonl" for mid in cut} <= set(kept)  # with the other game of each cut pair
    proc = referee("tournament", "verify", tmp_path / "cut", check=1)
    assert "dealt afresh though no game of the pair had been interrupted" in proc.stdout
    assert all(name in proc.stdout for name in kept)


SNAP_ANSWER = r"""
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "snap"}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""
"""The end of the snapshot bots: first legal action, out at bye."""

SNAPSHOT = r"""
import json, os, shutil, sys
out, keep, when = sys.argv[1], sys.argv[2], sys.argv[3]
for line in sys.stdin:
    msg = json.loads(line)
    starts = msg["type"] in ("hello", "new_match") and msg["match"]["id"].startswith(when)
    if starts and not os.path.exists(f"{keep}/standings.json"):  # the first game of that pair: copy the report
        for name in ("index.html", "standings.json"):
            shutil.copy(f"{out}/{name}", f"{keep}/{name}")
""" + SNAP_ANSWER


def test_a_running_tournament_rewrites_its_report_and_prints_interim_standings(tmp_path: Path) -> None:
    out, keep = tmp_path / "t", tmp_path / "kept"
    keep.mkdir()
    snap = tmp_path / "snap.py"
    snap.write_text(SNAPSHOT)
    when = "01-snap-vs-random-002"  # pair 2 starts after pairs 0 and 1 (-j 1 plays in schedule order)
    proc = referee("tournament", "-b", f"snap={sys.executable} {snap} {out} {keep} {when}", "-b", RANDOM, *FAST,
                   "--pairs", "4", "--seed", "5", "-j", "1", "-o", out, "--sandbox", "none",  # it reads the folder
                   "--live-every", "2", "--rating-interval", "1")  # fmt: skip
    running = json.loads((keep / "standings.json").read_text())
    assert running["running"] is True and running["complete"] is False and running["seed"] is None
    assert running["matches"] == 4 and running["counted_matches"] == 4
    _whole_pairs_agree(running)
    page = (keep / "index.html").read_text()
    assert "running: 4 of 8 matches played" in page and '<meta http-equiv="refresh" content="30">' in page
    final = json.loads((out / "standings.json").read_text())
    assert "running" not in final and final["complete"] is True and final["matches"] == 8
    home = (out / "index.html").read_text()
    assert "http-equiv=\"refresh\"" not in home and "running:" not in home
    interim = [line for line in proc.stdout.splitlines() if line.startswith("interim standings after")]
    after = ["1 pair", "2 pairs", "3 pairs"]  # the 4th: the final table
    assert interim == [f"interim standings after {n}:" for n in after]


TWIN_SNAPSHOT = r"""
import json, os, shutil, sys
out, keep, when = sys.argv[1], sys.argv[2], sys.argv[3]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] in ("hello", "new_match"):
        print("my hand is in my log", file=sys.stderr, flush=True)
        if msg["match"]["id"].startswith(when):
            with open(f"{keep}/seen", "a") as f:
                f.write(msg["match"]["id"] + "\n")
            if len(open(f"{keep}/seen").read().split()) == 2:  # the pair's second game: its first is recorded
                shutil.copytree(out, f"{keep}/pages", ignore=shutil.ignore_patterns("replays", "logs", "*.jsonl"))
""" + SNAP_ANSWER


def test_live_pages_neither_link_nor_quote_a_game_whose_twin_is_still_to_be_played(tmp_path: Path) -> None:
    out, keep = tmp_path / "t", tmp_path / "kept"
    keep.mkdir()
    snap = tmp_path / "snap.py"
    snap.write_text(TWIN_SNAPSHOT)
    when = "01-snap-vs-random-001"
    referee("tournament", "-b", f"snap={sys.executable} {snap} {out} {keep} {when}", "-b", RANDOM, *FAST,
            "--pairs", "3", "--seed", "5", "-j", "1", "-o", out, "--sandbox", "none",  # it reads the folder
            "--live-every", "1")  # fmt: skip
    first = (keep / "seen").read_text().split()[0]  # the pair's game recorded when the pages were copied
    pages = [keep / "pages" / "index.html", *(keep / "pages" / "bots").glob("*.html")]
    assert len(pages) == 3
    for page in pages:
        text = page.read_text()
        assert first in text  # the game is listed, with its result
        assert f"{first}.jsonl" not in text and f"{first}.snap.log" not in text and f"{first}.html" not in text
        assert f"{first}.random.log" not in text
    assert "its twin is still to be played" in (keep / "pages" / "index.html").read_text()
    done_pair = "01-snap-vs-random-000a"  # a complete pair keeps its links
    assert f"{done_pair}.html" in (keep / "pages" / "index.html").read_text()
    assert f"{done_pair}.snap.log" in (keep / "pages" / "bots" / "snap.html").read_text()
    final = (out / "index.html").read_text()  # at the end every pair is complete: every game is linked
    assert f"{first}.html" in final and "its twin is still to be played" not in final


def test_a_bot_named_twice_in_the_tournament_file_says_so(tmp_path: Path) -> None:
    from referee.tournament.config import load_config

    twice = tmp_path / "twice.toml"
    twice.write_text('rules = "cardavia"\n[bots]\ngreedy = "bots/greedy_bot.py"\ngreedy = "bots/random_bot.py"\n')
    with pytest.raises(TournamentError, match=r"line 4: bot greedy is named twice"):
        load_config(twice)
    twice.write_text('rules = "cardavia"\nrules = "koikoi-japan"\n[bots]\na = "x"\n')
    with pytest.raises(TournamentError, match=r"line 2: rules is given twice"):
        load_config(twice)
