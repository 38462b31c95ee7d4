"""Bot packages and runtimes under the default sandbox and limits, through ``play`` and through a tournament.

Each case is a bot an author would write from the docs: a Python folder with modules and a data file, a Node.js
bot with a package in ``node_modules``, a JVM with no flags, a compiled binary built by the manifest, a Python bot
in its own venv (``--python-1``), a program named through ``..`` or a symlink or a tournament file's folder. None
passes an extra flag.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import BOTS, RANDOM, ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

LOOP = '''
import json, sys
def run(name, choose):
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "hello":
            print(json.dumps({"type": "hello", "name": name, "protocol": "koikoi/1"}), flush=True)
        elif m["type"] == "request":
            print(json.dumps({"type": "action", "id": m["id"], "action": choose(m["legal"])}), flush=True)
        elif m["type"] == "bye":
            break
'''


def run(exe: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def play_json(exe: Path, bot: str, cwd: Path, *extra: str) -> dict[str, object]:
    """One match of ``bot`` against the house random bot, sandbox and limits as they come; its JSON result."""
    done = run(exe, "play", bot, RANDOM, "--rules", "cardavia", "--seed", "5", "--json", *extra, cwd=cwd)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def tournament(exe: Path, bot: str, cwd: Path, out: Path, *extra: str) -> dict[str, object]:
    """A two-pair tournament of ``bot`` (a folder, or NAME=COMMAND) against the random bot; its results."""
    done = run(exe, "tournament", "--bot", bot, "--bot", f"random={RANDOM}", "--rules", "cardavia", "--pairs", "2",
               "--seed", "3", "--out", str(out), *extra, cwd=cwd)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]
    return {"matches": lines}


def no_forfeit(result: dict[str, object]) -> None:
    assert result["forfeit"] is None, result


def tournament_clean(results: dict[str, object]) -> None:
    matches = results["matches"]
    assert isinstance(matches, list) and len(matches) == 4
    assert all(m["result"]["forfeit"] is None for m in matches), matches


TELL_MATCH = '            print("match", m["match"]["id"], file=sys.stderr, flush=True)\n'
"""A line of :func:`on_new_match`: the bot writes ``match ID`` to its stderr."""


def on_new_match(path: Path, name: str, does: str, first: str = "") -> Path:
    """A bot (``LOOP``) named ``name`` that runs the lines ``does`` (indented for the loop, ``m`` the message) at
    each ``new_match``, and the line ``first`` at its start; its file."""
    path.write_text(
        LOOP.replace('elif m["type"] == "request":', f'elif m["type"] == "new_match":\n{does}'
                     '        elif m["type"] == "request":')
        + first + f"run({name!r}, lambda l: l[0])\n"
    )  # fmt: skip
    return path


def python_package(folder: Path) -> Path:
    """``main.py`` importing ``strategy.py`` beside it, which reads ``weights.json`` from the folder."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "pkg"\ncommand = "main.py"\n')
    (folder / "strategy.py").write_text(
        "import json, pathlib\nPICK = json.loads(pathlib.Path('weights.json').read_text())['pick']\n"
        "def choose(legal):\n    return legal[PICK % len(legal)]\n"
    )
    (folder / "weights.json").write_text('{"pick": 1}')
    (folder / "loop.py").write_text(LOOP)
    (folder / "main.py").write_text("import loop, strategy\nloop.run('pkg', strategy.choose)\n")
    return folder


def test_a_python_package_with_modules_and_data_plays_and_plays_a_tournament(
    referee_exe: Path, tmp_path: Path
) -> None:
    python_package(tmp_path / "mybot")
    result = play_json(referee_exe, "mybot/", tmp_path)
    no_forfeit(result)
    assert result["names"] == ["pkg", "random"]
    results = tournament(referee_exe, "mybot", tmp_path, tmp_path / "out")
    tournament_clean(results)
    seats = {n for m in results["matches"] for n in m["seats"]}  # type: ignore[union-attr]
    assert seats == {"pkg", "random"}


