"""Fair play: the syscall filter, the bot's cgroup (memory of every kind, processes, CPU quota), the freezer,
unique user ids and a process list that shows no host path. Every case runs a real bot process in the real
sandbox with real cgroups where the machine has them (this machine kind: cgroup v1 with the unified hierarchy
beside it)."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import multiprocessing as mp
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.engine import PRESETS
from referee.match import MatchConfig, TimeControl, play_match
from referee.seats import BotSeat
from referee.seats.process import BotClosedError, BotProcess, Limits, cgroups, seccomp
from referee.seats.sandbox import BASH, LAUNCHER, bot_uid, bwrap_path
from tests.helpers import FIRST, ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

REFEREE = str(Path(sys.executable).parent / "koikoi-referee")
needs_bwrap = pytest.mark.skipif(bwrap_path() is None, reason="bwrap is not installed (apt-get install bubblewrap)")
needs_cgroups = pytest.mark.skipif(cgroups.reason() is not None, reason=f"no usable cgroups: {cgroups.reason()}")
needs_filter = pytest.mark.skipif(seccomp.reason() is not None, reason=f"no syscall filter: {seccomp.reason()}")


def replay_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a replay as JSON."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_probe(code: str, limits: Limits) -> tuple[dict[str, Any], BotProcess]:
    """Start ``code`` as a bot process under ``limits`` and return the JSON line it prints."""

    async def main() -> tuple[dict[str, Any], BotProcess]:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}", limits=limits)
        await p.start()
        try:
            return dict(json.loads(await p.read_line(60.0))), p
        finally:
            await p.close()

    return asyncio.run(main())


SYSCALLS = r"""
import ctypes, errno, fcntl, json, os, struct
libc = ctypes.CDLL(None, use_errno=True)
NR = {"add_key": 248, "keyctl": 250, "request_key": 249, "ptrace": 101, "unshare": 272, "setns": 308,
      "io_uring_setup": 425, "perf_event_open": 298, "bpf": 321, "userfaultfd": 323, "mount": 165,
      "clone3": 435, "process_vm_readv": 310, "inotify_init1": 294, "personality": 135, "kexec_load": 246,
      "pivot_root": 155, "open_by_handle_at": 304}
args = {"add_key": (b"user", b"koikoi", b"x", 1, -3), "keyctl": (0, -3, 0, 0, 0), "personality": (0x0040000,),
        "unshare": (0x10000000,), "ptrace": (16, 1, 0, 0), "clone3": (0, 0)}
out = {}
for name, nr in NR.items():
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args.get(name, (0, 0, 0, 0, 0)))
    out[name] = errno.errorcode.get(ctypes.get_errno(), "ok") if r == -1 else "ok"
f = open(json.__file__, "rb")  # shared by every sandbox; /etc/passwd is the collusion tests' board
for name, call in (("flock", lambda: fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                   ("ofd_lock", lambda: fcntl.fcntl(f, 37, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 1, 0))),
                   ("posix_lock", lambda: fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB))):
    try:
        call()
        out[name] = "ok"
    except OSError as exc:
        out[name] = errno.errorcode[exc.errno]
print(json.dumps(out), flush=True)
"""


@needs_bwrap
@needs_filter
def test_the_filter_denies_each_channel_and_escape_with_an_error_number_not_a_kill() -> None:
    seen, proc = run_probe(SYSCALLS, Limits(sandbox="bwrap"))
    assert proc.isolation["filter"] == "seccomp"
    for name in ("clone3", "io_uring_setup"):
        assert seen.pop(name) == "ENOSYS", name  # "not implemented": runtimes fall back
    assert seen == dict.fromkeys(seen, "EPERM"), seen


@needs_bwrap
def test_without_the_filter_the_same_calls_reach_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the switch turns the filter off, and a lock on a shared file is taken again."""
    monkeypatch.setenv(seccomp.SWITCH_VAR, "off")
    seen, proc = run_probe(SYSCALLS, Limits(sandbox="bwrap"))
    assert proc.isolation["filter"] == "off"
    assert seen["flock"] == seen["ofd_lock"] == seen["posix_lock"] == "ok"
    assert seen["add_key"] == "ok" or seen["add_key"] != "EPERM"  # the kernel's answer, not the filter's


