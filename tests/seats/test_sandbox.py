"""The bwrap sandbox with real bwrap and real processes: what a bot sees, what it cannot reach, its limits, the
interpreters that must work inside it, and the one-line error or warning where bwrap cannot work."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from referee.engine import load_rules
from referee.match import MatchConfig, run_match
from referee.seats.process import BotProcess, Limits, cgroups
from referee.seats.process.plan import OPEN_FILES
from referee.seats.sandbox import ENV_ALLOW, SandboxError, bwrap_path, choose, explain, parse_env
from referee.tournament.config import TournamentError, config_from_dict
from tests.helpers import FIRST, ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

needs_bwrap = pytest.mark.skipif(bwrap_path() is None, reason="bwrap is not installed (apt-get install bubblewrap)")

PROBE = """\
import json, os, socket, sys
targets = json.loads(sys.argv[1])
def can_read(p):
    try:
        with open(p, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False
def can_write(p):
    try:
        with open(p, "wb") as f:
            f.write(b"x")
        return True
    except OSError:
        return False
def can_list(p):
    try:
        return sorted(os.listdir(p))
    except OSError:
        return None
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2).close()
    net = True
except OSError:
    net = False
with open("/proc/net/dev") as f:
    interfaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
print(json.dumps({
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "read": {p: can_read(p) for p in targets["read"]},
    "write": {p: can_write(p) for p in targets["write"]},
    "list": {p: can_list(p) for p in targets["list"]},
    "env": dict(os.environ), "cwd": os.getcwd(), "uid": os.getuid(), "net": net, "interfaces": interfaces,
    "caps": status["CapEff"].strip(),
}), flush=True)
"""


def probe(targets: dict[str, list[str]], limits: Limits) -> dict[str, Any]:
    """Run the probe bot under ``limits`` and return its report."""

    async def main() -> dict[str, Any]:
        cmd = f"{shlex.quote(sys.executable)} -c {shlex.quote(PROBE)} {shlex.quote(json.dumps(targets))}"
        p = BotProcess(cmd, limits=limits)
        await p.start()
        try:
            report: dict[str, Any] = json.loads(await p.read_line())
        finally:
            await p.close()
        assert p.sandbox == limits.sandbox
        return report

    return asyncio.run(main())


@needs_bwrap
def test_a_sandboxed_bot_sees_only_itself_and_reaches_none_of_the_hosts_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the referee's folder: replays and logs go here
    (tmp_path / "replays").mkdir()
    secrets = [tmp_path / "secret.txt", tmp_path / "replays" / "m-0001.jsonl", tmp_path / "logs.txt"]
    for f in secrets:
        f.write_text("hidden")
    with tempfile.NamedTemporaryFile(prefix="koikoi-host-tmp-", delete=False) as host_tmp:  # the host's /tmp
        host_tmp.write(b"hidden")
    home = os.path.expanduser("~")
    monkeypatch.setenv("GITHUB_RUN_ID", "12345")  # a secret the bot must not inherit
    monkeypatch.setenv("KOIKOI_SEED", "42")
    try:
        targets = {
            "read": [*map(str, secrets), host_tmp.name, FIRST],  # FIRST: another bot's file
            "write": ["/usr/x", "/etc/x", "/x", "/dev/x", str(tmp_path / "new.txt"), "/tmp/home/ok", "/tmp/ok"],
            "list": [str(tmp_path), tempfile.gettempdir(), home, "/"],
        }
        seen = probe(targets, Limits(sandbox="bwrap", env=(("MY_SETTING", "on"),)))
    finally:
        os.unlink(host_tmp.name)
    assert seen["pids"] == [1, 2]  # bwrap's init and the bot: no referee, no opponent, nothing of the host
    assert seen["read"] == {**{str(f): False for f in secrets}, host_tmp.name: False, FIRST: False}
    assert seen["write"] == {
        "/usr/x": False, "/etc/x": False, "/x": False, "/dev/x": False, str(tmp_path / "new.txt"): False,
        "/tmp/home/ok": True, "/tmp/ok": True,
    }  # fmt: skip
    assert seen["list"][str(tmp_path)] is None
    assert Path(host_tmp.name).name not in (seen["list"][tempfile.gettempdir()] or [])
    visible_home = set(seen["list"][home] or [])
    roots = {Path(p).relative_to(home).parts[0] for p in (sys.prefix, sys.base_prefix) if p.startswith(home + "/")}
    assert visible_home <= roots  # only the interpreter's own folder, if it lives in the home directory
    assert seen["cwd"] == "/tmp/home"
    assert seen["net"] is False and seen["interfaces"] == ["lo"]
    extra = {"HOME", "TMPDIR", "PWD", "MY_SETTING"}
    assert all(k in ENV_ALLOW or k.startswith("LC_") or k in extra for k in seen["env"]), sorted(seen["env"])
    assert seen["env"]["MY_SETTING"] == "on" and seen["env"]["HOME"] == "/tmp/home"
    if os.geteuid() == 0:  # root referee: the bot is an unprivileged user without capabilities
        assert seen["uid"] != 0 and int(seen["caps"], 16) == 0


@needs_bwrap
def test_unsandboxed_bots_get_the_same_cleared_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_RUN_ID", "12345")
    seen = probe({"read": [], "write": [], "list": []}, Limits(sandbox="none", env=(("MY_SETTING", "on"),)))
    assert "GITHUB_RUN_ID" not in seen["env"] and seen["env"]["MY_SETTING"] == "on"


LIMIT_PROBE = """\
import json, os, resource, time
made = 0
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    made += 1
try:
    with open("/tmp/home/big", "wb") as f:
        for _ in range(16):
            f.write(b"x" * (1 << 20))
            f.flush()
    wrote = 16
