"""Resource limits and working directory of a bot process, and the ``play`` options that set them."""

from __future__ import annotations

import asyncio
import json
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from referee.seats.process import (
    BotClosedError,
    BotCommandError,
    BotProcess,
    Limits,
    cgroups,
    check_command,
    resolve_paths,
)
from tests import helpers
from tests.helpers import FIRST, ROOT

HOSTILE = helpers.HOSTILE / "hostile_bot.py"
REPORT = (
    "import json, os, resource\n"
    "lim = {n: resource.getrlimit(getattr(resource, n))[0] for n in ('RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_CORE')}\n"
    "print(json.dumps({'limits': lim, 'cwd': os.getcwd(), 'token': os.environ.get('KOIKOI_REFEREE_BOT'),"
    " 'pwd': os.environ.get('PWD'), 'oldpwd': os.environ.get('OLDPWD')}), flush=True)\n"
)


def report_of(limits: Limits) -> tuple[dict[str, object], Path | None, str]:
    async def main() -> tuple[dict[str, object], Path | None, str]:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(REPORT)}", limits=limits)
        await p.start()
        seen = json.loads(await p.read_line())
        cwd = p.cwd
        await p.close()
        return seen, cwd, p.token

    return asyncio.run(main())


def test_limits_are_set_in_the_child_and_the_default_cwd_is_fresh_and_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PWD", str(Path.cwd()))  # the referee's folder, where replays go: not for the bot
    monkeypatch.setenv("OLDPWD", str(ROOT))
    seen, cwd, token = report_of(Limits(cpu_seconds=7, memory_bytes=512 << 20, sandbox="none"))
    address_space = -1 if cgroups.reason() is None else 512 << 20  # a memory cgroup bounds the bot instead
    assert seen["limits"] == {"RLIMIT_AS": address_space, "RLIMIT_CPU": 7, "RLIMIT_CORE": 0}
    assert cwd is not None and seen["cwd"] == str(cwd) and cwd != Path.cwd()
    assert seen["pwd"] == str(cwd) and seen["oldpwd"] is None
    assert not cwd.exists()  # removed at close
    assert seen["token"] == token and len(token) >= 16


def test_without_limits_only_core_dumps_are_off_and_a_given_cwd_is_kept(tmp_path: Path) -> None:
    seen, cwd, _ = report_of(Limits(cwd=tmp_path, sandbox="none"))
    assert cwd == tmp_path
    lim = seen["limits"]
    assert isinstance(lim, dict)
    assert lim["RLIMIT_AS"] == resource.getrlimit(resource.RLIMIT_AS)[0]
    assert lim["RLIMIT_CPU"] == resource.getrlimit(resource.RLIMIT_CPU)[0]
    assert lim["RLIMIT_CORE"] == 0
    assert seen["cwd"] == str(tmp_path) and tmp_path.is_dir()


def test_relative_paths_of_the_command_line_are_made_absolute(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "b.py").write_text("")
    (tmp_path / "model.bin").write_text("")
    argv = ["./run", "bots/b.py", "--x", "./model.bin", "missing.txt", "--m=./model.bin", "--w=no.txt", "--q=",
            "/abs", "model.bin", "--n=model.bin"]  # fmt: skip
    assert resolve_paths(argv, tmp_path) == [
        str(tmp_path / "run"), str(tmp_path / "bots" / "b.py"), "--x", str(tmp_path / "model.bin"),
        "missing.txt", f"--m={tmp_path / 'model.bin'}", "--w=no.txt", "--q=", "/abs",
        "model.bin", "--n=model.bin",  # a bare word is never a file, even where one of that name exists
    ]  # fmt: skip
    long = "x" * 300  # longer than a file name may be: not a file, and no error
    assert resolve_paths(["prog", long, "a\0b"], tmp_path) == ["prog", long, "a\0b"]
    for command in (f"{long}.py", f"./{long}"):
        with pytest.raises(BotCommandError, match="not found"):
            check_command(command, tmp_path)


