"""The tournament report: standings with joint ratings and per-bot statistics, the home page and the match
pages, from a real tournament (greedy under two names, and random), and the home page in headless Chromium."""

from __future__ import annotations

import base64
import csv
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.engine import PRESETS
from referee.match import MatchConfig, run_match
from referee.records import Failure, Forfeit, MatchResult, SeatStats, Termination, bucket_upper_ms, time_bucket
from referee.replay.html import write_html
from referee.tournament import BotSpec, Format, TournamentConfig
from referee.tournament.records import BotStats, Record
from referee.tournament.schedule import build_schedule
from referee.tournament.standings import Tally, compute
from tests.helpers import FAST, ROOT, referee

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

HELLO = "HelloGreedyX"  # the name both copies of greedy give in hello: never the name the tournament shows
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A finished round robin: greedy as candidate and as baseline, and random; 3 pairs per pairing, one match at a
    time: the random bot's choices continue from match to match in its process, so its games, and where it ranks,
    depend on which matches each process played, which is fixed only at ``-j 1``."""
    out = tmp_path_factory.mktemp("report") / "t"
    greedy = f"bots/greedy_bot.py --name {HELLO}"
    proc = referee("tournament", "-b", f"candidate={greedy}", "-b", f"baseline={greedy}",
                   "-b", "random=bots/random_bot.py --name HelloRandomX --seed 1", *FAST, "--pairs", "3", "--seed", "7",
                   "-j", "1", "-o", out)  # fmt: skip
    yield out, proc.stdout


def test_two_copies_of_one_bot_are_told_apart_everywhere(site: tuple[Path, str]) -> None:
    out, stdout = site
    doc = json.loads((out / "standings.json").read_text())
    rows = {r["name"]: r for r in doc["standings"]}
    assert set(rows) == {"candidate", "baseline", "random"} and doc["matches"] == 18
    ranks = [r["rank"] for r in doc["standings"]]
    # the copies of greedy mirror each other's games, so they share a rank when random fared alike against both
    top = doc["standings"][:2]
    tied = len({2 * r["wins"] + r["draws"] for r in top}) == 1  # the same points: the same rating and pair score
    assert ranks == ([1, 1, 3] if tied else [1, 2, 3]), doc["standings"]
    assert doc["standings"][2]["name"] == "random"
    elos = [r["elo"] for r in doc["standings"]]
    assert elos == sorted(elos, reverse=True)  # ranked by the joint rating, which every bot has (12 games)
    assert abs(sum(elos)) < 1  # ratings relative to the field's mean
    for r in doc["standings"]:
        assert r["games"] == 12 and r["elo_error"] > 0 and r["elo_note"] is None
        assert r["decisions"] > 0 and 0 < r["mean_ms"] <= r["max_ms"] and r["p95_ms"] <= r["max_ms"]
        assert r["min_bank_ms"] is not None and 0 <= r["min_bank_ms"] <= 20000
        assert r["forfeits"] == {}
    assert [0 <= r["los"] <= 1 for r in doc["standings"][:2]] == [True, True] and doc["standings"][2]["los"] is None
    assert sum(r["decisions"] for r in rows.values()) == sum(
        json.loads(line)["result"]["decisions"] for line in (out / "results.jsonl").read_text().splitlines()
    )
    assert doc["ratings"]["prior_draws_per_pairing"] == 2
    table = list(csv.DictReader((out / "standings.csv").read_text().splitlines()))
    assert [r["name"] for r in table] == [r["name"] for r in doc["standings"]]
    assert {"rank", "elo", "elo_error", "los", "p95_ms", "peak_memory_mb", "forfeits"} <= set(table[0])
    head = next(line for line in stdout.splitlines() if line.startswith("#"))
    assert "Elo (95%)" in head and "LOS next" in head
    assert re.search(r"^candidate +\d+ +[\d.]+ +[\d.]+", stdout, re.M)  # the statistics table
    for text in (json.dumps(doc), (out / "standings.csv").read_text(), stdout, (out / "matches.csv").read_text()):
        assert HELLO not in text and "HelloRandomX" not in text

    home = (out / "index.html").read_text()
    assert HELLO not in home
    for name in ("candidate", "baseline", "random"):
        assert f'<tr data-bot="{name}">' in home and f'<polyline data-bot="{name}"' in home
    lines = sorted((json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()), key=lambda r: r["index"])
    ids = [r["match_id"] for r in lines]  # previous and next follow the schedule
    assert sorted(p.stem for p in (out / "replays").glob("*.html")) == sorted(ids) and len(ids) == 18
    for k, line in enumerate(lines):
        page = out / "replays" / f"{line['match_id']}.html"
        text = page.read_text()
        seats = line["seats"]
        assert f'"names":{json.dumps(seats, separators=(",", ":"))}' in text
        assert HELLO not in text and "HelloRandomX" not in text
        assert 'href="../index.html"' in text
        links = re.findall(r'href="([^"]+)\.html"', text.split('<nav id="links">', 1)[1].split("</nav>", 1)[0])
        assert links == ["../index", *ids[max(0, k - 1) : k], *ids[k + 1 : k + 2]]
        assert f'href="replays/{page.name}"' in home  # the home page links every match page
    # the replay files record the tournament's names; the terminal replay and a single page show them
    replay = out / "replays" / f"{ids[0]}.jsonl"
    shown = referee("replay", "show", replay).stdout
    assert "seat 1: candidate (hello: HelloGreedyX 1.0)" in shown
    assert all("(hello: " in line for line in shown.splitlines() if HELLO in line)
    single = out / "single.html"
    referee("replay", "html", replay, "-o", single)
    assert HELLO not in single.read_text() and "candidate" in single.read_text()


def test_a_bot_that_never_says_hello_still_gets_a_match_page(tmp_path: Path) -> None:
    mute = tmp_path / "mute_bot.py"
    mute.write_text("import sys\nsys.stderr.write('cannot start: no model file\\n')\nsys.exit(3)\n")
    out = tmp_path / "t"
    args = ["-b", f"mute={sys.executable} {mute}", "-b", "random=bots/random_bot.py", *FAST, "--pairs", "1",
            "--seed", "3", "-j", "1", "--sandbox", "none", "-o", out]  # fmt: skip
    refused = referee("tournament", *args, check=2).stderr  # the preflight names it before any match
    assert "bot 'mute' does not start and answer hello" in refused and "--forfeit-broken" in refused
    assert len(refused.strip().splitlines()) == 1 and not out.exists()
    referee("tournament", *args, "--forfeit-broken")
    doc = json.loads((out / "standings.json").read_text())
    mute_row = next(r for r in doc["standings"] if r["name"] == "mute")
    assert mute_row["forfeits"] == {"crash": 2} and mute_row["decisions"] == 0
    assert mute_row["elo"] is None and mute_row["elo_note"] == "too few games"
    for page in sorted((out / "replays").glob("*.html")):
        text = page.read_text()
        assert "mute forfeits: crash" in text and "random wins" in text
        assert 'href="../index.html"' in text
    home = (out / "index.html").read_text()
    assert "crash 2" in home and "too few games" in home
    assert re.search(r'href="logs/[^"]+\.mute\.log"', home)  # its stderr log is linked


def _record(spec: object, winner: int | None) -> Record:
    from referee.tournament.schedule import MatchSpec

    assert isinstance(spec, MatchSpec)
    stats = (SeatStats.of_times([1.0, 3.0], 500.0, 1 << 20), SeatStats.of_times([2.0], 400.0))
    result = MatchResult(spec.match_id, winner, (1, 0), 1, Termination.ROUNDS, None, spec.seats, spec.seed, 3,
                         seat_stats=stats)  # fmt: skip
    return Record(spec, result)


def test_the_sprt_and_pentanomial_count_whole_pairs_only() -> None:
    cfg = TournamentConfig(bots=(BotSpec("a", "x"), BotSpec("b", "y")), rules=PRESETS["cardavia"],
                           format=Format.ROUND_ROBIN, pairs=3)  # fmt: skip
    a0, b0, a1, _b1, a2, _b2 = build_schedule(cfg)
    recs = [_record(a0, 0), _record(b0, 1), _record(a1, 0), _record(a2, None)]  # pairs 1 and 2 are half played
    tally = Tally(cfg)
    for r in recs:
        tally.add(r)
    assert tally.prows[0].pentanomial == [0, 0, 0, 0, 1]  # only pair 0: "a" won both games
    from referee.tournament.config import Sprt

    st = compute(cfg, recs, Sprt(0, 10))
    assert st.sprt is not None and st.sprt.pairs == 1
    rows = {b.name: b for b in st.bots}
    assert rows["a"].games == 2 and rows["a"].pairs == 1  # the open pairs' one game counts nowhere
    assert (rows["a"].wins, rows["b"].losses) == (2, 2)
    assert st.open_pairs == 2 and st.counted == 2 and st.matches == 4
    assert rows["a"].stats.decisions == 2 + 1  # seat stats follow the seats (a is seat 2 in b0)


def test_seat_stats_round_trip_and_old_results_still_read() -> None:
    stats = SeatStats.of_times([0.2, 7.5, 7.4, 120.0], 1234.5678, 5 << 20)
    assert SeatStats.from_json(json.loads(json.dumps(stats.to_json()))) == stats
    result = MatchResult("m", 0, (3, 0), 1, Termination.FORFEIT, Forfeit(1, Failure.TIMEOUT, "slow"), ("a", "b"),
                         5, 4, seat_stats=(stats, SeatStats()))  # fmt: skip
    back = MatchResult.from_json(json.loads(json.dumps(result.to_json())))
    assert back.seat_stats == (stats, SeatStats())
    old = result.to_json()
    del old["seat_stats"]
    assert MatchResult.from_json(old).seat_stats == ()
    with pytest.raises(ValueError, match="seat_stats"):
        MatchResult.from_json({**old, "seat_stats": [{}]})


def test_p95_from_the_histogram_is_within_one_bucket() -> None:
    times = [float(t) for t in range(1, 201)]  # 1..200 ms: the true 95th percentile is 190 ms
    total = BotStats()
    for chunk in (times[:77], times[77:]):  # summaries of two matches merge by adding
        total.add(SeatStats.of_times(chunk, None))
    p95 = total.p95_ms
    assert p95 is not None and 190 <= p95 <= 190 * 2**0.25 and total.max_ms == 200
    assert all(bucket_upper_ms(time_bucket(t)) >= t > bucket_upper_ms(time_bucket(t) - 1) for t in times)


def test_a_time_falls_in_the_first_bucket_that_holds_it() -> None:
    edges = [bucket_upper_ms(k) for k in range(1, 140)]  # past the table of edges looked up too
    for t in [0.0, 0.01, 0.05] + [e * f for e in edges for f in (1 - 1e-12, 1.0, 1 + 1e-12, 1.1)]:
        k = time_bucket(t)
        if t <= bucket_upper_ms(126):  # exact where the edges are looked up
            assert t <= bucket_upper_ms(k) and (k == 0 or t > bucket_upper_ms(k - 1)), t
        else:  # beyond them (days), by the logarithm: right up to its rounding
            assert bucket_upper_ms(k - 1) * (1 - 1e-9) < t <= bucket_upper_ms(k) * (1 + 1e-9), t


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no headless Chromium at /usr/bin/chromium")
def test_the_leaderboard_page_in_headless_chromium(site: tuple[Path, str], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    out, _ = site
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requests: list[str] = []
        errors: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((out / "index.html").as_uri())
        shown = page.evaluate("""() => ({
          board: Array.from(document.querySelectorAll("#leaderboard tbody tr")).map(
            (tr) => Array.from(tr.cells).map((c) => c.textContent)),
          cross: document.querySelectorAll("#crosstable a").length,
          lines: document.querySelectorAll("#history polyline").length,
          box: document.querySelector("#history").getBoundingClientRect().width,
          stats: document.querySelectorAll("#stats tbody tr").length,
        })""")
        doc = json.loads((out / "standings.json").read_text())
        assert [row[1] for row in shown["board"]] == [r["name"] for r in doc["standings"]]
        ranks = [r["rank"] for r in doc["standings"]]
        assert [row[0] for row in shown["board"]] == [f"{k}=" if ranks.count(k) > 1 else str(k) for k in ranks]
        assert all(re.fullmatch(r"[+-]\d+ ± \d+", row[7]) for row in shown["board"])
        assert shown["cross"] == 6 and shown["lines"] == 3 and shown["box"] > 300 and shown["stats"] == 3
        page.click("#crosstable a >> nth=0")  # a crosstable cell leads to its pairing's matches
        assert re.search(r"#pairing-", page.url)
        shot = tmp_path / "leaderboard.png"
        page.screenshot(path=str(shot), full_page=True)
        blank = browser.new_page()  # the home page's policy loads no image: count colours on a blank page
        pixels = blank.evaluate(
            """async (src) => {
          const img = new Image(); img.src = src; await img.decode();
          const c = document.createElement("canvas"); c.width = img.width; c.height = img.height;
          const g = c.getContext("2d"); g.drawImage(img, 0, 0);
          const d = g.getImageData(0, 0, c.width, c.height).data; const seen = new Set();
          for (let i = 0; i < d.length; i += 4 * 97) seen.add(d[i] + "," + d[i + 1] + "," + d[i + 2]);
          return seen.size;
        }""",
            "data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode(),
        )
        assert shot.stat().st_size > 10_000 and pixels > 20  # many colours: text, tables and the chart drawn
        assert errors == [] and all(u.startswith("file://") for u in requests), requests
        browser.close()


def test_a_match_given_names_records_them_for_the_viewer(tmp_path: Path) -> None:
    replay = tmp_path / "m.jsonl"
    greedy = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'} --name {HELLO}"
    config = MatchConfig(rules=PRESETS["cardavia"], seed=5, replay_path=replay, names=("alpha", "beta"))
    result = run_match((greedy, greedy), config)
    assert result.names == (HELLO, HELLO)  # the result keeps what the bots said
    facts = write_html(replay, tmp_path / "m.html")
    assert facts["names"] == ["alpha", "beta"]
    assert HELLO not in (tmp_path / "m.html").read_text()
