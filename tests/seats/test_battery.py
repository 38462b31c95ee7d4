"""The hostile-bot battery: every way a bot can attack the referee, each through a real match (``run_match`` or
the ``play`` command in a subprocess), with its expected recorded outcome, a bound on how long the match may
take, and a check that no process the bot created is left (by pid and start time, and by process group).

Each case runs through the library twice, without a sandbox and in the bwrap sandbox (where bwrap works), and
the ``play`` cases run with the command's default sandbox. The processes of a bot are found by its pid file
(a list of pids and start times, written where the bot can write it) and by the pid file's path on their
command line, which holds inside a sandbox too.

The bounds are generous (several times the expected figure): they catch a referee that hangs, not a slow
machine. Each case adds to the run's battery tally, printed at the end of the pytest run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.engine import CARD_IDS, PRESETS, apply, ids_of, new_match, rules_from_dict
from referee.match import MatchConfig, MatchResult, SeatFactory, TimeControl, run_match, run_matches
from referee.protocol import action_from_json
from referee.replay import verify
from referee.seats import BotSeat
from referee.seats.process import Limits, cgroups
from referee.seats.sandbox import BASH, SandboxError, choose
from tests import helpers
from tests.helpers import FIRST, BatteryTally

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

HOSTILE = helpers.HOSTILE / "hostile_bot.py"
STD = TimeControl(startup_ms=5000, move_ms=300, bank_ms=1500)
SPY_MATCHES = 40
BUSY = 4
"""How many times a case's bound (what a match takes at most on an idle machine) a busy machine is given: what
the bound catches is a referee that waits for ever, not a slow one."""
SPIN = TimeControl(startup_ms=5000, move_ms=20_000, bank_ms=0)  # the CPU limit must come first
HOG = SPIN  # so must the memory limit: filling 256 MiB can take a busy machine more than a short move's time


@dataclass(frozen=True)
class Case:
    """A hostile mode, what the referee must record for it, and how long the match may take at most."""

    mode: str
    reason: str | None  # the forfeit reason of the hostile seat; None: the match ends normally
    detail: str  # a part of the forfeit detail (or of nothing)
    bound_s: float  # on an idle machine (see BUSY)
    time: TimeControl = STD
    limits: Limits | None = None
    cli: tuple[str, ...] | None = None  # run through `koikoi-referee play` with these extra options
    boxed: tuple[tuple[str, str], ...] = ()  # other (reason, detail) that are right in the sandbox


MEMORY_KILL = "over the 256 MiB limit" if cgroups.reason() is None else "status 1"

CASES = [
    Case("exit_now", "crash", "", 15),
    Case("crash_mid", "crash", "status 9", 15),
    Case("no_handshake", "timeout", "no hello within 2000 ms", 15, TimeControl(startup_ms=2000)),
    Case("hang_after", "timeout", "no answer to request", 15),
    Case("slow", "timeout", "", 20, TimeControl(startup_ms=5000, move_ms=300, bank_ms=600)),
    Case("invalid_json", "invalid_json", "not a JSON line", 15),
    Case("wrong_shape", "invalid_message", "action", 15),
    Case("illegal", "illegal_action", "not one of the legal actions", 15),
    Case("double", "invalid_message", "does not answer request", 15),
    Case("huge_line", "oversized_line", "longer than", 30),
    Case("non_utf8", "invalid_json", "not a JSON line", 15),
    Case("stderr_flood", None, "", 30),
    # the bot's stdout reaches the sandbox as a descriptor bwrap's own processes close (where bash moves it into
    # place): a bot that closes it is seen to at once, sandboxed or not; without bash, bwrap holds it and it times out
    Case("close_stdout", "crash", "closed its stdout", 15,
         boxed=() if os.path.isfile(BASH) else (("timeout", "no answer to request"),)),
    Case("ignore_term", "timeout", "no answer to request", 15),
    Case("fork_child", "crash", "status 9", 15),
    Case("setsid_child", None, "", 20),
    Case("setsid_orphan", "timeout", "no answer to request", 15),
    Case("setsid_orphan", "timeout", "no answer to request", 30, cli=()),
    # The bot's memory cgroup kills it (where cgroups work); else RLIMIT_AS makes its allocation fail.
    Case("memory_hog", "crash", MEMORY_KILL, 20, HOG, limits=Limits(memory_bytes=256 << 20)),
    Case("memory_hog", "crash", MEMORY_KILL, 30, HOG, cli=("--bot-memory-mb", "256")),
    # bwrap reports a bot killed by signal N as exit status 128 + N.
    Case("cpu_spin", "crash", "killed by SIG", 30, SPIN, Limits(cpu_seconds=1), boxed=(("crash", "status 152"),)),
    Case("cpu_spin", "crash", "killed by SIG", 30, SPIN, cli=("--bot-cpu-s", "1"), boxed=(("crash", "status 152"),)),
    Case("cpu_spin", "timeout", "no answer to request", 15, TimeControl(startup_ms=5000, move_ms=500, bank_ms=500)),
]


def case_id(case: Case) -> str:
    tail = "-cli" if case.cli is not None else "-limit" if case.limits is not None else ""
    return case.mode + tail


def bwrap_problem() -> str | None:
    """Why the bwrap sandbox cannot run here, or None."""
    try:
        choose("bwrap")
    except SandboxError as exc:
        return str(exc)
    return None


NO_BWRAP = bwrap_problem()
RUNS = [
    *(pytest.param(c, "none", id=f"{case_id(c)}-nosandbox") for c in CASES if c.cli is None),
    *(pytest.param(c, "bwrap", id=f"{case_id(c)}-bwrap",
                   marks=pytest.mark.skipif(NO_BWRAP is not None, reason=f"bwrap cannot run here: {NO_BWRAP}"))
      for c in CASES if c.cli is None),
    *(pytest.param(c, "default", id=case_id(c)) for c in CASES if c.cli is not None),
]  # fmt: skip


def read_start(pid: int) -> tuple[int, str] | None:
    """(start time, state) of a live process, None if there is none."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2 :].split()
    return int(fields[19]), fields[0].decode()


