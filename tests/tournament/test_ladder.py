"""The ladder: ``tournament add`` on a played tournament folder, and ``--until-separated``, with real
subprocess bots.

Matches use the single-deal cardavia rules so that each tournament takes seconds. ``tests/bots/first_bot.py``
plays the first legal action; ``bots/greedy_bot.py`` and ``bots/random_bot.py --seed N`` are house bots. Every
run plays with ``-j 1`` and fixed seeds, so two runs of the same command record the same results.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.tournament.commitment import commit
from referee.tournament.config import TournamentConfig
from referee.tournament.schedule import Pairing, pair_seed
from tests.helpers import FAST, ROOT, cli, referee

FIRST = f"first={sys.executable} tests/bots/first_bot.py"
GREEDY = "greedy=bots/greedy_bot.py"
RANDOM = "random=bots/random_bot.py --seed 5"

pytestmark = pytest.mark.slow  # real tournaments and referee runs


@pytest.fixture(autouse=True)
def signing_key_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default signing key is made under this test's folder, not the user's data directory."""
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv("KOIKOI_SEED", raising=False)
    return home / "koikoi-referee" / "key"


def lines(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]


def results(folder: Path) -> list[dict[str, object]]:
    return [obj for obj in lines(folder) if "match_id" in obj]


def standings(folder: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads((folder / "standings.json").read_text())
    return doc


def rows(folder: Path) -> dict[str, dict[str, object]]:
    return {str(r["name"]): r for r in standings(folder)["standings"]}  # type: ignore[attr-defined]


def three(out: Path, *more: str) -> None:
    """A round-robin of first, greedy and random: 3 pairings of 2 pairs, seed 11."""
    referee("tournament", "-b", FIRST, "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "11", "-j", "1",
            "--no-html", "-o", out, *more)  # fmt: skip


def test_add_plays_only_the_new_pairings_and_refits_over_everything(tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    three(out)
    before = (out / "results.jsonl").read_bytes()
    old = results(out)
    assert len(old) == 12
    proc = referee("tournament", "add", out, "-b", f"last={sys.executable} tests/bots/first_bot.py", "-j", "1",
                   "--no-html")  # fmt: skip
    after = (out / "results.jsonl").read_bytes()
    assert after.startswith(before)  # the old lines byte for byte, the new ones appended
    new = results(out)[len(old) :]
    assert len(new) == 3 * 2 * 2  # last against each of the three, two pairs of two games
    assert all("last" in r["seats"] for r in new)  # type: ignore[operator]
    assert {str(r["match_id"])[:2] for r in new} == {"04", "05", "06"}
    assert sorted(int(r["index"]) for r in new) == list(range(12, 24))  # type: ignore[call-overload]
    # The step's own seed (the tournament seed and the step's secret salt) deals the new pairings: the published
    # tournament seed does not tell an entrant its deals.
    config = TournamentConfig.from_json(json.loads((out / "tournament.json").read_text())["config"])
    (stage,) = config.ladder
    assert stage.salt is not None and stage.seed(11) != 11
    for r in new:
        first, second = r["seats"]  # type: ignore[misc]
        pair = int(str(r["match_id"])[-4:-1])
        dealt = int(r["result"]["seed"])  # type: ignore[index]
        assert dealt == pair_seed(stage.seed(11), Pairing(0, first, second), pair)
        assert dealt != pair_seed(11, Pairing(0, first, second), pair)
    assert config.seed == 11 and [s.added for s in config.ladder] == [("last",)]
    published = standings(out)["ladder"]
    step = {"added": ["last"], "retired": [], "commitment": commit(stage.seed(11)), "salt": str(stage.salt)}
    assert published == [step]
    assert f"ladder step 1 seed commitment {commit(stage.seed(11))}" in proc.stdout
    table = rows(out)
    assert set(table) == {"first", "greedy", "random", "last"}
    assert table["last"]["games"] == 12 and table["first"]["games"] == 8 + 4
    assert table["greedy"]["games"] == 8 + 4 and table["last"]["elo"] is not None
    assert standings(out)["complete"] is True and standings(out)["matches"] == 24
    assert "last" in proc.stdout
    verify = referee("tournament", "verify", out)
    assert "24" in verify.stdout
    doc = json.loads((out / "standings.json").read_text())  # a step commitment that its seed does not open
    doc["ladder"][0]["commitment"] = commit(stage.seed(11) + 1)
    (out / "standings.json").write_text(json.dumps(doc))
    refused = referee("tournament", "verify", out, check=1)
    assert "ladder step 1: its seed does not open the published commitment" in refused.stdout + refused.stderr
    # nothing left: a resume plays nothing and changes nothing
    referee("tournament", "--resume", out, "-j", "1", "--no-html")
    assert (out / "results.jsonl").read_bytes() == after


def test_a_new_version_retires_the_old_one(tmp_path: Path) -> None:
    out = tmp_path / "retire"
    three(out)
    referee("tournament", "add", out, "-b", "random-2=bots/random_bot.py --seed 6", "--retire", "random", "-j", "1",
            "--no-html")  # fmt: skip
    new = results(out)[12:]
    assert len(new) == 2 * 2 * 2  # random-2 against first and greedy, not against random
    assert all("random" not in r["seats"] and "random-2" in r["seats"] for r in new)  # type: ignore[operator]
    doc = standings(out)
    assert doc["retired"] == ["random"]
    assert rows(out)["random"]["games"] == 8  # its games still count
    referee("tournament", "verify", out)
    # a second step: the retired bot plays no new pairing, the entrants of the first step do
    referee("tournament", "add", out, "-b", FIRST.replace("first=", "first-2="), "-j", "1", "--no-html")
    third = results(out)[20:]
    assert len(third) == 3 * 2 * 2
    assert {frozenset(r["seats"]) for r in third} == {  # type: ignore[arg-type]
        frozenset(("first", "first-2")), frozenset(("greedy", "first-2")), frozenset(("random-2", "first-2"))
    }
    referee("tournament", "verify", out)


def test_bad_input_is_a_one_line_error(tmp_path: Path) -> None:
    out = tmp_path / "bad"
    three(out)
    before = (out / "results.jsonl").read_bytes()
    description = (out / "tournament.json").read_bytes()
    cases = [
        (["tournament", "add", tmp_path / "nowhere", "-b", RANDOM], "not a tournament folder"),
        (["tournament", "add", out, "-b", "greedy=bots/greedy_bot.py"], "has a bot of that name"),
        (["tournament", "add", out, "-b", "new=bots/greedy_bot.py", "--retire", "nobody"], "--retire nobody"),
        (["tournament", "add", out], "name the entrants"),
        (["tournament", "add", out, "-b", "new=bots/greedy_bot.py", "--max-pairs", "3"], "--max-pairs"),
        (["tournament", "add", out, "-b", "new=bots/no_such_bot.py"], "new"),
    ]
    for args, message in cases:
        _, err = cli(*args, check=2)
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert (out / "results.jsonl").read_bytes() == before
    assert (out / "tournament.json").read_bytes() == description


SLOW_FIRST = r"""
import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "slow"}), flush=True)
    elif msg["type"] == "request":
        time.sleep(0.05)
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


def test_an_interrupted_add_continues_with_resume(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    three(out)
    slow = tmp_path / "slow_bot.py"
    slow.write_text(SLOW_FIRST)
    exe = Path(sys.executable).parent / "koikoi-referee"
    cmd = [str(exe), "tournament", "add", str(out), "-b", f"slow={sys.executable} {slow}", "-j", "1", "--no-html"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(results(out)) < 14:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 14 <= len(results(out)) < 24, "the kill should land mid-step"
    referee("tournament", "--resume", out, "-j", "1", "--no-html")
    new = {str(r["match_id"]) for r in results(out)[12:]}
    assert len(new) == 12 and all("slow" in m for m in new)  # each new match recorded once, interrupted ones afresh
    assert rows(out)["slow"]["games"] == 12 and standings(out)["complete"] is True
    referee("tournament", "verify", out)


def separated_run(out: Path) -> None:
    three(out, "--until-separated", "--max-pairs", "6")


def test_until_separated_stops_separated_or_at_the_budget_and_repeats(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    separated_run(one)
    doc = standings(one)["until_separated"]
    assert isinstance(doc, dict)
    extends = [obj["extend"] for obj in lines(one) if "extend" in obj]
    assert doc["added_pairs"] == len(extends) <= 6
    assert doc["separated"] is True or doc["added_pairs"] == 6
    assert doc["games"] == len(results(one)) == 12 + 2 * len(extends)
    assert all(c["los"] is None or c["los"] >= 0.95 for c in doc["couples"]) == doc["separated"]
    # only pairings of adjacent ranks get pairs; each extend names the pairing's next pair
    seen: dict[int, int] = {}
    for e in extends:
        assert e["pair"] == 2 + seen.get(e["pairing"], 0)
        seen[e["pairing"]] = seen.get(e["pairing"], 0) + 1
    referee("tournament", "verify", one)
    separated_run(two)  # the same seed and bots: the same pairs added, the same results
    assert [obj["extend"] for obj in lines(two) if "extend" in obj] == extends
    assert [r["result"]["scores"] for r in results(two)] == [r["result"]["scores"] for r in results(one)]  # type: ignore[index]
    assert standings(two)["until_separated"] == doc


def test_until_separated_bad_combinations(tmp_path: Path) -> None:
    base = ["tournament", "-b", "a=bots/greedy_bot.py", "-b", "b=bots/random_bot.py", *FAST, "--seed", "1"]
    for extra, message in [
        (["--until-separated", "--sprt", "0,20"], "choose one"),
        (["--max-pairs", "4"], "--max-pairs"),
        (["--until-separated", "--shard", "1/2"], "shards"),
    ]:
        _, err = cli(*base, *extra, "-o", tmp_path / "x", check=2)
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_a_ladder_step_rewrites_the_pages_with_the_new_bot_charted_from_its_step(tmp_path: Path) -> None:
    # the rating chart's checkpoints before the step know none of the new bot's pairings
    out = tmp_path / "pages"
    referee("tournament", "-b", GREEDY, "-b", RANDOM, *FAST, "--pairs", "2", "--seed", "4", "-j", "1", "-o", out)
    referee("tournament", "add", out, "-b", FIRST, "-j", "1")
    home = (out / "index.html").read_text()
    assert home.count("<polyline") == 3 and 'data-bot="first"' in home
    before = next(line for line in home.splitlines() if 'data-bot="greedy"' in line and "<polyline" in line)
    after = next(line for line in home.splitlines() if 'data-bot="first"' in line and "<polyline" in line)
    assert len(after.split('points="')[1].split()) < len(before.split('points="')[1].split())
    assert 'id="bot-history"' in (out / "bots" / "first.html").read_text()
    referee("tournament", "add", out, "--retire", "random", "-j", "1")  # a step that only retires
    assert "ok: " in referee("tournament", "verify", out).stdout