PROC_VIEW = r"""
import json, os
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
lines = {p: open(f"/proc/{p}/cmdline", "rb").read().split(b"\0") for p in pids}
print(json.dumps({"cmdlines": {p: [a.decode() for a in v if a] for p, v in lines.items()},
                  "meminfo": open("/proc/meminfo").read(), "locks": open("/proc/locks").read(),
                  "loadavg": open("/proc/loadavg").read()}), flush=True)
"""


@needs_bwrap
def test_the_sandbox_process_list_shows_no_host_path_and_machine_wide_files_are_masked() -> None:
    seen, _ = run_probe(PROC_VIEW, Limits(sandbox="bwrap", memory_bytes=300 << 20))
    cmdlines = seen["cmdlines"]
    first = cmdlines["1"]
    shell = BASH if os.path.isfile(BASH) else "/bin/sh"  # bash where it moves the bot's stdout into place
    assert first[0].endswith("bwrap") and first[1] == "--args" and first[3:] == ["--", shell, LAUNCHER], first
    everything = " ".join(" ".join(v) for k, v in cmdlines.items() if k == "1")
    for host in (sys.prefix, str(ROOT), os.path.expanduser("~"), "--ro-bind", "--seccomp"):
        assert host not in everything
    assert seen["locks"] == ""
    assert seen["loadavg"].startswith("0.00 0.00 0.00")
    assert f"MemTotal:       {300 << 10:>8} kB" in seen["meminfo"]


MEMFD = r"""
import json, os, time
held, fds = 0, []
try:
    while held < (1 << 30):
        fd = os.memfd_create("hold")
        os.posix_fallocate(fd, 0, 32 << 20)  # never mapped: in nobody's resident set
        fds.append(fd)
        held += 32 << 20
except OSError as exc:
    print(json.dumps({"held": held, "error": exc.strerror}), flush=True)
    time.sleep(30)
print(json.dumps({"held": held, "error": None}), flush=True)
time.sleep(30)
"""


