"""Bot settings for tournaments and play: each setting, global or per bot, reaches the bot it is meant for.

A probe bot reports what it got in its hello name (its address-space limit, the time control of its hello, an
environment variable, its interpreter), and the tournament's replays record each seat's hello.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.seats.process import absolute_command
from referee.seats.sandbox import bwrap_path
from referee.seats.settings import BotSettings, SettingsError, parse_option
from referee.tournament.config import TournamentError, config_from_dict
from tests.helpers import FAST, referee

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

PROBE = """\
import json, os, resource, sys
soft = resource.getrlimit(resource.RLIMIT_AS)[0]
mb = "none" if soft == resource.RLIM_INFINITY else str(soft >> 20)
if mb == "none":  # the bot's memory cgroup bounds it instead: read that limit
    for entry in open("/proc/self/cgroup").read().splitlines():
        _, names, path = entry.split(":", 2)
        for f in (f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes", f"/sys/fs/cgroup{path}/memory.max"):
            if ("memory" in names.split(",") or names == "") and os.path.exists(f):
                value = open(f).read().strip()
                mb = "none" if not value.isdigit() or int(value) >= 1 << 50 else str(int(value) >> 20)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        name = "-".join([f"as{mb}", f"mv{msg['time']['move_ms']}", os.environ.get("PROBE", "unset"),
                         "other" if "other-python" in sys.executable else "own"])
        print(json.dumps({"type": "hello", "name": name[:64]}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""

needs_bwrap = pytest.mark.skipif(bwrap_path() is None, reason="bwrap is not installed (apt-get install bubblewrap)")
PLAIN = (*FAST, "--sandbox", "none")  # an unsandboxed short match


def hello_names(folder: Path) -> dict[str, set[str]]:
    """For each tournament bot name, the names its processes said hello with (from the replays)."""
    out: dict[str, set[str]] = {}
    for replay in (folder / "replays").glob("*.jsonl"):
        lines = [json.loads(x) for x in replay.read_text().splitlines()]
        mid = lines[0]["match_id"]
        seats = next(m["seats"] for m in json.loads((folder / "tournament.json").read_text())["schedule"]
                     if m["match_id"] == mid)  # fmt: skip
        for line in lines:
            if line["type"] == "hello":
                out.setdefault(seats[line["seat"] - 1], set()).add(line["name"])
    return out


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    path = tmp_path / "probe_bot.py"
    path.write_text(PROBE)
    return path


def test_per_bot_flags_reach_only_their_bot(tmp_path: Path, probe: Path) -> None:
    out = tmp_path / "t"
    referee(
        "tournament", "--bot", f"big={probe}", "--bot", f"small={probe}", *PLAIN, "--pairs", "1", "--seed", "3",
        "-o", out, "--no-html", "--bot-memory-mb", "1500", "--bot-env", "PROBE=all",
        "--bot-option", "big:memory_mb=3000", "--bot-option", "big:move_ms=7000", "--bot-option", "big:env=PROBE=big",
        cwd=tmp_path,
    )  # fmt: skip
    assert hello_names(out) == {"big": {"as3000-mv7000-big-own"}, "small": {"as1500-mv5000-all-own"}}
    config = json.loads((out / "tournament.json").read_text())["config"]
    assert config["bots"][0]["settings"] == {"memory_mb": 3000, "move_ms": 7000, "env": [["PROBE", "big"]]}
    assert config["settings"] == {"memory_mb": 1500}


def test_the_default_cap_applies_and_a_tournament_file_lifts_it_per_bot(tmp_path: Path, probe: Path) -> None:
    (tmp_path / "t.toml").write_text(
        f'rules = "cardavia"\npairs = 1\nseed = 4\nsandbox = "none"\n[time]\nmove_ms = 5000\nstartup_ms = 20000\n'
        f'[limits]\ncpu_s = 600\n[bots]\nplain = "{probe}"\n'
        f'java = {{ command = "{probe}", memory_mb = 8192, env = {{ PROBE = "jvm" }} }}\n'
    )
    out = tmp_path / "t"
    referee("tournament", "--config", tmp_path / "t.toml", "-o", out, "--no-html", cwd=tmp_path)
    assert hello_names(out) == {"plain": {"as2048-mv5000-unset-own"}, "java": {"as8192-mv5000-jvm-own"}}


def test_python_chooses_the_interpreter_of_py_bots(tmp_path: Path, probe: Path) -> None:
    other = tmp_path / "other-python"
    other.symlink_to(sys.executable)
    out = tmp_path / "t"
    referee("tournament", "--bot", f"a={probe}", "--bot", f"b={probe}", *PLAIN, "--pairs", "1", "-o", out,
            "--no-html", "--bot-option", f"b:python={other}", cwd=tmp_path)  # fmt: skip
    assert hello_names(out) == {"a": {"as2048-mv5000-unset-own"}, "b": {"as2048-mv5000-unset-other"}}
    play = referee("play", probe, probe, "--rules", "cardavia", "--sandbox", "none", "--python", other, "--json",
                   cwd=tmp_path)  # fmt: skip
    assert json.loads(play.stdout)["names"] == ["as2048-mv1000-unset-other"] * 2
    missing = referee("play", probe, probe, "--sandbox", "none", "--python", tmp_path / "nope", cwd=tmp_path, check=2)
    assert "python interpreter not found" in missing.stderr


def test_resume_from_another_folder_with_relative_bot_paths(tmp_path: Path, probe: Path) -> None:
    start = tmp_path / "start"
    (start / "bots").mkdir(parents=True)
    (start / "bots" / "probe.py").write_text(PROBE)
    referee("tournament", "--bot", "a=bots/probe.py", "--bot", "b=python3 bots/probe.py", *PLAIN, "--pairs", "2",
            "--seed", "9", "-o", "t", "--no-html", cwd=start)  # fmt: skip
    results = start / "t" / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    assert len(lines) == 4
    results.write_text("".join(lines[:2]))  # as if stopped after the first deal pair
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    referee("tournament", "--resume", start / "t", "--no-html", cwd=elsewhere)
    done = {json.loads(x).get("match_id") for x in results.read_text().splitlines()} - {None}
    assert done == {f"01-a-vs-b-00{p}{g}" for p in (0, 1) for g in "ab"}
    config = json.loads((start / "t" / "tournament.json").read_text())["config"]
    assert config["workdir"] == str(start) and config["bots"][0]["command"] == "bots/probe.py"


def test_absolute_command_keeps_programs_on_path_and_resolves_files(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "data").mkdir()
    assert absolute_command("bot.py --book ./data", tmp_path) == f"{tmp_path}/bot.py --book {tmp_path}/data"
    assert absolute_command("bot.py --book data", tmp_path) == f"{tmp_path}/bot.py --book data"  # a bare word
    assert absolute_command("python3 bot.py", tmp_path) == f"python3 {tmp_path}/bot.py"
    assert absolute_command("./run --x=./data", tmp_path) == f"{tmp_path}/run --x={tmp_path}/data"
    assert absolute_command("java -jar missing.jar", tmp_path) == "java -jar missing.jar"


def test_settings_lay_per_bot_over_global(tmp_path: Path) -> None:
    base = BotSettings(move_ms=1000, memory_mb=2048, env=(("A", "1"), ("B", "2")), files=("/x",))
    own = BotSettings(memory_mb=8192, env=(("B", "3"),), files=("/y",))
    both = own.over(base)
    assert (both.move_ms, both.memory_mb, both.env, both.files) == (1000, 8192, (("A", "1"), ("B", "3")), ("/x", "/y"))
    assert BotSettings.from_json(both.to_json()) == both
    assert BotSettings().to_json() == {}  # an older tournament description keeps its fingerprint
    assert parse_option("java:memory_mb=8192", ["java"]) == ("java", BotSettings(memory_mb=8192))


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("java:memory=1", "unknown key 'memory'"),
        ("jav:memory_mb=1", "no bot is named 'jav'"),
        ("java:memory_mb=lots", "memory_mb takes a whole number"),
        ("java", "expected NAME:key=value"),
        ("java:env=1X=2", "expected NAME=VALUE"),
        ("java:move_ms=99999999", "move_ms: 99999999 is outside"),
    ],
)
def test_a_bad_bot_option_is_one_line_and_exit_2(option: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        parse_option(option, ["java"])
    result = CliRunner().invoke(app, ["tournament", "--bot", "java=x.py", "--bot", "b=y.py", "--bot-option", option])
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.splitlines()) == 1


def test_tournament_file_settings_are_checked(tmp_path: Path) -> None:
    good = config_from_dict({"bots": {"a": "a.py", "b": {"command": "b.py", "files": ["book.bin"], "python": "py3"}},
                             "limits": {"memory_mb": 0}, "seed": 1}, base_dir=tmp_path)  # fmt: skip
    assert good.settings_of("b").files == (str(tmp_path / "book.bin"),) and good.settings_of("b").python == "py3"
    assert good.settings_of("a").memory_mb == 0 and good.time_of("a") == good.time
    for bad, message in [
        ({"bots": {"a": "a.py", "b": {"cmd": "b.py"}}}, "give its command"),
        ({"bots": {"a": "a.py", "b": {"command": "b.py", "memory": 1}}}, "unknown key"),
        ({"bots": {"a": "a.py", "b": "b.py"}, "limits": {"move_ms": 1}}, r"\[limits\] takes"),
        ({"bots": {"a": "a.py", "b": {"command": "b.py", "memory_mb": "8G"}}}, "whole number"),
    ]:
        with pytest.raises(TournamentError, match=message):
            config_from_dict(bad)  # type: ignore[arg-type]


def test_resume_refuses_settings_flags(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["tournament", "--resume", str(tmp_path), "--bot-memory-mb", "4096"])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "--bot-memory-mb describes the tournament" in result.stderr


READER = """\
import json, os, sys
book = os.environ["BOOK"]
try:
    with open(book) as f:
        seen = f.read().strip()
except OSError:
    seen = "unreadable"
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": seen}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


@needs_bwrap
def test_a_readable_file_is_seen_in_the_sandbox_only_by_the_bot_given_it(tmp_path: Path) -> None:
    (tmp_path / "reader.py").write_text(READER)
    book = tmp_path / "book.txt"
    book.write_text("opening-book\n")
    fast = [a for a in FAST if a not in ("--sandbox", "none")]
    out = tmp_path / "t"
    referee("tournament", "--bot", "with=reader.py", "--bot", "without=reader.py", *fast, "--sandbox", "bwrap",
            "--pairs", "1", "-o", out, "--no-html", "--bot-env", f"BOOK={book}", "--bot-option", f"with:file={book}",
            cwd=tmp_path)  # fmt: skip
    assert hello_names(out) == {"with": {"opening-book"}, "without": {"unreadable"}}
    played = referee("play", "reader.py", "reader.py", "--rules", "cardavia", "--sandbox", "bwrap", "--json",
                     "--bot-env", f"BOOK={book}", "--bot-file", book, cwd=tmp_path)  # fmt: skip
    assert json.loads(played.stdout)["names"] == ["opening-book", "opening-book"]
