"""Deal suites: ``deals generate`` writes them, ``tournament --deals`` plays them pair by pair, cycling, and a
tournament on a suite is reproducible and resumable without the suite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.engine import shuffled_deal
from referee.tournament.config import TournamentConfig, config_from_dict
from referee.tournament.schedule import build_schedule
from referee.tournament.suite import SuiteError, generate, parse_suite, sequence_seed, suite_lines
from tests.helpers import CLOCK, GREEDY, RANDOM, cli, referee

RANDOM_3 = RANDOM + " --seed 3"
pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

TWO_ROUNDS = ("--rules", "guide", "--rounds", "2", *CLOCK, "--sandbox", "none", "--no-html")


def tournament(*args: str | Path, cwd: Path) -> None:
    referee("tournament", *args, cwd=cwd)


def headers(folder: Path) -> dict[str, dict[str, object]]:
    """Each match's replay header, by match id."""
    out = {}
    for replay in sorted((folder / "replays").glob("*.jsonl")):
        header = json.loads(replay.read_text().splitlines()[0])
        out[str(header["match_id"])] = header
    return out


def outcomes(folder: Path) -> dict[str, object]:
    """Each match's result, by match id (the order of the results file depends on the workers), less the
    seats' measured statistics (decision times and memory differ from run to run)."""
    lines = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
    results = {x["match_id"]: x["result"] for x in lines if "match_id" in x}
    return {mid: {k: v for k, v in r.items() if k != "seat_stats"} for mid, r in results.items()}


def test_generate_is_a_function_of_its_seed_and_secret_without_one(tmp_path: Path) -> None:
    first = cli("deals", "generate", "--count", "3", "--seed", "11", "--length", "4").stdout
    assert first == cli("deals", "generate", "--count", "3", "--seed", "11", "--length", "4").stdout
    suite = parse_suite(first.splitlines(), "x")
    assert [len(s) for s in suite] == [4, 4, 4]
    assert suite[1][2] == shuffled_deal(sequence_seed(11, 1), 2)
    one, other = (cli("deals", "generate", "-n", "2").stdout for _ in range(2))
    assert one != other  # 64 secret bits each
    cli("deals", "generate", "-n", "5", "-r", "koikoi-japan", "-o", tmp_path / "s.jsonl")
    assert [len(s) for s in parse_suite((tmp_path / "s.jsonl").read_text().splitlines(), "s")] == [10] * 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no deal sequence"),
        ("nope\n", "line 1: not a JSON line"),
        ("[]\n", "line 1: expected a deal object or an array"),
        ('[{"hands": 1}]\n', "line 1: a deal has exactly the keys"),
    ],
)
def test_a_bad_suite_is_refused_with_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(SuiteError, match=message):
        parse_suite(text.splitlines(), "bad")
    err = cli("tournament", "--bot", f"a={GREEDY}", "--bot", "b=x", "--deals", path, check=2).stderr
    assert message in err and len(err.splitlines()) == 1


def test_a_repeated_deal_within_a_sequence_is_refused() -> None:
    suite, _ = generate(1, 2, seed=1)
    twice = json.dumps([suite[0][0].to_json(), suite[0][0].to_json()])
    with pytest.raises(SuiteError, match="repeats within the sequence"):
        parse_suite([twice], "s")


def test_each_pair_opens_with_the_next_sequence_cycling_and_processes_never_repeat_one() -> None:
    suite, _ = generate(2, 3, seed=5)
    config = config_from_dict({"bots": {"a": "a.py", "b": "b.py", "c": "c.py"}, "pairs": 5, "seed": 1})
    config = TournamentConfig(**{**config.__dict__, "suite": suite})
    schedule = build_schedule(config)
    assert [(m.pair, m.suite, m.cycle) for m in schedule if m.pairing == 0 and m.game == "a"] == [
        (0, 0, 0), (1, 1, 0), (2, 0, 1), (3, 1, 1), (4, 0, 2),
    ]  # fmt: skip
    seen: dict[tuple[str, str], set[int]] = {}
    for m in schedule:
        for name in m.seats:
            played = seen.setdefault((name, m.lot), set())
            assert m.suite not in played  # a process key never meets a sequence twice
            played.add(m.suite)  # type: ignore[arg-type]
    assert TournamentConfig.from_json(config.to_json()) == config


def test_a_suite_tournament_is_reproducible_and_resumes_without_the_file(tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.jsonl"
    suite, _ = generate(2, 3, seed=21)
    suite_file.write_text(suite_lines(suite))
    bots = ("--bot", f"greedy={GREEDY}", "--bot", f"random={RANDOM_3}")
    for name, seed in (("one", "1"), ("two", "1"), ("three", "2")):
        # one job: the seeded random bot's choices depend on the order its process plays the matches in
        tournament(*bots, *TWO_ROUNDS, "--pairs", "3", "--deals", suite_file, "--seed", seed, "-j", "1",
                   "-o", tmp_path / name, cwd=tmp_path)  # fmt: skip
    one, two, three = (headers(tmp_path / n) for n in ("one", "two", "three"))
    assert len(one) == 6
    for mid, header in one.items():
        pair = int(mid[-4:-1])
        assert header["deals"] == [d.to_json() for d in suite[pair % 2]]  # pair 2 cycles back to sequence 0
        assert three[mid]["deals"] == header["deals"]  # another seed: the same opening deals
    assert outcomes(tmp_path / "one") == outcomes(tmp_path / "two")
    assert {m: (h["seed"], h["deals"]) for m, h in two.items()} == {m: (h["seed"], h["deals"]) for m, h in one.items()}
    assert json.loads((tmp_path / "one" / "tournament.json").read_text())["config"]["deals"] == [
        [d.to_json() for d in seq] for seq in suite
    ]

    results = tmp_path / "one" / "results.jsonl"
    results.write_text("".join(results.read_text().splitlines(keepends=True)[:2]))  # stopped after two matches
    suite_file.unlink()
    tournament("--resume", tmp_path / "one", "--no-html", cwd=tmp_path)
    resumed = headers(tmp_path / "one")
    assert {m: h["deals"] for m, h in resumed.items()} == {m: h["deals"] for m, h in one.items()}
    assert outcomes(tmp_path / "one").keys() == outcomes(tmp_path / "two").keys()


def test_a_suite_played_in_parallel_by_three_bots_is_warned_of(tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.jsonl"
    suite_file.write_text(suite_lines(generate(1, 1, seed=4)[0]))
    three = ("--bot", f"greedy={GREEDY}", "--bot", f"random={RANDOM_3}", "--bot", f"again={GREEDY}")
    warned = "one bot may play the same deal sequence in two pairings at once"
    run = referee("tournament", *three, *TWO_ROUNDS, "--pairs", "1", "--deals", suite_file, "--seed", "1", "-j", "2",
                  "--no-html", "-o", tmp_path / "j2", cwd=tmp_path)  # fmt: skip
    assert warned in run.stderr
    run = referee("tournament", *three, *TWO_ROUNDS, "--pairs", "1", "--deals", suite_file, "--seed", "1", "-j", "1",
                  "--no-html", "-o", tmp_path / "j1", cwd=tmp_path)  # fmt: skip
    assert warned not in run.stderr