@needs_bwrap
@needs_cgroups
def _cached(path: Path) -> bool:
    """Whether the first page of ``path`` is in the page cache (mincore on a mapping: nothing is read)."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        vec = (ctypes.c_ubyte * 1)()
        assert libc.mincore(ctypes.c_void_p(address), 4096, vec) == 0, ctypes.get_errno()
        libc.munmap(ctypes.c_void_p(address), 4096)
        return bool(vec[0] & 1)
    finally:
        os.close(fd)


def _evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@needs_bwrap
@needs_cgroups
def test_the_page_cache_a_bot_brought_in_goes_with_it(tmp_path: Path) -> None:
    # a page a first-game process read, still cached when the twin game's process probes it, is a bit of a
    # channel between them: the pages a bot's group brought into the cache are dropped when it is closed
    data = tmp_path / "shared.bin"
    data.write_bytes(os.urandom(1 << 20))
    os.sync()
    _evict(data)
    if _cached(data):
        pytest.skip(f"{tmp_path} keeps its pages in memory (tmpfs): nothing to drop")
    release = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    if cgroups.support().version == "v2" and release < (5, 19):
        pytest.skip("cgroup v2 before Linux 5.19 has no memory.reclaim")
    reader = (f"import sys, json; open({str(data)!r}, 'rb').read(4096); print(json.dumps({{'type': 'hello', "
              "'name': 'reader'}), flush=True); sys.stdin.read()")  # fmt: skip

    async def main() -> tuple[bool, bool]:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(reader)} {data}",
                       limits=Limits(sandbox="bwrap"))  # fmt: skip
        await p.start()
        await p.read_line()
        during = _cached(data)
        await p.close()
        return during, _cached(data)

    during, after = asyncio.run(main())
    assert during, "the bot's read did not bring the page in"
    assert not after, "the page the bot read is still cached after it was closed"


def test_memfd_memory_counts_against_the_bot_and_never_exceeds_its_limit() -> None:
    limit = 256 << 20

    async def main() -> tuple[str, int, str | None]:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(MEMFD)}",
                       limits=Limits(sandbox="bwrap", memory_bytes=limit))  # fmt: skip
        await p.start()
        try:
            try:
                line = (await p.read_line(60.0)).decode()
            except BotClosedError as exc:
                line = str(exc)
            return line, p.peak_memory, p.killed_for
        finally:
            await p.close()

    line, peak, killed = asyncio.run(main())
    assert 0 < peak <= limit, (peak, line)
    if line.startswith("{"):  # the allocation failed inside the limit
        report = json.loads(line)
        assert report["error"] is not None and report["held"] <= limit
    else:  # or the kernel killed it at the limit, and the bot as a whole ends
        assert "MiB limit" in line and killed is not None


@needs_bwrap
@needs_cgroups
def test_the_cgroup_holds_the_limits_and_the_bot_s_processes(tmp_path: Path) -> None:
    code = "import json, os\nprint(json.dumps({'pid': os.getpid()}), flush=True)\nimport time\ntime.sleep(30)\n"

    async def main() -> dict[str, str]:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}",
                       limits=Limits(sandbox="bwrap", memory_bytes=300 << 20, processes=33, cpus=0.5))  # fmt: skip
        await p.start()
        try:
            await p.read_line(60.0)
            group = p.cgroup
            assert group is not None and group.pids(), "every process of the bot is in its group"
            files = {
                "memory": "memory.max" if group.support.version == "v2" else "memory.limit_in_bytes",
                "pids": "pids.max",
                "cpu": "cpu.max" if group.support.version == "v2" else "cpu.cfs_quota_us",
            }
            return {c: (group.folders[c] / f).read_text().strip() for c, f in files.items()}
        finally:
            await p.close()
            assert p.cgroup is not None and not any(f.exists() for f in p.cgroup.folders.values())

    seen = asyncio.run(main())
    assert seen["memory"] == str(300 << 20) and seen["pids"] == "33"
    assert seen["cpu"] in ("50000", "50000 100000")


FORKER = r"""
import json, os, sys, time
print(json.dumps({"pid": os.getpid()}), flush=True)
sys.stdin.readline()  # forks after the first freeze and thaw
child = os.fork()
if child == 0:
    time.sleep(60)
    os._exit(0)
print(json.dumps({"child": child}), flush=True)
time.sleep(60)
"""


@needs_bwrap
@needs_cgroups
def test_the_freezer_stops_the_bot_and_its_later_children_but_not_bwrap() -> None:
    """bwrap's monitor and the sandbox's pid 1 leave the frozen group at the first freeze (a freeze then wakes
    fewer processes); the bot's first process and a child it forks afterwards stay in it and are stopped."""

    def members(folder: Path) -> set[str]:
        return set((folder / "cgroup.procs").read_text().split())

    def comms(pids: set[str]) -> list[str]:
        return sorted(Path(f"/proc/{p}/comm").read_text().strip() for p in pids)

    def stopped(folder: Path) -> bool:
        if (folder / "cgroup.events").exists():
            return "frozen 1" in (folder / "cgroup.events").read_text()
        return (folder / "freezer.state").read_text().strip() == "FROZEN"

    async def main() -> None:
        p = BotProcess(f"{shlex.quote(sys.executable)} -c {shlex.quote(FORKER)}", limits=Limits(sandbox="bwrap"))
        await p.start()
        try:
            await p.read_line(60.0)
            group = p.cgroup
            assert group is not None and group.turn is not None
            before = comms(members(group.turn))
            assert len(before) == 3 and before.count("bwrap") == 2  # bwrap's two processes and the bot
            p.freeze()
            assert group.released and comms(members(group.folders["freeze"])) == ["bwrap", "bwrap"]
            (bot,) = members(group.turn)
            for _ in range(200):  # the kernel reports the group frozen once each member has stopped
                if stopped(group.turn):
                    break
                await asyncio.sleep(0.01)
            assert stopped(group.turn)
            assert not stopped(group.folders["freeze"])
            p.thaw()
            p.write(b"go\n")
            json.loads(await p.read_line(60.0))
            assert len(members(group.turn)) == 2 and bot in members(group.turn)  # the child is in the frozen group
            assert {str(q) for q in group.pids()} >= members(group.turn) | members(group.folders["freeze"])
            p.freeze()
            for _ in range(200):
                if stopped(group.turn):
                    break
                await asyncio.sleep(0.01)
            assert stopped(group.turn)
            p.thaw()
        finally:
            await p.close()
        assert not group.turn.exists() and not any(f.exists() for f in group.folders.values())

    asyncio.run(main())