def run_play(referee_exe: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(referee_exe), "play", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_play_options_for_bot_limits(referee_exe: Path, tmp_path: Path) -> None:
    probe = tmp_path / "probe.json"
    out = run_play(referee_exe, FIRST, f"{HOSTILE} probe {tmp_path / 'pids'} {probe}", "--bot-cwd", str(tmp_path),
                   "--bot-memory-mb", "0", "--bot-cpu-s", "30", "--json", "--sandbox", "none")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(probe.read_text())["cwd"] == str(tmp_path)
    bad = run_play(referee_exe, FIRST, FIRST, "--bot-cwd", str(tmp_path / "nope"))
    assert bad.returncode != 0 and "no such folder for the bots" in bad.stderr and "Traceback" not in bad.stderr
    helptext = run_play(referee_exe, "--help").stdout
    assert "--bot-memory-mb" in helptext and "--bot-cpu-s" in helptext and "--bot-cwd" in helptext


@pytest.mark.slow
def test_play_bounds_limits_and_games_instead_of_failing_in_the_child(referee_exe: Path) -> None:
    top = run_play(referee_exe, FIRST, FIRST, "--rounds", "1", "--json",
                   "--bot-memory-mb", str(10**9), "--bot-cpu-s", str(10**9))  # fmt: skip
    assert top.returncode == 0 and json.loads(top.stdout)["forfeit"] is None, top.stdout
    for option in ("--bot-memory-mb", "--bot-cpu-s", "--games"):
        out = run_play(referee_exe, FIRST, FIRST, option, "9" * 24)
        assert out.returncode == 2 and option in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_random_seeds_differ_and_use_more_than_32_bits(referee_exe: Path) -> None:
    seeds = [json.loads(run_play(referee_exe, FIRST, FIRST, "--json", "--rounds", "1").stdout)["seed"]
             for _ in range(2)]  # fmt: skip
    assert seeds[0] != seeds[1]
    assert all(isinstance(s, str) and 0 <= int(s) < 2**52 for s in seeds)


@pytest.mark.slow
def test_an_opt_value_file_is_found_from_the_bots_own_folder(referee_exe: Path, tmp_path: Path) -> None:
    """``bot.py --weights=data/w.txt`` works like ``bot.py data/w.txt``: the path is made absolute (and, in
    the sandbox, bound read-only), although the bot runs in a working directory of its own."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "w.txt").write_text("weights-read")
    bot = tmp_path / "weights_bot.py"
    bot.write_text(
        "import sys\n"
        "path = next(a.split('=', 1)[1] for a in sys.argv if a.startswith('--weights='))\n"
        "name = open(path).read().strip()\n"
        + Path(FIRST).read_text().replace('"name":"first"', '"name":"\' + name + \'"')
    )
    for mode in ("none", "auto"):
        out = subprocess.run(
            [str(referee_exe), "play", "weights_bot.py --weights=data/w.txt", FIRST, "--rounds", "1", "--json",
             "--sandbox", mode],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert result["forfeit"] is None and result["names"][0] == "weights-read", (mode, out.stdout)


MEMORY_HOG = """\
import os, sys, time
for _ in range(4):  # four children of 100 MiB each: every one under the per-process limit, together over it
    if os.fork() == 0:
        block = bytearray(100 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(60)
        os._exit(0)
print("forked", flush=True)
time.sleep(60)
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["none", "auto"])
def test_memory_is_limited_for_the_bot_as_a_whole(mode: str) -> None:
    async def main() -> tuple[str, str | None]:
        limits = Limits(memory_bytes=256 << 20, sandbox=mode)
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(MEMORY_HOG)}", limits=limits)
        await p.start()
        try:
            assert await p.read_line() == b"forked"
            with pytest.raises(BotClosedError) as err:
                async with asyncio.timeout(60):
                    await p.read_line()
            return str(err.value), p.killed_for
        finally:
            await p.close()

    text, why = asyncio.run(main())
    assert why is not None and "over the 256 MiB limit" in why
    assert text == f"the bot was killed: {why}"
