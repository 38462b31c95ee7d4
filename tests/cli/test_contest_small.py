"""The small contest fixes, each through the installed ``koikoi-referee`` with real bots and real files.

A match that ends at ``hello`` (a bot that crashes before it answers) has a replay with no deal: ``replay html``
writes the result page the tournament writes for it, and ``replay show`` keeps both seat lines. ``replay verify``
given a folder names the glob of its replays. Counts read ``1 round`` and ``1 pair``. Bad command-line input,
a typo in a tournament file's ``[time]``, a bot named twice and a folder signed with another key are each one
line on stderr and exit 2. Every run has a fixed seed.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import BOTS, FAST, referee

FIRST = str(BOTS / "first_bot.py")
AT_HELLO = f"{BOTS / 'broken_bot.py'} crash_hello"  # exits before it answers hello

pytestmark = pytest.mark.slow  # real tournaments and referee runs


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The stderr of a refused command: exactly one ``koikoi-referee: error:`` line, nothing on stdout."""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("koikoi-referee: error: "), proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    return lines[0]


def paragraphs(page: Path) -> list[str]:
    """The ``<p>`` elements of a page, as written."""
    return re.findall(r"<p[ >].*?</p>", page.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of every run: the default signing key under this module's folder."""
    home = tmp_path_factory.mktemp("data")
    return {**{k: v for k, v in os.environ.items() if k != "KOIKOI_SEED"}, "XDG_DATA_HOME": str(home)}


@pytest.fixture(scope="module")
def at_hello(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """The replay of a ``play`` match whose seat 2 crashed before its hello (seed 1)."""
    replay = tmp_path_factory.mktemp("play") / "hello.jsonl"
    out = referee("play", FIRST, AT_HELLO, "--seed", "1", *FAST, "--replay", replay, env=env)
    assert "seat 2 (broken_bot.py) forfeits: crash" in out.stdout
    return replay


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """A two-bot tournament (one pair, seed 5) whose bot ``b`` crashes at hello in both games."""
    out = tmp_path_factory.mktemp("tournament") / "t"
    referee("tournament", "--bot", f"a={FIRST}", "--bot", f"b={AT_HELLO}", "--forfeit-broken", "--pairs", "1",
            "--seed", "5", *FAST, "--out", out, env=env)  # fmt: skip
    return out


def test_replay_html_of_a_forfeit_at_hello_writes_the_tournaments_page(
    tmp_path: Path, env: dict[str, str], at_hello: Path, ladder: Path
) -> None:
    # the tournament's own page for the match, and replay html of the same replay file: the same result page
    theirs = ladder / "replays" / "01-a-vs-b-000a.html"
    detail = json.loads((ladder / "replays" / "01-a-vs-b-000a.jsonl").read_text().splitlines()[-1])["forfeit"]["detail"]
    mine = tmp_path / "mine.html"
    assert referee("replay", "html", ladder / "replays" / "01-a-vs-b-000a.jsonl", "-o", mine,
                   env=env).stdout == f"wrote {mine}\n"  # fmt: skip
    assert paragraphs(mine) == paragraphs(theirs) == [
        "<p>a vs b: a wins 0-0 (b forfeits: crash)</p>",
        "<p>Scores 0-0, 1 round.</p>",
        f'<p id="forfeit">b forfeits: crash: {detail}</p>',
        '<p class="note">No board to show: the match ended before the first deal</p>',
    ]
    assert "<title>a vs b — 01-a-vs-b-000a</title>" in mine.read_text()
    # a replay of play: the page holds the result; a seat's page leaves out the forfeit's detail
    page = at_hello.with_suffix(".html")
    assert referee("replay", "html", at_hello, env=env).stdout == f"wrote {page}\n"
    shown = paragraphs(page)
    assert shown[:2] == ["<p>first vs broken_bot.py: first wins 0-0 (broken_bot.py forfeits: crash)</p>",
                         "<p>Scores 0-0, 1 round.</p>"]  # fmt: skip
    assert shown[2].startswith('<p id="forfeit">broken_bot.py forfeits: crash: the bot exited')
    seat = tmp_path / "seat1.html"
    referee("replay", "html", at_hello, "--seat", "1", "-o", seat, env=env)
    assert paragraphs(seat)[2] == '<p id="forfeit">broken_bot.py forfeits: crash</p>'
    # a replay cut after its header (no result) is still refused in one line
    cut = tmp_path / "cut.jsonl"
    cut.write_text(at_hello.read_text().splitlines()[0] + "\n")
    assert "holds no event" in one_error(referee("replay", "html", cut, env=env, check=2))


def test_replay_show_keeps_both_seat_lines_of_a_forfeit_at_hello(
    env: dict[str, str], at_hello: Path, ladder: Path
) -> None:
    shown = referee("replay", "show", at_hello, env=env).stdout.splitlines()
    assert shown == [
        "match m-0001: rules cardavia (1 round), seed 1",
        "seat 1: first",
        "seat 2: broken_bot.py (no hello)",
        "result: seat 2 (broken_bot.py) forfeits: crash: the bot exited with status 3",
    ]
    # the tournament's names; here the seat that never said hello is seat 1, and a seat's view keeps it too
    swapped = ladder / "replays" / "01-a-vs-b-000b.jsonl"
    for extra in ((), ("--seat", "2")):
        lines = referee("replay", "show", swapped, *extra, env=env).stdout.splitlines()
        assert lines[1:3] == ["seat 1: b (no hello)", "seat 2: a (hello: first)"]
        assert lines[3].startswith("result: seat 1 (b) forfeits: crash")


def test_replay_verify_of_a_folder_names_the_glob_of_its_replays(
    tmp_path: Path, env: dict[str, str], at_hello: Path, ladder: Path
) -> None:
    err = one_error(referee("replay", "verify", ladder, env=env, check=2))
    assert err == (f"koikoi-referee: error: {ladder}: a folder, not a replay file; name its replays: "
                   f"koikoi-referee replay verify {ladder}/replays/*.jsonl")  # fmt: skip
    named = sorted(glob.glob(f"{ladder}/replays/*.jsonl"))  # the glob as a shell expands it
    assert len(named) == 2
    assert referee("replay", "verify", *named, env=env).stdout.count(": ok (") == 2
    # replays directly in a folder; a folder whose name needs quoting; a folder without replays
    plain = tmp_path / "my games"
    plain.mkdir()
    (plain / "g.jsonl").write_bytes(at_hello.read_bytes())
    err = one_error(referee("replay", "verify", plain, env=env, check=2))
    assert err.endswith(f"koikoi-referee replay verify '{plain}'/*.jsonl")
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "sub" / "notes.jsonl").write_text('{"not": "a replay"}\n')
    assert one_error(referee("replay", "verify", empty, env=env, check=2)).endswith(
        "a folder, not a replay file; it holds no replay (nor do its folders)"
    )
    assert one_error(referee("replay", "verify", tmp_path / "nowhere.jsonl", env=env, check=2)).endswith(
        "nowhere.jsonl: not a replay file (no such file)"
    )


def test_one_round_and_one_pair_are_singular(tmp_path: Path, env: dict[str, str]) -> None:
    replay = tmp_path / "g.jsonl"
    played = referee("play", FIRST, FIRST, "--seed", "3", *FAST, "--replay", replay, env=env).stdout
    assert played.splitlines()[0] == "seed 3  rules cardavia  1 round  1 game"
    assert re.search(r"after 1 round \(rounds\)", played)
    shown = referee("replay", "show", replay, env=env).stdout
    assert "(1 round), seed 3" in shown and re.search(r"match over after 1 round \(rounds\)", shown)
    assert re.search(r"^cardavia +1 round, ", referee("rules", env=env).stdout, re.M)
    twelve = referee("play", FIRST, FIRST, "--seed", "3", "--rules", "cardavia", "--rounds", "2", env=env).stdout
    assert "rules cardavia  2 rounds  1 game" in twelve and "after 2 rounds" in twelve
    # a tournament printing interim standings after every pair
    out = tmp_path / "t"
    run = referee("tournament", "--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--pairs", "2", "--seed", "9",
                  *FAST, "--rating-interval", "1", "--out", out, "--no-html", env=env).stdout  # fmt: skip
    assert "interim standings after 1 pair:" in run
    for text in (played, shown, run, (out / "standings.json").read_text()):
        assert not re.search(r"\b1 (rounds|pairs|games)\b", text) and "(s)" not in text


def test_play_takes_dash_h_for_help(env: dict[str, str]) -> None:
    short = referee("play", "-h", env=env)
    assert short.stdout.startswith("Usage: koikoi-referee play [OPTIONS]")
    assert short.stdout == referee("play", "--help", env=env).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tournament", "--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--pairs", "-3"),
         "tournament: Invalid value for '--pairs' / '-n': Input should be greater than or equal to 1; "
         "see koikoi-referee tournament -h"),
        (("tournament", "--pairs", "three"), "tournament: Invalid value for '--pairs' / '-n': "),
        (("play", FIRST, FIRST, "--no-such-option"), "play: No such option: --no-such-option"),
        (("tournament", "merge"), "tournament merge: Missing argument 'dirs'; see koikoi-referee tournament merge -h"),
        (("tournament", "--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--move-ms", "0"),
         "tournament: Invalid value for '--move-ms': Input should be greater than or equal to 1"),
        (("tournament", "--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--startup-ms", "0"),
         "tournament: Invalid value for '--startup-ms': Input should be greater than or equal to 1"),
        (("tournament", "--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--bot-option", "a:move_ms=0"),
         "move_ms: 0 is outside 1..3600000"),
    ],
)  # fmt: skip
def test_bad_command_line_input_is_one_line(
    tmp_path: Path, env: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    assert message in one_error(referee(*args, "--out", tmp_path / "t", env=env, check=2))
    assert not (tmp_path / "t").exists()


def test_a_folder_or_a_file_where_the_other_is_wanted_is_named_as_such(tmp_path: Path, env: dict[str, str]) -> None:
    folder, file = tmp_path / "adir", tmp_path / "afile.txt"
    folder.mkdir()
    file.write_text("x")
    err = one_error(referee("play", FIRST, FIRST, "--replay", folder, env=env, check=2))
    assert err.endswith(f"--replay {folder}: a folder; the replay is a file (e.g. {folder / 'match.jsonl'})")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile.txt"]  # no log folder left behind
    err = one_error(referee("play", FIRST, FIRST, "--bot-cwd", file, env=env, check=2))
    assert err.endswith(f"{file}: a file, not a folder for the bots")
    err = one_error(referee("replay", "verify", "--key", folder, file, env=env, check=2))
    assert err.endswith(f"--key {folder}: a folder, not a key file")
    err = one_error(referee("replay", "html", folder, env=env, check=2))
    assert err.endswith(f"{folder}: holds no replay (nor do its folders)") and not list(folder.iterdir())


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "contest.toml"
    path.write_text(f'rules = "cardavia"\npairs = 1\nseed = 4\n{text}')
    return path


def test_a_time_typo_in_the_tournament_file_names_the_key(tmp_path: Path, env: dict[str, str]) -> None:
    path = _toml(tmp_path, f'[bots]\na = "{FIRST}"\nb = "{FIRST}"\n[time]\nmove_ms = 500\nbank_sm = 9000\n')
    err = one_error(referee("tournament", "--config", path, "--out", tmp_path / "t", env=env, check=2))
    assert err == f"koikoi-referee: error: {path}: [time] has no key bank_sm; it takes startup_ms, move_ms, bank_ms"


def test_a_bot_named_twice_in_the_tournament_file_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    path = _toml(tmp_path, f'[bots]\na = "{FIRST}"\nb = "{FIRST}"\na = "{FIRST} again"\n')
    err = one_error(referee("tournament", "--config", path, "--out", tmp_path / "t", env=env, check=2))
    assert err == f"koikoi-referee: error: {path}: line 7: bot a is named twice (each bot needs a name of its own)"
    # a name of the file given again with --bot
    path = _toml(tmp_path, f'[bots]\na = "{FIRST}"\nb = "{FIRST}"\n')
    err = one_error(referee("tournament", "--config", path, "--bot", f"b={FIRST}", "--out", tmp_path / "t",
                            env=env, check=2))  # fmt: skip
    assert err == "koikoi-referee: error: bot names must be unique; got a, b, b"


def test_a_merge_under_another_key_says_so_and_an_edit_is_still_forged(tmp_path: Path, env: dict[str, str]) -> None:
    seed, other = tmp_path / "seed", tmp_path / "other.key"
    seed.write_text("77\n")
    other.write_text("cd" * 32 + "\n")
    shard = ("--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--pairs", "2", "--seed-file", seed, *FAST, "--no-html")
    referee("tournament", *shard, "--shard", "1/2", "--out", tmp_path / "s1", env=env)
    referee("tournament", *shard, "--shard", "2/2", "--key", other, "--out", tmp_path / "s2", env=env)
    err = one_error(referee("tournament", "merge", tmp_path / "s1", tmp_path / "s2", env=env, check=2))
    assert f"{tmp_path / 's2'}/tournament.json: the signature does not match this key: the folder was signed " \
           "with a different key (key id " in err and "forged" not in err  # fmt: skip
    ids = re.findall(r"[0-9a-f]{16}", err)
    assert len(ids) == 2 and ids[0] != ids[1]
    assert json.loads((tmp_path / "s2" / "tournament.json").read_text())["key_id"] == ids[0]
    # with the other key, the first shard is the one signed differently
    err = one_error(referee("tournament", "merge", tmp_path / "s1", tmp_path / "s2", "--key", other, env=env,
                            check=2))  # fmt: skip
    assert f"{tmp_path / 's1'}/tournament.json" in err and "signed with a different key" in err
    # an edit under the right key is not a different key: it is refused as edited or forged
    description = tmp_path / "s2" / "tournament.json"
    description.write_text(description.read_text().replace('"min_score": null', '"min_score": 0.0'))
    err = one_error(referee("tournament", "merge", tmp_path / "s2", "--partial", "--key", other, env=env, check=2))
    assert "the signature does not match (edited, moved or forged)" in err and "different key" not in err