SPINNER = r"""
import json, sys, threading, time
gaps = []
def spin():
    last = time.monotonic()
    while True:
        now = time.monotonic()
        if now - last > 0.15:
            gaps.append(now - last)
        last = now
threading.Thread(target=spin, daemon=True).start()
for raw in sys.stdin:
    msg = json.loads(raw)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "spinner"}), flush=True)
    elif msg["type"] == "request":
        time.sleep(0.05)  # the spinning thread, just thawed, records the stop that ended before the list is written
        sys.stderr.write(json.dumps({"gaps": gaps}) + "\n")
        sys.stderr.flush()
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        time.sleep(0.1)
        break
sys.stderr.write(json.dumps({"gaps": gaps}) + "\n")  # the referee may close the bot before this: then the last list
"""
SLEEPY = r"""
import json, sys, time
for raw in sys.stdin:
    msg = json.loads(raw)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "sleepy"}), flush=True)
    elif msg["type"] == "request":
        time.sleep(0.3)
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


@needs_bwrap
@pytest.mark.parametrize("freezer", ["cgroup", "sigstop"])
def test_a_bot_does_not_run_while_its_opponent_thinks(tmp_path: Path, freezer: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A bot's thread that spins all the time is stopped for the whole of each of the opponent's turns (0.3 s
    each): its clock stands still for at least that long for every turn the opponent took after it answered. On a
    busy machine the thread may not be scheduled in the bot's own short turn, so two stops can show as one jump of
    twice the length: the jumps are summed, not counted. The bot writes them at each request and at the bye; a busy
    machine may close it before the bye's list is written, so the stop after its last answer may be missing. With
    its cgroup's freezer, and without cgroups (SIGSTOP to every process of the bot)."""
    if freezer == "cgroup" and cgroups.reason() is not None:
        pytest.skip(f"no usable cgroups: {cgroups.reason()}")
    if freezer == "sigstop":
        monkeypatch.setattr(cgroups, "reason", lambda: "cgroups switched off for the test")
    spinner, sleepy = tmp_path / "spinner.py", tmp_path / "sleepy.py"
    spinner.write_text(SPINNER)
    sleepy.write_text(SLEEPY)
    log = tmp_path / "spinner.log"

    async def main() -> int:
        seats = (BotSeat(str(spinner), stderr_path=log), BotSeat(str(sleepy)))
        rules = dataclasses.replace(PRESETS["guide"], rounds=1)
        config = MatchConfig(rules, 5, time=TimeControl(move_ms=5000), replay_path=tmp_path / "m.jsonl")
        try:
            await play_match(seats, config)
        finally:
            await asyncio.gather(*(s.close() for s in seats))
        return 0

    asyncio.run(main())
    lines = replay_lines(tmp_path / "m.jsonl")
    seats = [d["seat"] for d in lines if d["type"] == "decision"]
    switches = sum(1 for a, b in itertools.pairwise(seats) if a == 1 and b == 2)  # spinner, then sleepy
    gaps = json.loads(log.read_text().strip().splitlines()[-1])["gaps"]
    assert switches >= 3
    assert sum(g for g in gaps if g >= 0.28) >= 0.28 * (switches - 1), (switches, gaps)
    expected = "sigstop" if freezer == "sigstop" else cgroups.support().freezer
    assert [b["freezer"] for b in lines[0]["bots"]] == [expected, expected]