def test_a_folder_that_is_not_a_bot_folder_as_given_is_named_as_such(referee_exe: Path, tmp_path: Path) -> None:
    # a bot folder whose path holds a space, unquoted; a folder without bot.toml: one line saying which
    python_package(tmp_path / "my bots" / "pkg")
    (tmp_path / "empty").mkdir()
    spaced = "my bots/pkg"

    def uses(bot: str) -> list[tuple[str, ...]]:
        tournament = ("tournament", "--bot", bot, "--bot", f"r={RANDOM}", "-o", "out")
        return [("play", bot, RANDOM), ("check", bot), tournament]

    for args in uses(spaced):
        done = run(referee_exe, *args, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert f"{spaced}: a bot folder whose path holds a space: quote it in the command" in done.stderr
    for args in uses("empty"):
        done = run(referee_exe, *args, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "empty: a folder without bot.toml" in done.stderr
    assert not (tmp_path / "out").exists()
    no_forfeit(play_json(referee_exe, f"'{spaced}'", tmp_path))  # quoted, it plays


@pytest.mark.parametrize(
    ("manifest", "words"),
    [('command = "main.py"\nmemroy_mb = 100\n', "unknown key(s) memroy_mb"), ('command = "main.py\n', "not valid TOML"),
     ('name = "x"\n', "command"), ('command = "main.py"\nmemory_mb = "lots"\n', "memory_mb")],
)  # fmt: skip
def test_a_bad_manifest_is_one_line_for_play_check_and_tournament(
    referee_exe: Path, tmp_path: Path, manifest: str, words: str
) -> None:
    python_package(tmp_path / "pkg")
    (tmp_path / "pkg" / "bot.toml").write_text(manifest)
    for args in (("play", "pkg", RANDOM, "--replay", "r.jsonl"), ("check", "pkg"),
                 ("tournament", "--bot", "pkg", "--bot", f"r={RANDOM}", "-o", "out")):  # fmt: skip
        done = run(referee_exe, *args, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert words in done.stderr and "bot.toml" in done.stderr


def test_a_node_bot_with_an_npm_package_in_node_modules(referee_exe: Path, tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.fail("node is needed here")
    folder = tmp_path / "jsbot"
    (folder / "node_modules" / "pick-first").mkdir(parents=True)
    (folder / "node_modules" / "pick-first" / "package.json").write_text('{"name": "pick-first", "main": "i.js"}')
    (folder / "node_modules" / "pick-first" / "i.js").write_text("module.exports = (legal) => legal[0];\n")
    (folder / "bot.toml").write_text('command = "main.js"\n')
    (folder / "main.js").write_text(
        "const pick = require('pick-first');\nconst rl = require('readline').createInterface({input: process.stdin});\n"
        "rl.on('line', (l) => { const m = JSON.parse(l);\n"
        " if (m.type === 'hello') console.log(JSON.stringify({type: 'hello', name: 'js'}));\n"
        " else if (m.type === 'request')\n"
        "  console.log(JSON.stringify({type: 'action', id: m.id, action: pick(m.legal)}));\n"
        " else if (m.type === 'bye') process.exit(0); });\n"
    )
    no_forfeit(play_json(referee_exe, str(folder), tmp_path))
    tournament_clean(tournament(referee_exe, str(folder), tmp_path, tmp_path / "out"))


def test_a_jvm_with_no_flags_under_the_default_limits(referee_exe: Path, tmp_path: Path) -> None:
    if shutil.which("javac") is None:
        pytest.fail("a JDK is needed here")
    folder = tmp_path / "javabot"
    (folder / "src").mkdir(parents=True)
    shutil.copy(BOTS / "jvm" / "Main.java", folder / "src" / "Main.java")
    (folder / "bot.toml").write_text('build = "javac -d classes src/Main.java"\ncommand = "java -cp classes Main"\n')
    no_forfeit(play_json(referee_exe, str(folder), tmp_path))
    tournament_clean(tournament(referee_exe, str(folder), tmp_path, tmp_path / "out"))


def test_a_compiled_binary_built_by_the_manifest_and_named_through_dots_and_a_symlink(
    referee_exe: Path, tmp_path: Path
) -> None:
    if shutil.which("cc") is None:
        pytest.fail("a C compiler is needed here")
    folder = tmp_path / "cbot"
    folder.mkdir()
    (folder / "bot.toml").write_text('build = "cc -O2 -o bot c/random_bot.c"\ncommand = "./bot"\n')
    shutil.copytree(ROOT / "bots" / "c", folder / "c")  # a sandboxed build sees its own folder only
    no_forfeit(play_json(referee_exe, "cbot", tmp_path))
    assert (folder / "bot").is_file()  # built once, in its folder, before the match
    (tmp_path / "mix").mkdir()
    (tmp_path / "link").symlink_to(folder)
    no_forfeit(play_json(referee_exe, "../cbot/bot", tmp_path / "mix"))  # a program path with ..
    no_forfeit(play_json(referee_exe, "../link/../cbot/bot", tmp_path / "mix"))  # .. after a symlink
    no_forfeit(play_json(referee_exe, str(tmp_path / "link" / "bot"), tmp_path))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "t.toml").write_text(
        f'rules = "cardavia"\npairs = 2\nseed = 1\n[bots]\nc = "../mix/../cbot/bot"\nr = "{RANDOM}"\n'
    )
    done = run(referee_exe, "tournament", "--config", str(conf / "t.toml"), "--out", str(tmp_path / "out"), cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(x)["result"]["forfeit"] is None for x in lines)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed (apt-get install bubblewrap)")
def test_the_build_step_runs_in_the_sandbox(referee_exe: Path, tmp_path: Path) -> None:
    """A contestant's build script writes in its own folder, and reads nothing beside it, nothing of the
    referee's environment and no network."""
    (tmp_path / "secret.txt").write_text("the organiser's secret")
    folder = tmp_path / "nosy"
    shutil.copytree(BOTS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    script = ("cat ../secret.txt > seen.txt 2>&1; cat $HOME/.local/share/koikoi-referee/key >> seen.txt 2>&1; "
              "env > env.txt; id -u > uid.txt; cat /proc/self/status | grep CapEff > caps.txt; "
              "cat /etc/shadow > shadow.txt 2>&1; cp /bin/sh ./own_sh && chmod 6755 ./own_sh; mkdir -p made/deep; "
              "ls -ld own_sh > mode.txt")  # fmt: skip
    (folder / "bot.toml").write_text(f"build = {json.dumps(script)}\ncommand = \"first_bot.py\"\n")
    env = {**os.environ, "KOIKOI_TEST_SECRET": "do-not-leak"}
    done = subprocess.run([str(referee_exe), "play", "nosy", RANDOM, "--rules", "cardavia", "--json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the organiser's secret" not in (folder / "seen.txt").read_text()
    assert "do-not-leak" not in (folder / "env.txt").read_text()
    assert (folder / "caps.txt").read_text().split()[-1] == "0000000000000000"  # no capability, even as root
    owner = folder.stat().st_uid
    if os.geteuid() == 0:  # a root referee's build runs as a fresh unprivileged user, as its bot does
        assert int((folder / "uid.txt").read_text()) != 0
        if Path("/etc/shadow").exists():  # root's own files are not the build's to read
            assert "Permission denied" in (folder / "shadow.txt").read_text()
        assert (folder / "mode.txt").read_text().startswith("-rwsr-sr-x")  # it did set the bits
    # the folder is its owner's again, and no file in it runs as someone else
    for path in [folder, *folder.rglob("*")]:
        assert path.lstat().st_uid == owner, path
    assert not (folder / "own_sh").stat().st_mode & 0o6000


def test_a_python_bot_in_its_own_venv_while_the_house_bot_keeps_the_referees_python(
    referee_exe: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "only_in_venv.py").write_text("def choose(legal):\n    return legal[-1]\n")
    bot = tmp_path / "venv_bot.py"
    bot.write_text(LOOP + "import only_in_venv\nrun('venv', only_in_venv.choose)\n")
    python = str(venv / "bin" / "python")
    result = play_json(referee_exe, str(bot), tmp_path, "--python-1", python)
    no_forfeit(result)
    assert result["names"] == ["venv", "random"]
    result = play_json(referee_exe, str(bot), tmp_path, "--python", python)  # both seats: random keeps its own
    no_forfeit(result)
    folder = tmp_path / "vbot"
    folder.mkdir()
    shutil.copy(bot, folder / "main.py")
    os.symlink(venv, folder / ".venv")
    (folder / "bot.toml").write_text('command = "main.py"\npython = ".venv/bin/python"\n')
    no_forfeit(play_json(referee_exe, "vbot", tmp_path))
    tournament_clean(tournament(referee_exe, "vbot", tmp_path, tmp_path / "out"))


def test_a_bare_word_that_names_an_output_folder_is_passed_as_it_is(referee_exe: Path, tmp_path: Path) -> None:
    bot = tmp_path / "strategy_bot.py"
    bot.write_text(
        LOOP + "if sys.argv[1:] != ['mono']:\n    sys.exit(f'got {sys.argv[1:]}')\nrun('mono', lambda l: l[0])\n"
    )
    (tmp_path / "mono").mkdir()  # a tournament's output folder of that name
    (tmp_path / "mono" / "results.jsonl").write_text("")
    no_forfeit(play_json(referee_exe, f"{bot} mono", tmp_path))
    tournament_clean(tournament(referee_exe, f"m={bot} mono", tmp_path, tmp_path / "out2"))


def test_outputs_inside_a_folder_a_bot_may_read_are_refused(referee_exe: Path, tmp_path: Path) -> None:
    python_package(tmp_path / "mybot")
    done = run(referee_exe, "play", "mybot", RANDOM, "--replay", "mybot/r.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert "which a bot may read" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "mybot" / "r.jsonl").exists()
    (tmp_path / "data").mkdir()  # a folder named on a bot's command line: the bot may read it
    done = run(referee_exe, "play", RANDOM, f"{RANDOM} ./data", "--log-dir", "data/logs", cwd=tmp_path)
    assert done.returncode == 2 and "which a bot may read" in done.stderr
    done = run(referee_exe, "tournament", "--bot", "mybot", "--bot", f"r={RANDOM}", "--out", "mybot/out",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "which a bot may read" in done.stderr


def test_a_manifest_names_nothing_outside_its_folder_and_the_system(referee_exe: Path, tmp_path: Path) -> None:
    # the contestant writes bot.toml: a host path there (a replay or tournament folder still to be written) would
    # be bound into its sandbox and read while the referee writes it
    folder = python_package(tmp_path / "spy")
    out = tmp_path / "out"
    manifests = [
        f'command = "main.py {out / "m.jsonl"}"',
        f'command = "main.py {out}"',
        f'command = "main.py --book={out}/tournament.json"',
        'command = "main.py ../out/m.jsonl"',
        'command = "main.py data/../../out"',
        f'command = "main.py"\npython = "{tmp_path / "py"}"',
        'command = "main.py"\npython = "../venv/bin/python"',
    ]
    for manifest in manifests:
        (folder / "bot.toml").write_text(manifest + "\n")
        for args in (("play", "spy", RANDOM, "--replay", str(out / "m.jsonl")),
                     ("tournament", "--bot", "spy", "--bot", f"r={RANDOM}", "--pairs", "1", "--out", str(out))):
            done = run(referee_exe, *args, cwd=tmp_path)
            assert done.returncode == 2, (manifest, args, done.stdout, done.stderr)
            assert len(done.stderr.splitlines()) == 1 and "bot.toml: " in done.stderr, done.stderr
            assert "outside the folder and the system" in done.stderr or "leads out of the folder" in done.stderr
            assert not out.exists()
    # a path of the system view, and one inside the folder, are the bot's to name
    (folder / "bot.toml").write_text('command = "main.py /usr/share data/weights.json --x=./loop.py"\n')
    no_forfeit(play_json(referee_exe, "spy", tmp_path))


def test_a_package_s_hash_bang_lines_and_symlinks_bind_nothing_outside_it(referee_exe: Path, tmp_path: Path) -> None:
    # the contestant writes the folder: a #! line the referee reads otherwise than the kernel (a vertical tab
    # before the path), or a symlink it resolves on the host (/proc/self/cwd), bound the host path it named
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "seed.txt").write_text("the tournament seed")
    folder = tmp_path / "sly"
    folder.mkdir()
    (folder / "lnk").symlink_to("/proc/self/cwd/secret/seed.txt")
    tab = folder / "\v"  # the kernel reads "#!\v/..." as a path relative to the folder: a shell there
    tab.mkdir()
    for name in ("secret", "lnk"):
        target = tab / str(secret if name == "secret" else folder / "lnk").lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to("/bin/sh")
    probe = str(secret / "seed.txt")
    check = ("import json, os, sys\n"
             f"print('SEEN' if os.path.exists({probe!r}) else 'UNSEEN', file=sys.stderr, flush=True)\n"
             + LOOP + "run('sly', lambda l: l[0])\n")  # fmt: skip
    (folder / "bot.py").write_text(check)
    logs = tmp_path / "logs"
    for shebang in (f"\v{secret}", f"\v{folder / 'lnk'}"):
        (folder / "run.sh").write_text(f"#!{shebang}\nexec python3 {folder / 'bot.py'}\n")
        (folder / "run.sh").chmod(0o755)
        (folder / "bot.toml").write_text('command = "run.sh"\n')
        done = run(referee_exe, "play", "sly", RANDOM, "--rules", "cardavia", "--seed", "5", "--log-dir", str(logs),
                   cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        seen = (logs / "m-0001-seat1.log").read_text()
        assert "UNSEEN" in seen and "SEEN\n" not in seen.replace("UNSEEN", ""), (shebang, seen)


def test_a_hash_bang_line_naming_a_fifo_does_not_hang_the_referee(referee_exe: Path, tmp_path: Path) -> None:
    folder = tmp_path / "stall"
    folder.mkdir()
    os.mkfifo(folder / "pipe")
    (folder / "run.sh").write_text(f"#!{folder / 'pipe'}\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "bot.toml").write_text('command = "run.sh"\n')
    done = run(referee_exe, "play", "stall", RANDOM, "--rules", "cardavia", "--startup-ms", "3000", cwd=tmp_path)
    assert "crash" in done.stdout + done.stderr or done.returncode == 2, done.stdout + done.stderr


def test_an_argument_naming_an_output_still_to_be_written_is_refused(referee_exe: Path, tmp_path: Path) -> None:
    # it does not exist when the run starts, and would be bound once it does
    (tmp_path / "bot.py").write_text(LOOP + "run('b', lambda l: l[0])\n")
    out = tmp_path / "later"
    cases = [
        ("play", f"bot.py {out / 'm.jsonl'}", RANDOM, "--replay", str(out / "m.jsonl")),
        ("play", f"bot.py --log={out}", RANDOM, "--log-dir", str(out / "logs")),
        ("tournament", "--bot", f"a=bot.py {out}", "--bot", f"b={RANDOM}", "--pairs", "1", "--out", str(out / "t")),
    ]
    for args in cases:
        done = run(referee_exe, *args, cwd=tmp_path)
        assert done.returncode == 2 and "a bot may read" in done.stderr, (args, done.stderr)
        assert len(done.stderr.splitlines()) == 1
    assert not out.exists()
    (tmp_path / "folder").mkdir()  # an output folder that holds a file a bot may read
    (tmp_path / "folder" / "book.bin").write_bytes(b"x")
    done = run(referee_exe, "play", "bot.py ./folder/book.bin", RANDOM, "--log-dir", "folder", cwd=tmp_path)
    assert done.returncode == 2 and "holds" in done.stderr and "which a bot may read" in done.stderr, done.stderr


def test_outputs_inside_the_interpreter_or_library_a_bot_gets_are_refused(referee_exe: Path, tmp_path: Path) -> None:
    # a .py bot runs with the referee's own Python: its venv (and the referee's package) is in every sandbox
    import referee

    own = Path(sys.prefix) / "koikoi-out"
    library = Path(referee.__file__).resolve().parent / "koikoi-out"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    (tmp_path / "bot.py").write_text(LOOP + "run('v', lambda l: l[0])\n")
    cases = [
        ("play", RANDOM, RANDOM, "--replay", str(own / "r.jsonl")),
        ("play", RANDOM, RANDOM, "--log-dir", str(library / "logs")),
        ("tournament", "--bot", f"a={RANDOM}", "--bot", f"b={RANDOM}", "--out", str(own / "t")),
        ("play", f"{venv / 'bin' / 'python'} bot.py", RANDOM, "--replay", str(venv / "r.jsonl")),
        ("play", "bot.py", RANDOM, "--python", str(venv / "bin" / "python"), "--replay", str(venv / "out" / "r.jsonl")),
    ]
    for args in cases:
        done = run(referee_exe, *args, cwd=tmp_path)
        assert done.returncode == 2 and "which a bot may read: write it elsewhere" in done.stderr, (args, done.stderr)
    assert not own.exists() and not library.exists()
    assert not (venv / "r.jsonl").exists() and not (venv / "out").exists()


def test_a_runtime_that_fails_on_stdout_is_a_crash_with_its_lines_quoted(referee_exe: Path, tmp_path: Path) -> None:
    bot = tmp_path / "vm.py"
    bot.write_text(
        "print('Error occurred during initialization of VM')\nprint('Could not reserve enough space')\n"
        "import sys; sys.exit(1)\n"
    )
    result = play_json(referee_exe, str(bot), tmp_path)
    forfeit = result["forfeit"]
    assert isinstance(forfeit, dict) and forfeit["reason"] == "crash"
    detail = forfeit["detail"]
    assert detail.startswith("the bot exited with status 1 before its hello")
    assert '"Error occurred during initialization of VM"' in detail and '"Could not reserve enough space"' in detail


def test_play_prints_each_bots_log_and_a_reused_bot_logs_each_match_apart(referee_exe: Path, tmp_path: Path) -> None:
    bot = on_new_match(tmp_path / "talk.py", "talk", TELL_MATCH,
                       "print('match m-0001', file=sys.stderr, flush=True)\n")  # fmt: skip
    done = run(referee_exe, "play", str(bot), RANDOM, "--rules", "cardavia", "--games", "3", "--seed", "1",
               "--log-dir", "logs", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = [x for x in done.stdout.splitlines() if x.startswith("  stderr: ")]
    assert len(shown) == 3
    for k in (1, 2, 3):
        log = tmp_path / "logs" / f"m-000{k}-seat1.log"
        assert f"seat 1 {Path('logs') / log.name}" in shown[k - 1] or str(log) in shown[k - 1]
        assert log.read_text() == f"match m-000{k}\n"
    done = run(referee_exe, "play", str(bot), RANDOM, "--rules", "cardavia", "--seed", "1", cwd=tmp_path)
    assert "  stderr: seat 1 " in done.stdout  # printed also after a normal match, without --log-dir


def test_a_reused_bot_s_stderr_cap_holds_for_each_match_apart(referee_exe: Path, tmp_path: Path) -> None:
    # 700 kB of stderr a match, under the 1 MiB cap of a match's log: every match's log holds all of it
    bot = on_new_match(tmp_path / "talk.py", "talk",
                       '            print("match", m["match"]["id"], "d" * 700_000, file=sys.stderr, flush=True)\n',
                       "print('match m-0001', 'd' * 700_000, file=sys.stderr, flush=True)\n")  # fmt: skip
    done = run(referee_exe, "play", str(bot), RANDOM, "--rules", "cardavia", "--games", "3", "--seed", "1",
               "--log-dir", "logs", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    for k in (1, 2, 3):
        assert (tmp_path / "logs" / f"m-000{k}-seat1.log").read_text() == f"match m-000{k} {'d' * 700_000}\n"


def test_a_tournament_keeps_a_reused_bots_stderr_per_match(referee_exe: Path, tmp_path: Path) -> None:
    bot = on_new_match(tmp_path / "talk.py", "talk", TELL_MATCH,
                       "print('first', file=sys.stderr, flush=True)\n")  # fmt: skip
    tournament(referee_exe, f"talk={bot}", tmp_path, tmp_path / "out", "-j", "1")
    logs = sorted((tmp_path / "out" / "logs").glob("*.talk.log"))
    assert len(logs) == 4
    texts = {p.name.split(".")[0]: p.read_text() for p in logs}
    reused = [mid for mid, text in texts.items() if text.startswith("match")]
    assert reused, texts  # one process played several matches
    for mid in reused:
        assert texts[mid] == f"match {mid}\n"


def test_the_home_page_links_the_log_of_the_match_where_a_reused_bot_failed(
    referee_exe: Path, tmp_path: Path
) -> None:
    bot = on_new_match(tmp_path / "second.py", "second",
                       '            print("failing in", m["match"]["id"], file=sys.stderr, flush=True)\n'
                       '            sys.exit(4)\n')  # fmt: skip
    out = tmp_path / "out"
    done = run(referee_exe, "tournament", "--bot", f"second={bot}", "--bot", f"random={RANDOM}", "--rules",
               "cardavia", "--pairs", "2", "--seed", "3", "-j", "1", "--out", str(out), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    failed = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    crashed = [r["match_id"] for r in failed if (r["result"]["forfeit"] or {}).get("reason") == "crash"]
    assert crashed  # the process reused for a second match died at its new_match
    page = (out / "index.html").read_text()
    for match_id in crashed:
        log = out / "logs" / f"{match_id}.second.log"
        assert log.read_text() == f"failing in {match_id}\n"
        assert f'href="logs/{match_id}.second.log"' in page
