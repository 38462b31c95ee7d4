"""Tournament building blocks without bots: config files, schedule, shards, statistics, SPRT, progress log."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from referee.engine import PRESETS
from referee.records import Failure, Forfeit
from referee.tournament import (
    Format,
    Record,
    RunOptions,
    Sprt,
    Store,
    TournamentConfig,
    TournamentError,
    build_schedule,
    compute,
    config_from_dict,
    elo_of_score,
    estimate,
    load_config,
    pairings,
    parse_shard,
    shard_of,
    sprt,
    sprt_llr,
    work_units,
)
from referee.tournament.records import COLUMN_OF, Column, Redeal
from referee.tournament.schedule import redealt
from referee.tournament.stats import PENTANOMIAL_SCORES, _mle, score_of_elo
from tests.helpers import ROOT, finished, make_config, referee

# -- config --------------------------------------------------------------------------------------------------


def test_example_tournament_file_loads() -> None:
    cfg = load_config(ROOT / "examples" / "tournament.toml")
    assert cfg.rules.name == "cardavia"
    assert [b.name for b in cfg.bots][:2] == ["greedy", "random"]
    assert cfg.pairs == 20 and cfg.seed_drawn  # a shipped example fixes no seed: bots could compute the deals
    assert load_config(str(ROOT / "examples" / "tournament.toml")).pairs == 20  # a path as a str too


def test_example_tournament_file_plays_from_any_folder(tmp_path: Path) -> None:
    # its bot commands are relative to the file's folder: the README's command works from the repository's root
    # and from examples/ alike
    for cwd, config in ((ROOT, "examples/tournament.toml"), (ROOT / "examples", "tournament.toml")):
        out = tmp_path / cwd.name
        referee("tournament", "--config", config, "-n", "1", "-j", "1", "--no-html", "-o", out, "--seed", "1", cwd=cwd)
        results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        assert len(results) == 6 and all(r["result"]["forfeit"] is None for r in results)


def test_shipped_examples_fix_no_seed() -> None:
    workflow = (ROOT / "examples" / "ci-workflow.yml").read_text()
    assert "--seed " not in workflow and "run_id" not in workflow  # nothing a bot could read or predict
    assert workflow.count("--seed-file") == 2 and "secrets.randbits" in workflow
    toml = (ROOT / "examples" / "tournament.toml").read_text()
    assert not [line for line in toml.splitlines() if line.strip().startswith("seed")]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"bots": {"a": "x"}}, "at least two bots"),
        ({"bots": {"a": "x", "b": "y"}, "colour": 1}, "unknown key"),
        ({"bots": {"a": "x", "b": "y"}, "format": "swiss"}, "format must be"),
        ({"bots": {"a": "x", "b": "y"}, "rules": "nope"}, "neither a preset"),
        ({"bots": {"a": "x", "b": "y"}, "pairs": 0}, "pairs"),
        ({"bots": {"a": "x", "b": "y"}, "time": {"move": 5}}, "[time]"),
        ({"bots": {"a": "x", "b": "y"}, "time": {"move_ms": 0}}, "time move_ms: 0 is outside 1..3600000"),
        ({"bots": {"a": "x", "b": "y"}, "time": {"startup_ms": 0}}, "time startup_ms: 0 is outside 1..3600000"),
        ({"bots": {"a b": "x", "c": "y"}}, "bot name"),
        ({"bots": {"a": "x", "b": "y"}, "gauntlet": "a"}, "format is not gauntlet"),
        ({"bots": {"a": "x", "b": "y"}, "format": "gauntlet", "gauntlet": "z"}, "not one of the bots"),
    ],
)
def test_bad_tournament_tables_are_refused(table: dict[str, object], message: str) -> None:
    with pytest.raises(TournamentError, match=message.replace("[", r"\[")):
        config_from_dict(table)


def test_fingerprint_depends_on_what_decides_the_games() -> None:
    a = make_config()
    assert a.fingerprint() == make_config().fingerprint()
    assert a.fingerprint() != make_config(seed=2).fingerprint()
    assert a.fingerprint() != make_config(pairs=5).fingerprint()
    assert TournamentConfig.from_json(json.loads(json.dumps(a.to_json()))).fingerprint() == a.fingerprint()


def test_sprt_and_shard_options_parse() -> None:
    assert Sprt.parse("0,10") == Sprt(0, 10, 0.05, 0.05)
    assert Sprt.parse("-5, 5, 0.1, 0.2") == Sprt(-5, 5, 0.1, 0.2)
    for bad in ("10,0", "0", "a,b", "0,10,0.7,0.05"):
        with pytest.raises(TournamentError):
            Sprt.parse(bad)
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "x"):
        with pytest.raises(TournamentError):
            parse_shard(bad)


# -- schedule ------------------------------------------------------------------------------------------------


def test_round_robin_and_gauntlet_pairings() -> None:
    rr = pairings(make_config(4))
    assert [(p.first, p.second) for p in rr] == [
        ("bot0", "bot1"), ("bot0", "bot2"), ("bot0", "bot3"),
        ("bot1", "bot2"), ("bot1", "bot3"), ("bot2", "bot3"),
    ]  # fmt: skip
    g = pairings(make_config(4, fmt=Format.GAUNTLET, gauntlet="bot2"))
    assert [(p.first, p.second) for p in g] == [("bot2", "bot0"), ("bot2", "bot1"), ("bot2", "bot3")]


def test_every_deal_pair_swaps_seats_on_one_seed_and_dealer() -> None:
    cfg = make_config(3, pairs=5)
    sched = build_schedule(cfg)
    assert len(sched) == 3 * 5 * 2
    assert len({m.match_id for m in sched}) == len(sched)
    assert [m.index for m in sched] == list(range(len(sched)))
    for a, b in zip(sched[0::2], sched[1::2], strict=True):
        assert (a.game, b.game) == ("a", "b")
        assert (a.pairing, a.pair) == (b.pairing, b.pair)
        assert a.seats == b.seats[::-1]
        assert a.seed == b.seed and a.first_dealer == b.first_dealer
    assert len({m.seed for m in sched}) == 15  # distinct deals for distinct pairs
    assert {m.first_dealer for m in sched} == {0, 1}  # cardavia draws the first dealer


def test_pair_seeds_do_not_depend_on_bot_order_or_other_bots() -> None:
    def seeds(cfg: TournamentConfig) -> dict[tuple[frozenset[str], int], int]:
        return {(frozenset(m.seats), m.pair): m.seed for m in build_schedule(cfg)}

    base = seeds(make_config(3))
    reordered = TournamentConfig(bots=tuple(reversed(make_config(3).bots)), rules=PRESETS["cardavia"], pairs=4)
    assert seeds(reordered) == base
    gauntlet = seeds(make_config(3, fmt=Format.GAUNTLET, gauntlet="bot1"))
    assert gauntlet and all(base[k] == v for k, v in gauntlet.items())


def test_shards_partition_the_schedule_and_keep_pairs_together() -> None:
    sched = build_schedule(make_config(3, pairs=7))
    shards = [shard_of(sched, (k, 4)) for k in range(1, 5)]
    ids = [m.match_id for s in shards for m in s]
    assert sorted(ids) == sorted(m.match_id for m in sched)
    for s in shards:
        keys = {}
        for m in s:
            keys.setdefault((m.pairing, m.pair), []).append(m.game)
        assert all(sorted(g) == ["a", "b"] for g in keys.values())
    assert max(map(len, shards)) - min(map(len, shards)) <= 2


def test_work_units_hold_one_pairing_and_cover_everything() -> None:
    sched = build_schedule(make_config(3, pairs=9))
    for jobs in (1, 2, 8):
        units = work_units(sched, jobs)
        assert sorted(m.index for u in units for m in u) == list(range(len(sched)))
        assert all(len({m.pairing for m in u}) == 1 for u in units)
    assert len(work_units(sched, 1)) == 3  # one unit per pairing: two bot processes for all its matches
    assert len(work_units(sched, 2)) > 3


# -- statistics ----------------------------------------------------------------------------------------------


def test_elo_of_score() -> None:
    assert elo_of_score(0.5) == 0
    assert elo_of_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert elo_of_score(1.0) == math.inf and elo_of_score(0.0) == -math.inf
    assert score_of_elo(elo_of_score(0.3)) == pytest.approx(0.3)


def test_estimate_interval() -> None:
    est = estimate([1.0, 0.5, 0.5, 0.0] * 25)
    assert est is not None
    assert est.score == 0.5 and est.samples == 100
    assert est.low == pytest.approx(0.5 - 1.96 * math.sqrt(0.125 / 100), abs=1e-3)
    assert est.high - est.score == pytest.approx(est.score - est.low)
    assert est.elo == 0 and est.elo_error > 0
    assert estimate([]) is None


@pytest.mark.parametrize("s", [0.3, 0.5, 0.55, 0.8])
def test_mle_meets_the_constraint(s: float) -> None:
    probs = [0.1, 0.2, 0.3, 0.25, 0.15]
    q = _mle(probs, PENTANOMIAL_SCORES, s)
    assert sum(q) == pytest.approx(1.0)
    assert sum(p * a for p, a in zip(q, PENTANOMIAL_SCORES, strict=True)) == pytest.approx(s, abs=1e-9)
    assert all(v > 0 for v in q)


def test_sprt_decides_each_way() -> None:
    assert sprt_llr([0, 0, 0, 0, 0], 0, 10) == 0
    strong = [0, 2, 10, 30, 40]  # pair scores mostly won
    weak = list(reversed(strong))
    even = [5, 20, 50, 20, 5]
    assert sprt(strong, 0, 50, 0.05, 0.05).state.value == "H1"
    assert sprt(weak, 0, 50, 0.05, 0.05).state.value == "H0"
    r = sprt(even, 0, 50, 0.05, 0.05)
    assert r.lower == pytest.approx(math.log(0.05 / 0.95)) and r.upper == pytest.approx(math.log(0.95 / 0.05))
    assert r.llr < 0  # an even result speaks for H0: elo 0
    assert sprt_llr(strong, 0, 50) > sprt_llr([*strong[:-1], 20], 0, 50)


# -- progress log and standings ------------------------------------------------------------------------------


def test_store_survives_a_torn_line_and_counts_each_match_once(tmp_path: Path) -> None:
    cfg = make_config(2, pairs=3)
    store = Store.create(tmp_path, cfg, RunOptions())
    sched = list(store.schedule.values())
    store.append(finished(sched[0], 1))
    store.append(finished(sched[1], 2, Forfeit(0, Failure.TIMEOUT, "slow")))
    store.close()
    log = tmp_path / "results.jsonl"
    line0 = log.read_text().splitlines()[0]
    with open(log, "a") as f:
        f.write(line0 + "\n")  # a duplicate
        f.write('{"match_id": "' + sched[2].match_id + '", "res')  # torn by a kill mid-write
    again = Store.open(tmp_path)
    assert set(again.load_records()) == {sched[0].match_id, sched[1].match_id}
    assert any("twice" in w for w in again.warnings) and any("incomplete" in w for w in again.warnings)
    assert [m.match_id for m in again.pending()] == [m.match_id for m in sched[2:]]
    assert log.read_text().endswith("\n")  # the torn tail is cut off, so appends stay line-aligned
    again.append(finished(sched[2], None))
    again.close()
    assert len(Store.open(tmp_path).load_records()) == 3
    with pytest.raises(TournamentError, match="already holds"):
        Store.create(tmp_path, cfg, RunOptions())


def test_an_output_folder_that_cannot_be_written_is_a_tournament_error(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(TournamentError, match="cannot write the tournament folder"):
        Store.create(a_file, make_config(2, pairs=1), RunOptions())
    Store.create(tmp_path / "t", make_config(2, pairs=1), RunOptions()).close()
    (tmp_path / "t" / "results.jsonl").unlink()
    (tmp_path / "t" / "results.jsonl").mkdir()
    with pytest.raises(TournamentError, match=r"results\.jsonl: cannot read"):
        Store.open(tmp_path / "t")


def test_standings_count_points_failures_and_pairs(tmp_path: Path) -> None:
    cfg = make_config(2, pairs=2)
    store = Store.create(tmp_path, cfg, RunOptions())
    a0, b0, a1, b1 = store.schedule.values()
    recs = [
        store.append(finished(a0, 1)),  # bot0 (seat 1) wins
        store.append(finished(b0, 1)),  # bot1 (seat 1) wins
        store.append(finished(a1, None)),  # draw
        store.append(finished(b1, 1, Forfeit(1, Failure.CRASH, "exit 1"))),  # bot0 crashed
    ]
    st = compute(cfg, recs, Sprt(0, 10))
    rows = {b.name: b for b in st.bots}
    assert (rows["bot1"].wins, rows["bot1"].draws, rows["bot1"].losses, rows["bot1"].points) == (2, 1, 1, 2.5)
    failures = rows["bot0"].failures
    assert [failures[c] for c in (Column.CRASHES, Column.TIMEOUTS, Column.INVALID, Column.ILLEGAL)] == [1, 0, 0, 0]
    assert st.bots[0].name == "bot1"
    assert st.pairings[0].pentanomial == [0, 1, 1, 0, 0]  # bot0's pair points 0.5 and 1
    assert [p.first_points for p in st.pairs] == [1.0, 0.5]
    assert st.sprt is not None and st.sprt.pairs == 2


def test_a_redealt_pair_gets_one_new_deal_for_both_games() -> None:
    cfg = make_config(2, pairs=2)
    a, b = build_schedule(cfg)[2:4]
    new_a, new_b = redealt(cfg, a, 1), redealt(cfg, b, 1)
    assert new_a.seed == new_b.seed != a.seed and new_a.first_dealer == new_b.first_dealer
    assert redealt(cfg, a, 2).seed not in (a.seed, new_a.seed) and redealt(cfg, a, 0) == a
    assert (new_a.match_id, new_a.seats, new_a.deal) == (a.match_id, a.seats, 1)


def test_result_lines_round_trip_and_name_what_is_wrong() -> None:
    spec = build_schedule(make_config(2, pairs=1))[1]
    rec = finished(spec, 2, Forfeit(0, Failure.INVALID_MESSAGE, "wrong id"))
    by_id = {spec.match_id: spec}
    line = json.loads(json.dumps(rec.to_json()))
    assert line["result"]["seed"] == str(spec.seed)  # a string: JavaScript readers round big integers
    assert Record.from_json(line, by_id) == rec and rec.offender == (spec.seats[0], Failure.INVALID_MESSAGE)
    line["result"]["seed"] = spec.seed  # an integer seed (older files) reads the same
    assert Record.from_json(line, by_id) == rec
    with pytest.raises(ValueError, match="another match or deal"):
        Record.from_json({**line, "result": {**line["result"], "seed": spec.seed + 1}}, by_id)
    assert Redeal.from_json(Redeal(0, 3, 2).to_json()) == Redeal(0, 3, 2)


def test_every_failure_has_one_standings_column() -> None:
    assert set(COLUMN_OF) == set(Failure)
    assert COLUMN_OF[Failure.INVALID_MESSAGE] is Column.INVALID and COLUMN_OF[Failure.ILLEGAL_ACTION] is Column.ILLEGAL


def test_signed_results_chain_and_an_interrupted_pair_is_redealt(tmp_path: Path) -> None:
    cfg, key = make_config(2, pairs=2), b"k" * 32
    store = Store.create(tmp_path, cfg, RunOptions(), key)
    a0, b0, a1, b1 = store.schedule.values()
    store.append(finished(a0, 1))
    store.append(finished(b0, 2))
    store.append(finished(a1, 1))
    (tmp_path / "replays" / f"{b1.match_id}.jsonl").write_text('{"type":"header"}\n')  # b1 started, unrecorded
    (tmp_path / "replays" / f"{a1.match_id}.jsonl").write_text('{"type":"header"}\n')
    store.close()
    again = Store.open(tmp_path, key=key)
    assert [m.match_id for m in again.pending()] == [a1.match_id, b1.match_id]  # a1's old deal no longer counts
    assert again.spec(a1.match_id).deal == again.spec(b1.match_id).deal == 1
    assert (tmp_path / "replays" / f"{b1.match_id}.interrupted-1.jsonl").exists()
    again.append(finished(again.spec(a1.match_id), 1))
    again.close()
    reread = Store.open_readonly(tmp_path, key)
    assert set(reread.load_records()) == {a0.match_id, b0.match_id, a1.match_id} and reread.redeals == {(0, 1): 1}
    with pytest.raises(TournamentError, match="signature does not match"):
        Store.open_readonly(tmp_path, b"x" * 32)