def test_ponder_is_recorded_and_turns_the_freezer_off() -> None:
    proc = BotProcess(FIRST, limits=Limits(ponder=True))
    assert proc.isolation["freezer"] == "off"
    assert BotProcess(FIRST).isolation["freezer"] in ("cgroup.freeze", "freezer.state", "sigstop")


def _uids(n: int, out: Any) -> None:
    out.put([bot_uid() for _ in range(n)])


def test_bot_uids_never_repeat_across_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_REFEREE_UID_STATE", str(tmp_path / "next-uid"))
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    workers = [ctx.Process(target=_uids, args=(300, out)) for _ in range(3)]
    for w in workers:
        w.start()
    seen = [uid for _ in workers for uid in out.get(timeout=60)]
    for w in workers:
        w.join()
    seen += [bot_uid() for _ in range(100)]
    assert len(seen) == len(set(seen)) == 1000
    assert (tmp_path / "next-uid").read_text().strip().isdigit()


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="bots get uids of their own only when the referee is root")
def test_two_sandboxed_bots_run_as_different_unprivileged_users() -> None:
    code = "import json, os\nprint(json.dumps({'uid': os.getuid(), 'gid': os.getgid()}), flush=True)\n"
    first, _ = run_probe(code, Limits(sandbox="bwrap"))
    second, _ = run_probe(code, Limits(sandbox="bwrap"))
    assert first["uid"] != second["uid"] and min(first["uid"], second["uid"]) >= 2_000_000_000