def survivors(pidfile: Path) -> list[int]:
    """The processes a hostile bot recorded that still run (same pid and start time, not a zombie), any live
    member of their process groups, and any live process with the pid file's path on its command line."""
    recorded = [tuple(map(int, x.split())) for x in pidfile.read_text().splitlines()] if pidfile.exists() else []
    alive = [pid for pid, start in recorded if read_start(pid) in ((start, "R"), (start, "S"), (start, "D"),
                                                                  (start, "T"))]  # fmt: skip
    groups = {pid for pid, _ in recorded}
    mark = str(pidfile).encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                raw = Path(f"/proc/{entry}/stat").read_bytes()
                line = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            fields = raw[raw.rindex(b")") + 2 :].split()
            if (int(fields[2]) in groups or mark in line) and fields[0] != b"Z" and int(entry) not in alive:
                alive.append(int(entry))
    return alive


def wait_for_no_survivors(pidfile: Path, patience_s: float = 2.0) -> list[int]:
    """Survivors, after letting SIGKILL land (it is delivered at once; this only absorbs a busy scheduler)."""
    deadline = time.monotonic() + patience_s
    while (left := survivors(pidfile)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def play_cli(case: Case, pidfile: Path, replay: Path, referee_exe: Path) -> tuple[dict[str, object], int]:
    """One match through ``koikoi-referee play``; the JSON result and the referee's peak RSS (KiB)."""
    rss = replay.with_suffix(".rss")
    tc = case.time
    argv = [
        "play", FIRST, f"{HOSTILE} {case.mode} {pidfile}", "--json", "--seed", "5", "--replay", str(replay),
        "--startup-ms", str(tc.startup_ms), "--move-ms", str(tc.move_ms), "--bank-ms", str(tc.bank_ms),
        *(case.cli or ()),
    ]  # fmt: skip
    code = (
        "import resource, sys\n"
        "from referee.cli import main\n"
        f"sys.argv = ['koikoi-referee', *{argv!r}]\n"
        "try:\n    main()\n"
        "finally:\n"
        f"    open({str(rss)!r}, 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1]), int(rss.read_text())


def outcome_of(result: MatchResult) -> dict[str, object]:
    return result.to_json()


@pytest.mark.parametrize(("case", "sandbox"), RUNS)
def test_a_hostile_bot_gets_its_outcome_in_time_and_leaves_no_process(
    case: Case, sandbox: str, tmp_path: Path, battery: BatteryTally, referee_exe: Path
) -> None:
    pidfile = tmp_path / "pids"
    replay = tmp_path / "r.jsonl"
    logs = tmp_path / "logs"
    battery.cases += 1
    t0 = time.monotonic()
    if case.cli is not None:
        result, _ = play_cli(case, pidfile, replay, referee_exe)
    else:
        config = MatchConfig(PRESETS["guide"], 5, time=case.time, replay_path=replay)
        command = f"{HOSTILE} {case.mode} {pidfile}"
        limits = dataclasses.replace(case.limits or Limits(), sandbox=sandbox)
        result = outcome_of(run_match((FIRST, command), config, log_dir=logs, limits=limits))
    took = time.monotonic() - t0
    left = wait_for_no_survivors(pidfile)
    battery.orphans += len(left)
    forfeit = result["forfeit"]
    if case.reason is None:
        as_expected = forfeit is None and result["reason"] in ("rounds", "broke")
    else:
        right = [(case.reason, case.detail), *(case.boxed if sandbox != "none" else ())]
        as_expected = (
            isinstance(forfeit, dict) and forfeit["seat"] == 2 and result["winner"] == 1
            and result["reason"] == "forfeit"
            and any(forfeit["reason"] == r and d in str(forfeit["detail"]) for r, d in right)
        )  # fmt: skip
    in_time = took < case.bound_s * BUSY
    battery.expected += as_expected and in_time and not left
    assert as_expected, (result["reason"], forfeit)
    assert in_time, f"the match took {took:.1f} s"
    assert not left, f"processes of the bot still run: {left}"
    if sandbox == "none":  # in a sandbox the pid file is read-only (the outcome shows that the bot ran)
        assert pidfile.exists() and pidfile.read_text().strip(), "the bot never ran"
    report = verify(replay)
    assert report.ok, report.summary()
    if case.mode == "stderr_flood":  # 20 MB of stderr: the log keeps 1 MiB
        log = logs / "m-0001-seat2.log"
        assert log.read_bytes().endswith(b"[stderr log truncated]\n")
        assert log.stat().st_size < (1 << 20) + 100


def test_a_100_mb_line_leaves_the_referee_memory_bounded(tmp_path: Path, referee_exe: Path) -> None:
    """The referee's peak RSS with a bot writing 100 MB without a newline stays close to a normal match's."""
    case = Case("huge_line", "oversized_line", "", 30, cli=())
    result, peak_huge = play_cli(case, tmp_path / "pids", tmp_path / "huge.jsonl", referee_exe)
    assert result["forfeit"] is not None
    normal = Case("ok", None, "", 30, cli=())
    result, peak_normal = play_cli(normal, tmp_path / "pids2", tmp_path / "ok.jsonl", referee_exe)
    assert result["forfeit"] is None
    print(f"referee peak RSS: {peak_normal} KiB normal, {peak_huge} KiB with a 100 MB line")
    assert peak_huge < peak_normal + 24 * 1024, (peak_huge, peak_normal)


def strings(value: object) -> list[str]:
    """Every string in a JSON value (keys and values), with repeats."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(x for v in value.values() for x in strings(v))]
    if isinstance(value, list):
        return [x for v in value for x in strings(v)]
    return []


def hidden_facts(replay: Path) -> tuple[list[list[set[str]]], list[list[set[str]]], int]:
    """From a replay: per seat, the cards hidden from it at each of its decisions (the opponent's hand and the
    stock left); per seat and deal, the cards it must never see in that deal; and the seed."""
    lines = [json.loads(x) for x in replay.read_text().splitlines()]
    header = lines[0]
    fd = header["first_dealer"]
    state = new_match(rules_from_dict(header["rules"]), header["seed"], (), None if fd is None else fd - 1)
    at: list[list[set[str]]] = [[], []]
    never: list[list[set[str]]] = [[], []]
    for line in lines[1:]:
        if line["type"] == "decision":
            p = line["seat"] - 1
            stock = {CARD_IDS[c] for c in state.stock[state.stock_pos :]}
            at[p].append(set(ids_of(state.hands[1 - p])) | stock)
            state = apply(state, action_from_json(line["action"], state))
        elif line["type"] == "event" and line["event"] in ("round_start", "misdeal"):
            for s in (0, 1):
                never[s].append(set(line["hands"][1 - s]) | set(line["stock"]))
        elif line["type"] == "event" and line["event"] == "play":
            never[2 - line["seat"]][-1].discard(line["card"])  # the opponent of the player saw it
        elif line["type"] == "event" and line["event"] == "draw":
            for s in (0, 1):
                never[s][-1].discard(line["card"])
    return at, never, header["seed"]


def leaked_bytes(raw: bytes, at: list[set[str]], never: list[set[str]], seed: int) -> int:
    """Bytes of hidden cards, of the seed and of hidden field names in what one seat received in one match."""
    leaked = raw.count(str(seed).encode()) * len(str(seed))
    deal, seen, requests = -1, set[str](), 0
    for line in raw.splitlines():
        msg = json.loads(line)
        got = strings(msg)
        leaked += sum(len(x) for x in got if x in ("seed", "stock", "hands"))
        if msg["type"] == "event" and msg["event"] in ("round_start", "misdeal"):
            deal, seen = deal + 1, set()
        if deal >= 0:
            leaked += sum(len(x) for x in got if x in never[deal])
        seen.update(got)
        if msg["type"] == "request":
            leaked += sum(len(x) for x in seen & at[requests])
            requests += 1
    assert requests == len(at) and deal + 1 == len(never), "the spy's record and the replay disagree"
    return leaked


def test_no_bot_ever_receives_a_hidden_card_or_the_seed(tmp_path: Path, battery: BatteryTally) -> None:
    """Random matches (presets, 52-bit seeds, random play) between sandboxed spies that copy their stdin to their
    stderr (the referee's log of each): every byte each seat received is checked against the replay's full
    deals, request by request."""
    rng = random.Random(20261129)
    presets = sorted(PRESETS)
    configs = [
        MatchConfig(PRESETS[rng.choice(presets)], rng.getrandbits(52), match_id=f"m-{k:04d}",
                    time=TimeControl(move_ms=5000), replay_path=tmp_path / f"m-{k:04d}.jsonl")
        for k in range(1, SPY_MATCHES + 1)
    ]  # fmt: skip
    spies = (tmp_path / "spy1.bin", tmp_path / "spy2.bin")

    def spy(i: int) -> SeatFactory:
        command = f"{HOSTILE} spy {tmp_path / 'pids'} -"
        return lambda config, seat: BotSeat(command, stderr_path=spies[i], stderr_cap=1 << 30)

    results = run_matches((spy(0), spy(1)), configs)
    assert all(r.forfeit is None for r in results)
    leaked = checked = 0
    for s in (0, 1):
        per_match = re.split(rb'(?=\{"type":\s*"(?:hello|new_match)")', spies[s].read_bytes())[1:]
        assert len(per_match) == len(configs)
        for raw, config in zip(per_match, configs, strict=True):
            at, never, seed = hidden_facts(config.replay_path)  # type: ignore[arg-type]
            assert seed == config.seed
            leaked += leaked_bytes(raw, at[s], never[s], seed)
            checked += len(at[s])
            if never[s][-1]:  # the counter does see a hidden card slipped into the last deal
                card = sorted(never[s][-1])[0]
                fake = json.dumps({"type": "event", "event": "draw", "seat": 2, "card": card}).encode() + b"\n"
                assert leaked_bytes(raw + fake, at[s], never[s], seed) == len(card)
    battery.leaked_bytes += leaked
    assert checked > 10 * SPY_MATCHES
    assert leaked == 0


def test_the_replay_is_not_reachable_from_a_bot_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot starts in a fresh empty directory: the replay, written under the referee's directory by a relative
    path, is not there; the directory is removed after the match. With --bot-cwd the bot sees what it is given."""
    monkeypatch.chdir(tmp_path)
    probe = tmp_path / "probe.json"
    (tmp_path / "pids").touch()  # a relative path with a "/" that names a file is passed as an absolute one
    config = MatchConfig(PRESETS["guide"], 3, time=STD, replay_path=Path("r.jsonl"))
    unsandboxed = Limits(sandbox="none")  # the sandbox has its own working directory: see tests/seats/test_attacks.py
    assert run_match((FIRST, f"{HOSTILE} probe ./pids {probe}"), config, limits=unsandboxed).forfeit is None
    seen = json.loads(probe.read_text())
    assert Path(seen["cwd"]) != tmp_path and seen["entries"] == []
    assert not (Path(seen["cwd"]) / "r.jsonl").exists() and not Path(seen["cwd"]).exists()
    assert (tmp_path / "pids").read_text()  # the bot wrote to it through its absolute path
    run_match((FIRST, f"{HOSTILE} probe ./pids {probe}"), config, limits=Limits(cwd=tmp_path, sandbox="none"))
    assert "r.jsonl" in json.loads(probe.read_text())["entries"]
