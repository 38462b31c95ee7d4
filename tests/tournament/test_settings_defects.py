"""Small defects an organiser met: merging with a shard missing, the merged logs, ``replay verify`` on bad input,
and the house bots shipped with the package (``koikoi-referee bots``, the wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import FAST, GREEDY, RANDOM, ROOT, cli, referee

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

PLAIN = (*FAST, "--sandbox", "none", "--no-html")  # an unsandboxed run without pages


def test_merge_refuses_a_missing_shard_and_keeps_the_logs(tmp_path: Path) -> None:
    (tmp_path / "seed").write_text("77\n")
    bots = ("--bot", f"g={GREEDY}", "--bot", f"r={RANDOM}")
    for k in (1, 2, 3):
        referee("tournament", *bots, *PLAIN, "--pairs", "3", "--seed-file", "seed", "--shard", f"{k}/3", "-o", f"s{k}",
            cwd=tmp_path)  # fmt: skip
    shards = [tmp_path / f"s{k}" for k in (1, 2, 3)]
    _, err = cli("tournament", "merge", shards[0], shards[2], "-o", tmp_path / "m", check=2)
    assert err.startswith("koikoi-referee: error: shard(s) 2/3 missing") and len(err.splitlines()) == 1
    assert not (tmp_path / "m").exists()
    _, err = cli("tournament", "merge", shards[0], shards[2], "--partial", "--json")
    assert "2 scheduled match(es) missing" in err

    results = shards[1] / "results.jsonl"
    results.write_text(results.read_text().splitlines(keepends=True)[0])  # an unfinished shard
    _, err = cli("tournament", "merge", *shards, check=2)
    assert "1 scheduled match(es) are in no folder" in err and "--resume" in err
    referee("tournament", "--resume", shards[1], "--no-html", cwd=tmp_path)

    cli("tournament", "merge", *shards, "-o", tmp_path / "m")
    logs = sorted(p.name for p in (tmp_path / "m" / "logs").iterdir())
    expected = sorted(p.name for s in shards for p in (s / "logs").iterdir() if p.is_file())
    assert logs == expected and any(name.endswith(".g.log") for name in logs)


def test_replay_verify_exits_2_for_bad_input_and_speaks_json(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    referee("play", GREEDY, RANDOM, "--rules", "cardavia", "--sandbox", "none", "--replay", replay, cwd=tmp_path)
    _, err = cli("replay", "verify", tmp_path, check=2)
    assert err == f"koikoi-referee: error: {tmp_path}: a folder, not a replay file; name its replays: " \
                  f"koikoi-referee replay verify {tmp_path}/*.jsonl\n"  # fmt: skip
    cli("replay", "verify", tmp_path / "missing.jsonl", check=2)
    out, _ = cli("replay", "verify", "--json", replay)
    doc = json.loads(out)
    assert doc["ok"] is True and doc["replays"][0]["path"] == str(replay)
    assert doc["replays"][0]["result"]["names"] == ["greedy", "random"]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(replay.read_text().splitlines(keepends=True)[:-1]))
    out, _ = cli("replay", "verify", "--json", replay, cut, check=1)
    doc = json.loads(out)
    assert doc["ok"] is False and [r["ok"] for r in doc["replays"]] == [True, False]
    assert doc["replays"][1]["truncated"] is True


def test_bots_lists_the_house_bots_and_play_runs_them(tmp_path: Path) -> None:
    out, _ = cli("bots", "--json")
    doc = json.loads(out)
    names = [b["name"] for b in doc["bots"]]
    assert names == ["minimal", "random", "random-js", "random-c", "greedy", "learned", "pool", "search"]
    assert all(Path(b["path"]).is_file() for b in doc["bots"])
    greedy, _ = cli("bots", "--path", "greedy")
    assert greedy == GREEDY + "\n"
    _, err = cli("bots", "--path", "nobody", check=2)
    assert "no house bot 'nobody'" in err
    rand, _ = cli("bots", "--path", "random")
    played = referee("play", greedy.strip(), rand.strip(), "--rules", "cardavia", "--sandbox", "none", "--json",
                 cwd=tmp_path)  # fmt: skip
    assert json.loads(played.stdout)["names"] == ["greedy", "random"]


def test_the_wheel_ships_the_house_bots(tmp_path: Path) -> None:
    env = {**os.environ, "KOIKOI_PURE_BUILD": "1"}  # the pure engine: a wheel in seconds, the same files besides
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(ROOT), "-w", str(tmp_path)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("koikoi_referee-*.whl")
    with zipfile.ZipFile(wheel) as z:
        infos = {i.filename: i for i in z.infolist()}
    for name in ("greedy_bot.py", "learned_bot.py", "random_bot.py", "minimal_bot.py", "search_bot.py",
                 "random_bot.js", "random_bot_c.sh", "c/random_bot.c", "README.md"):  # fmt: skip
        assert f"referee/house_bots/{name}" in infos, name
    assert infos["referee/house_bots/random_bot_c.sh"].external_attr >> 16 & 0o111  # still executable
    assert "referee/house_bots.py" in infos and "referee/commands/bots_cmd.py" in infos
    assert "referee/engine/play_weights.json" in infos  # the learned play's weights (search_bot --continuations)
    assert not any("__pycache__" in n for n in infos)