except OSError:
    wrote = os.path.getsize("/tmp/home/big") >> 20
lim = {n: resource.getrlimit(getattr(resource, n))[0] for n in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC")}
files = resource.getrlimit(resource.RLIMIT_NOFILE)
print(json.dumps({"forks": made, "mib": wrote, "limits": lim, "files": files}), flush=True)
"""


@needs_bwrap
def test_limits_hold_for_the_whole_sandboxed_bot() -> None:
    """Processes and disk are capped per bot (RLIMIT_NPROC on its own user, the size of its tmpfs); CPU per
    process; address space per process only where no memory cgroup bounds the whole bot."""
    limits = Limits(cpu_seconds=60, memory_bytes=1 << 30, sandbox="bwrap", processes=12, disk_bytes=4 << 20)

    async def main() -> dict[str, Any]:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(LIMIT_PROBE)}", limits=limits)
        await p.start()
        try:
            return dict(json.loads(await p.read_line()))
        finally:
            await p.close()

    seen = asyncio.run(main())
    address_space = -1 if cgroups.reason() is None else 1 << 30  # -1: RLIM_INFINITY
    assert seen["limits"] == {"RLIMIT_AS": address_space, "RLIMIT_CPU": 60, "RLIMIT_NPROC": 12}
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = OPEN_FILES if hard == resource.RLIM_INFINITY else min(OPEN_FILES, hard)
    assert seen["files"] == [files, files]  # no cgroup bounds the machine's file table: each process holds this many
    if os.geteuid() == 0 or os.environ.get("KOIKOI_TEST_NPROC"):
        assert seen["forks"] < 12  # the bot itself counts
    assert seen["mib"] <= 4


@needs_bwrap
def test_closing_a_sandboxed_bot_leaves_no_process(tmp_path: Path) -> None:
    """Children that leave the session and ignore SIGTERM die with the sandbox."""
    marker = f"koikoi-marker-{os.getpid()}-{tmp_path.name}"
    code = (
        "import os, signal, subprocess, sys, time\n"
        "for _ in range(3):\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import os, signal, time; os.setsid(); "
        f"signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)', {marker!r}])\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )

    async def main() -> None:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}", limits=Limits(sandbox="bwrap"))
        await p.start()
        assert await p.read_line() == b"ready"
        assert len(with_marker(marker)) >= 3  # the children (and the bot, whose code names the marker)
        await p.close(exit_wait_s=0.05, grace_s=0.05)

    asyncio.run(main())
    for _ in range(100):  # the kernel kills the namespace right away; give a loaded machine time to show it
        if not with_marker(marker):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert with_marker(marker) == []


def with_marker(marker: str, also: bytes = b"") -> list[int]:
    """Live processes whose command line holds ``marker`` (and ``also``)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if marker.encode() in cmdline and also in cmdline and state != "Z":
                out.append(int(entry))
    return out


def play_one(command: str) -> tuple[Any, tuple[str, str]]:
    rules = dataclasses.replace(load_rules("guide"), rounds=1)
    result = run_match((command, FIRST), MatchConfig(rules=rules, seed=7), limits=Limits(sandbox="bwrap"))
    return result.forfeit, result.names


@needs_bwrap
def test_a_py_bot_run_by_a_venv_under_tmp() -> None:
    # the sandbox mounts a /tmp of its own over the host's: an interpreter under the host's /tmp is bound over it
    folder = Path(tempfile.mkdtemp(prefix="koikoi-venv-", dir="/tmp"))
    try:
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        assert play_one(f"{venv / 'bin' / 'python'} {FIRST}") == (None, ("first", "first"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@needs_bwrap
def test_a_bot_started_as_python3_through_a_version_manager_shim(monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv")))
    shims = root / "shims"
    if not (shims / "python3").is_file():
        pytest.skip("no pyenv shim for python3 on this machine")
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    assert shutil.which("python3") == str(shims / "python3")
    assert play_one(f"python3 {FIRST}") == (None, ("first", "first"))


@needs_bwrap
def test_a_node_bot() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    forfeit, names = play_one(str(ROOT / "bots" / "random_bot.js"))
    assert forfeit is None and names[0] == "random-js"


@needs_bwrap
def test_a_compiled_bot() -> None:
    if shutil.which(os.environ.get("CC", "gcc")) is None:
        pytest.skip("no C compiler")
    forfeit, names = play_one(f"{ROOT / 'bots' / 'random_bot_c.sh'} {ROOT / 'bots' / 'c' / 'random_bot.c'}")
    assert forfeit is None and names[0] == "random-c"


@needs_bwrap
def test_a_compiled_binary(tmp_path: Path) -> None:
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None:
        pytest.skip("no C compiler")
    binary = tmp_path / "bin" / "random_bot"
    binary.parent.mkdir()
    subprocess.run([cc, "-O2", "-std=c99", "-o", str(binary), str(ROOT / "bots" / "c" / "random_bot.c")], check=True)
    forfeit, names = play_one(str(binary))
    assert forfeit is None and names[0] == "random-c"


LIBRARY_BOT = """\
import os, sys
import referee
if os.path.dirname(os.path.realpath(referee.__file__)) != os.environ["EXPECTED"]:
    sys.exit("referee imported from " + referee.__file__)
from referee.bot import run
sys.exit(run(lambda request: request["legal"][0], name="library"))
"""


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_py_bot_imports_the_library_of_the_referee_that_runs_it(tmp_path: Path, mode: str) -> None:
    # a referee run from a source checkout (PYTHONPATH), not the installed package: its Python bots import
    # ``referee.bot`` from that checkout, sandboxed or not, whatever version is installed
    if mode == "bwrap" and bwrap_path() is None:
        pytest.skip("bwrap is not installed (apt-get install bubblewrap)")
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "referee", checkout / "referee", ignore=shutil.ignore_patterns("__pycache__"))
    bot = tmp_path / "library_bot.py"
    bot.write_text(LIBRARY_BOT)
    expected = str((checkout / "referee").resolve())
    code = "import sys; from referee.cli import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    argv = [sys.executable, "-c", code, "play", str(bot), FIRST, "--rounds", "1", "--json", "--sandbox", mode,
            "--bot-env", f"EXPECTED={expected}"]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["forfeit"] is None and result["names"] == ["library", "first"], proc.stdout


def run_play(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).parent / "koikoi-referee")
    return subprocess.run(
        [exe, "play", FIRST, FIRST, "--rounds", "1", "--json", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, **env}, cwd=ROOT,
    )  # fmt: skip


def test_sandbox_bwrap_where_it_cannot_work_is_a_one_line_error(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    cases = {
        str(tmp_path / "missing"): "is not an executable file",
        str(fake): "kernel.apparmor_restrict_unprivileged_userns=0",
    }
    for path, reason in cases.items():
        out = run_play("--sandbox", "bwrap", env={"KOIKOI_REFEREE_BWRAP": path})
        assert out.returncode == 2 and out.stdout == ""
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("koikoi-referee: error: --sandbox bwrap:"), out.stderr
        assert reason in lines[0]
    (tmp_path / "empty").mkdir()
    no_path = run_play("--sandbox", "bwrap", env={"PATH": str(tmp_path / "empty")})  # bwrap not on PATH
    assert no_path.returncode == 2 and "bwrap not found" in no_path.stderr and len(no_path.stderr.splitlines()) == 1


def test_sandbox_auto_falls_back_with_a_one_line_warning(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    out = run_play("--replay", str(replay), env={"KOIKOI_REFEREE_BWRAP": "/bin/false"})
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        "koikoi-referee: warning: bots run without a sandbox: bwrap does not work here: no message"
    ]
    header = json.loads(replay.read_text().splitlines()[0])
    assert [b["sandbox"] for b in header["bots"]] == ["none", "none"]


@needs_bwrap
def test_the_replay_header_names_the_sandbox(tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    out = run_play("--replay", str(replay), "--sandbox", "bwrap", env={})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    header = json.loads(replay.read_text().splitlines()[0])
    assert [b["sandbox"] for b in header["bots"]] == ["bwrap", "bwrap"]


def test_explain_names_the_fix_for_restricted_user_namespaces() -> None:
    line = explain("bwrap: setting up uid map: Permission denied\n")
    assert "AppArmor" in line and "kernel.apparmor_restrict_unprivileged_userns=0" in line and "\n" not in line
    assert "\n" not in explain("bwrap: Creating new namespace failed: Operation not permitted\n")


def test_options_are_checked() -> None:
    assert parse_env(["A=1", "B_2=x=y", "C="]) == (("A", "1"), ("B_2", "x=y"), ("C", ""))
    for bad in ("A", "=1", "1A=2", "A-B=1"):
        with pytest.raises(SandboxError, match="--bot-env"):
            parse_env([bad])
    with pytest.raises(SandboxError, match="unknown sandbox"):
        choose("docker")
    assert choose("none").mode == "none"
    base: dict[str, Any] = {"bots": {"a": "x", "b": "y"}, "seed": 1}
    cfg = config_from_dict({**base, "sandbox": "none", "bot_env": {"A": "1"}})
    assert cfg.sandbox == "none" and cfg.bot_env == (("A", "1"),)
    assert type(cfg).from_json(cfg.to_json()) == cfg
    with pytest.raises(TournamentError, match="sandbox"):
        config_from_dict({**base, "sandbox": "docker"})
    with pytest.raises(TournamentError, match="bot_env"):
        config_from_dict({**base, "bot_env": {"A": 1}})


@needs_bwrap
def test_a_referee_killed_with_sigkill_leaves_no_sandboxed_process(tmp_path: Path) -> None:
    """bwrap's --die-with-parent: the sandbox, with every process in it, dies with the referee."""
    marker = f"koikoi-killed-{os.getpid()}-{tmp_path.name}"
    bot = tmp_path / "hang.py"
    bot.write_text(
        "import json, subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(600)', sys.argv[1]])\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line)['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'name': 'hang'}), flush=True)\n"
    )
    exe = str(Path(sys.executable).parent / "koikoi-referee")
    referee = subprocess.Popen(
        [exe, "play", f"{bot} {marker}", f"{bot} {marker}", "--move-ms", "60000", "--sandbox", "bwrap"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(600):  # both bots and both helpers started (a loaded machine may take a while)
            if len(with_marker(marker, also=b"setsid")) >= 2:
                break
            asyncio.run(asyncio.sleep(0.05))
        assert with_marker(marker)
    finally:
        referee.kill()
        referee.wait(30)
    for _ in range(200):
        if not with_marker(marker):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert with_marker(marker) == []


def test_a_tournament_takes_the_sandbox_from_its_file_or_the_option(tmp_path: Path) -> None:
    exe = str(Path(sys.executable).parent / "koikoi-referee")
    toml = tmp_path / "t.toml"
    toml.write_text(f'sandbox = "bwrap"\nseed = 1\npairs = 1\n[bots]\na = "{FIRST}"\nb = "{FIRST}"\n')
    broken = {**os.environ, "KOIKOI_REFEREE_BWRAP": "/bin/false"}

    def tournament(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, "tournament", "-c", str(toml), "--no-html", "-j", "1", *args],
                              capture_output=True, text=True, timeout=120, env=broken)  # fmt: skip

    out = tournament("-o", str(tmp_path / "a"))
    assert out.returncode == 2 and not (tmp_path / "a").exists()
    assert out.stderr.splitlines() == [
        "koikoi-referee: error: --sandbox bwrap: bwrap does not work here: no message"
    ]
    out = tournament("-o", str(tmp_path / "b"), "--sandbox", "auto")
    assert out.returncode == 0, out.stderr
    assert "koikoi-referee: warning: bots run without a sandbox: bwrap does not work here" in out.stderr
    header = json.loads(next((tmp_path / "b" / "replays").iterdir()).read_text().splitlines()[0])
    assert [b["sandbox"] for b in header["bots"]] == ["none", "none"]
    # the folder, the standings and the table say that the bots ran unsandboxed
    assert json.loads((tmp_path / "b" / "tournament.json").read_text())["config"]["sandbox"] == "none"
    assert json.loads((tmp_path / "b" / "standings.json").read_text())["sandbox"] == "none"
    assert "the bots ran without a sandbox" in out.stdout