def test_the_replay_header_records_how_each_bot_was_held(tmp_path: Path) -> None:
    out = subprocess.run(
        [REFEREE, "play", FIRST, FIRST, "--rounds", "1", "--replay",
         str(tmp_path / "m.jsonl"), "--ponder"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    bots = replay_lines(tmp_path / "m.jsonl")[0]["bots"]
    assert [b["freezer"] for b in bots] == ["off", "off"]
    assert {b["limits"] for b in bots} <= {"cgroup-v1", "cgroup-v2", "rlimit"}


def test_outputs_inside_a_bot_readable_folder_are_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    cases = [
        (["play", FIRST, FIRST, "--bot-cwd", str(shared), "--replay", str(shared / "x.jsonl")],
         "--replay inside --bot-cwd: "),
        (["play", FIRST, FIRST, "--bot-file", str(shared), "--log-dir", str(shared / "logs")],
         "--log-dir inside --bot-file: "),
        (["tournament", "--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--bot-file", str(shared), "-o",
          str(shared / "t")], "--out inside --bot-file: "),
    ]  # fmt: skip
    for args, named in cases:
        out = subprocess.run([REFEREE, *args], capture_output=True, text=True,
                             timeout=120, cwd=ROOT)  # fmt: skip
        assert out.returncode == 2, (args, out.stderr)
        assert "which the bots can read" in out.stderr and "Traceback" not in out.stderr
        assert named in out.stderr and len(out.stderr.splitlines()) == 1, out.stderr
        assert not any(shared.iterdir())


def test_require_cgroups_is_an_error_where_they_cannot_be_used(tmp_path: Path) -> None:
    env = {**os.environ, cgroups.SWITCH_VAR: "off"}
    for args in (["play", FIRST, FIRST, "--require-cgroups"],
                 ["tournament", "--bot", f"a={FIRST}", "--bot", f"b={FIRST}", "--require-cgroups", "-o",
                  str(tmp_path / "t")]):  # fmt: skip
        out = subprocess.run([REFEREE, *args], capture_output=True, text=True,
                             timeout=120, cwd=ROOT, env=env)  # fmt: skip
        assert out.returncode == 2 and "--require-cgroups" in out.stderr, out.stderr
    warned = subprocess.run([REFEREE, "play", FIRST, FIRST, "--rounds", "1"],
                            capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)  # fmt: skip
    assert warned.returncode == 0 and "bots run without cgroups" in warned.stderr


def test_decision_times_are_unaffected_by_freezing_in_kind() -> None:
    """The clock starts after the thaw: a bot that answers at once is charged next to nothing."""
    rules = dataclasses.replace(PRESETS["guide"], rounds=1)

    async def main() -> list[float]:
        seats = (BotSeat(FIRST), BotSeat(FIRST))
        try:
            result = await play_match(seats, MatchConfig(rules, 9, time=TimeControl(move_ms=5000)))
        finally:
            await asyncio.gather(*(s.close() for s in seats))
        assert result.forfeit is None and result.seat_stats is not None
        return [s.total_ms / max(1, s.decisions) for s in result.seat_stats]

    means = asyncio.run(main())
    assert statistics.mean(means) < 1000  # far below the move time: no freezer cost or frozen time is charged


def _fake_v2(root: Path, own: str, procs: str, enabled: str = "") -> Path:
    """A cgroup v2 tree's files for the referee's group ``own`` (regular files stand in for the kernel's)."""
    base = root / own.lstrip("/")
    base.mkdir(parents=True)
    (base / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (base / "cgroup.subtree_control").write_text(enabled)
    (base / "cgroup.procs").write_text(procs)
    return base


def test_on_cgroup_v2_the_referee_moves_into_a_leaf_and_hands_the_controllers_down(tmp_path: Path) -> None:
    """A delegated v2 group (systemd-run --user --scope -p Delegate=yes): the referee's processes move into
    ``koikoi-referee-main`` and the memory, pids and cpu controllers are enabled below the group."""
    base = _fake_v2(tmp_path, "/user.slice/run-1.scope", "4242\n")
    (base / cgroups._LEAF).mkdir()
    (base / cgroups._LEAF / "cgroup.procs").write_text("")
    found = cgroups.detect([(str(tmp_path), "cgroup2", {"rw"})], {"0": "/user.slice/run-1.scope"})
    assert found.version == "v2" and found.freezer == "cgroup.freeze" and found.mode == "cgroup-v2"
    assert set(found.parents.values()) == {base}
    assert (base / cgroups._LEAF / "cgroup.procs").read_text().startswith("4242")
    assert (base / "cgroup.subtree_control").read_text().split() == ["+memory", "+pids", "+cpu"]


def test_on_cgroup_v2_missing_controllers_are_a_one_line_reason(tmp_path: Path) -> None:
    base = _fake_v2(tmp_path, "/user.slice", "1\n")
    (base / "cgroup.controllers").write_text("cpu io\n")
    with pytest.raises(cgroups.CgroupUnavailable, match="memory"):
        cgroups.detect([(str(tmp_path), "cgroup2", {"rw"})], {"0": "/user.slice"})
    with pytest.raises(cgroups.CgroupUnavailable, match="no cgroup hierarchy"):
        cgroups.detect([], {})


def test_on_a_hybrid_machine_v1_limits_take_the_unified_freezer(tmp_path: Path) -> None:
    mounts = [(str(tmp_path / c), "cgroup", {"rw", c}) for c in ("memory", "pids", "cpu", "freezer")]
    mounts.append((str(tmp_path / "unified"), "cgroup2", {"rw"}))
    for c in ("memory", "pids", "cpu", "freezer", "unified"):
        (tmp_path / c).mkdir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    if os.geteuid() != 0:
        with pytest.raises(cgroups.CgroupUnavailable, match="root"):
            cgroups.detect(mounts, {"0": "/"})
        return
    found = cgroups.detect(mounts, {"0": "/"})
    assert found.version == "v1" and found.freezer == "cgroup.freeze"
    assert found.parents["freeze"] == tmp_path / "unified" and found.parents["memory"] == tmp_path / "memory"
    no_unified = cgroups.detect(mounts[:-1], {})
    assert no_unified.freezer == "freezer.state" and no_unified.parents["freeze"] == tmp_path / "freezer"


def test_the_bot_joins_its_limits_then_the_freezer_s_child_group_last(tmp_path: Path) -> None:
    """The join order decides where the bot's first process ends up: on cgroup v2 (one folder for everything)
    only the freezer's child, inside the limits folder; on v1 each limits folder, then that child."""
    bot = tmp_path / "bot-1"
    v2 = cgroups.BotCgroup(
        cgroups.Support("v2", {}, "cgroup.freeze"), dict.fromkeys(("memory", "pids", "cpu", "freeze"), bot)
    )
    v2.turn = bot / cgroups.TURN
    assert v2.procs_files == [f"{bot}/turn/cgroup.procs"]
    folders = {c: tmp_path / c / "bot-1" for c in ("memory", "pids", "cpu")} | {
        "freeze": tmp_path / "unified" / "bot-1"
    }
    v1 = cgroups.BotCgroup(cgroups.Support("v1", {}, "cgroup.freeze"), folders)
    v1.turn = folders["freeze"] / cgroups.TURN
    assert v1.procs_files == [f"{tmp_path}/{c}/bot-1/cgroup.procs" for c in ("cpu", "memory", "pids")] + [
        f"{tmp_path}/unified/bot-1/turn/cgroup.procs"
    ]
    none = cgroups.BotCgroup(cgroups.Support("v1", {}, "sigstop"), {c: folders[c] for c in ("memory", "pids", "cpu")})
    assert none.procs_files == [f"{tmp_path}/{c}/bot-1/cgroup.procs" for c in ("cpu", "memory", "pids")]


@needs_cgroups
def test_a_run_folder_removed_by_another_referee_is_made_again() -> None:
    """Another referee's sweep may remove this process's empty folders (it cannot see this process in another
    pid namespace): the next bot's group is made in a new one."""
    first = cgroups.BotCgroup.create(cgroups.Quota(None, None, None))
    runs = {f.parent for f in first.folders.values()}
    first.remove()
    for run in runs:  # as a sweep does: the empty run folders go
        run.rmdir()
    second = cgroups.BotCgroup.create(cgroups.Quota(64 << 20, 8, 0.5))
    try:
        assert all(f.is_dir() for f in second.folders.values()) and second.turn is not None and second.turn.is_dir()
        assert not {f.parent for f in second.folders.values()} & runs
    finally:
        second.remove()
    assert not any(f.exists() for f in second.folders.values())


def test_a_sweep_leaves_the_folders_of_referees_in_other_pid_namespaces(tmp_path: Path) -> None:
    """A referee's sweep removes the empty folders of gone referees of its own pid namespace only: a pid it cannot
    see may be a live referee in another namespace (a container, ``unshare --pid``)."""
    dead = 2**22 + 7  # above the default pid_max: no process has it
    own = cgroups._pid_namespace()
    mine = tmp_path / f"koikoi-referee-{dead}-abcdef-{own}"
    other = tmp_path / f"koikoi-referee-{dead}-abcdef-p1"
    legacy = tmp_path / f"koikoi-referee-{dead}-abcdef"
    for folder in (mine, other, legacy):
        (folder / "bot-1" / cgroups.TURN).mkdir(parents=True)
    cgroups._sweep_stale(tmp_path)
    assert not mine.exists() and other.is_dir() and legacy.is_dir()
