"""The fairness battery: channels between sandboxes, theft of the machine, and what a bot sees of the host, each
through a real ``koikoi-referee play`` or ``tournament`` run (``tests/hostile/channel_bot.py``,
``tests/hostile/share_bot.py``), judged against the replays where the attack names hidden cards.

Every case has an outcome under the default options and a control: the same attack with the defence that
answers it turned off (``KOIKOI_REFEREE_SECCOMP=off``: no syscall filter; ``KOIKOI_REFEREE_CGROUPS=off``: no
cgroups; ``--ponder``: no freezing; ``--sandbox none``), where it must work, so that each bot is shown to
really attack. A case whose defence is not in this tree yet (``defended=False``) must still get through under
the defaults: that run is its control, and it counts as an open channel in the battery tally; when the defence
lands, that assertion fails until the case is switched to ``defended=True``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.helpers import (
    ASKED_DEAL,
    EXE,
    FIRST,
    HOSTILE,
    BatteryTally,
    Run,
    run_tagged,
    sandbox_problem,
    verdicts_in,
)

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

CHANNEL = HOSTILE / "channel_bot.py"
SHARE = HOSTILE / "share_bot.py"
LIMIT_MB = 256
DENIED = ("EPERM", "ENOSYS")
TIME = ("--startup-ms", "20000", "--move-ms", "5000", "--bank-ms", "20000")

PROBLEM = sandbox_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"bwrap cannot run here: {PROBLEM}")


@dataclass(frozen=True)
class Switch:
    """How a control turns a defence off: environment variables, options, or no sandbox at all."""

    env: tuple[tuple[str, str], ...] = ()
    options: tuple[str, ...] = ()
    sandbox: str = "bwrap"


NO_FILTER = Switch(env=(("KOIKOI_REFEREE_SECCOMP", "off"),))
NO_CGROUPS = Switch(env=(("KOIKOI_REFEREE_CGROUPS", "off"),))
KEEP_TWINS = Switch(env=(("KOIKOI_REFEREE_TWINS", "keep"),))
NO_FILTER_KEEP_TWINS = Switch(env=(*NO_FILTER.env, *KEEP_TWINS.env))  # both defences of a pair's two games
DEFAULTS = Switch()
UNSANDBOXED = Switch(sandbox="none")


@cache
def has_option(option: str) -> bool:
    """Whether this referee's ``play`` knows ``option`` (a control passes a switch only where it exists)."""
    done = subprocess.run([EXE, "play", "--help"], capture_output=True, text=True, timeout=60)
    return option in done.stdout


NO_FREEZING = Switch(env=NO_CGROUPS.env, options=("--ponder",))  # and no CPU quota
OPTIONAL = ("--ponder",)  # passed only where the referee has it


def supported(options: tuple[str, ...]) -> list[str]:
    return [o for o in options if o not in OPTIONAL or has_option(o)]


def environ(switch: Switch) -> dict[str, str]:
    return {**os.environ, **dict(switch.env)}


def tag() -> str:
    return f"--tag={uuid.uuid4().hex}"


def play(tmp: Path, bots: tuple[str, str], mark: str, switch: Switch, *options: str,
         replay: str = "r.jsonl", allowed: tuple[int, ...] = (0,)) -> Run:  # fmt: skip
    """One ``koikoi-referee play`` in ``tmp`` (replay and logs there), the result kept when there is one. The
    deal is :data:`~tests.helpers.ASKED_DEAL` unless ``options`` choose one: the bots act on their requests."""
    deal = () if {"--seed", "--deals"} & set(options) else ASKED_DEAL
    argv = ["play", *bots, "--replay", replay, "--log-dir", "logs", "--sandbox", switch.sandbox, *TIME,
            *supported(switch.options), *deal, *options, "--json"]  # fmt: skip
    run = run_tagged(argv, tmp, mark, env=environ(switch))
    assert run.code in allowed, run.err
    if run.code == 0:
        run.result = json.loads(run.out.splitlines()[-1])
    return run


def tournament(tmp: Path, cheat: str, mark: str, switch: Switch, *, jobs: int, pairs: int, rounds: int) -> Run:
    """A tournament of the first bot against ``cheat`` (its output in ``tmp/out``)."""
    argv = ["tournament", "-b", f"first={FIRST}", "-b", f"cheat={cheat}", "-n", str(pairs), "-j", str(jobs),
            "--rounds", str(rounds), "--out", "out", "--no-html", "--sandbox", switch.sandbox, *TIME,
            *supported(switch.options)]  # fmt: skip
    run = run_tagged(argv, tmp, mark, env=environ(switch), logs="out/logs")
    assert run.code in (0, 1), run.err
    return run


def round_starts(folder: Path) -> list[dict[str, object]]:
    """Every round_start event of every replay under ``folder``."""
    out = []
    for path in sorted(folder.rglob("*.jsonl")):
        if path.name != "results.jsonl":
            for line in path.read_text().splitlines():
                if '"round_start"' in line and (obj := json.loads(line)).get("event") == "round_start":
                    out.append(obj)
    return out


def opponent_named(run: Run, folder: Path) -> tuple[int, int]:
    """(right, wrong): verdicts whose ``named`` cards are the opponent's opening hand in a replay of the same
    deal (the same field, the bot's own hand in it)."""
    right = wrong = 0
    starts = round_starts(folder)
    for v in run.verdicts:
        if "named" not in v:
            continue
        hit = False
        for rs in starts:
            hands = [sorted(h) for h in rs["hands"]]  # type: ignore[attr-defined]
            if sorted(rs["field"]) == v["field"] and v["hand"] in hands:  # type: ignore[call-overload]
                hit = hit or hands[1 - hands.index(v["hand"])] == v["named"]  # type: ignore[arg-type]
        right += hit
        wrong += not hit
    return right, wrong


def errors(run: Run) -> list[str]:
    return [str(v["error"]) for v in run.verdicts if v.get("error")]


def refused(run: Run) -> bool:
    """The facility answered with an errno the bot can see (never a kill): EPERM or ENOSYS."""
    return bool(errors(run)) and all(e in DENIED for e in errors(run)) and run.code == 0


def ends_normally(run: Run) -> bool:
    return run.result.get("forfeit") is None and run.result.get("reason") in ("rounds", "broke")


# --- the cases ----------------------------------------------------------------------------------------------


def hand_locks(how: str, jobs: int) -> Callable[[Path, Switch], Run]:
    """lock_*: a one-pair, 3-round tournament (at -j 1 the process of game a waits in the cache while game b is
    played; at -j 2 both play at once); the verdicts judged against its replays."""

    def run(tmp: Path, switch: Switch) -> Run:
        mark = tag()
        done = tournament(tmp, f"{CHANNEL} lock_{how} {mark}", mark, switch, jobs=jobs, pairs=1, rounds=3)
        right, wrong = opponent_named(done, tmp / "out")
        done.result = {"right": right, "wrong": wrong}
        return done

    return run


def named_hands(run: Run) -> bool:
    return int(run.result["right"]) > 0  # type: ignore[call-overload]


def twins_alive(tmp: Path, switch: Switch) -> Run:
    """twin: a two-pair, 3-round tournament while this test reads the host's ``/proc`` every few milliseconds for
    the processes the bot named after the game they play; ``together``: readings where the processes of both
    games of one pair were alive (a frozen first-game process keeps what it holds of the kernel, and machine-wide
    counts of that reach the second game's process), ``seen``: the games seen named at all."""
    mark = tag()
    prefix = "kt" + hashlib.sha256(mark.split("=", 1)[1].encode()).hexdigest()[:4]
    readings: list[set[str]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            names = set()
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    with contextlib.suppress(OSError):
                        name = Path(entry.path, "comm").read_text().strip()
                        if name.startswith(prefix):
                            names.add(name[len(prefix):])
            readings.append(names)
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        run = tournament(tmp, f"{CHANNEL} twin {mark}", mark, switch, jobs=1, pairs=2, rounds=3)
    finally:
        done.set()
        watcher.join(10)
    together = sum(any(f"{n[:-1]}a" in names and f"{n[:-1]}b" in names for n in names) for names in readings)
    results = [json.loads(x) for x in (tmp / "out" / "results.jsonl").read_text().splitlines() if x.strip()]
    seen = sorted(n for n in set().union(*readings) if n[:-1].isdigit() and n[-1] in "ab")  # not the check's hello
    run.result = {"together": together, "seen": seen, "games": len(results),
                  "forfeits": sum(r["result"]["forfeit"] is not None for r in results)}  # fmt: skip
    return run


def twins_together(run: Run) -> bool:
    return int(run.result["together"]) > 0  # type: ignore[call-overload]


def twins_apart(run: Run) -> bool:
    """Each game of both pairs was seen, never both games of a pair at once, and no game was forfeited."""
    seen, games, forfeits = run.result["seen"], run.result["games"], run.result["forfeits"]
    return not twins_together(run) and len(seen) == 4 and games == 4 and forfeits == 0  # type: ignore[arg-type]


def keyring(tmp: Path, switch: Switch) -> Run:
    """``play --deals F --games 34``: one deal, 34 games; a later game of the same user id reads the stock."""
    suite = tmp / "suite.jsonl"
    made = subprocess.run([EXE, "deals", "generate", "--count", "1", "--seed", "20", "-o", str(suite)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert made.returncode == 0, made.stderr
    deals = tmp / "deal.jsonl"
    deals.write_text(json.dumps(json.loads(suite.read_text().splitlines()[0])[0]) + "\n")  # its first deal
    mark = tag()
    games = "2" if switch.sandbox == "none" else "34"  # unsandboxed, every game has the referee's own uid
    run = play(tmp, (FIRST, f"{CHANNEL} keyring {mark}"), mark, switch, "--deals", str(deals), "--games", games,
               "--rounds", "1")  # fmt: skip
    starts = round_starts(tmp)
    right = 0
    for v in run.verdicts:
        stock = v.get("stock")
        if isinstance(stock, list) and len(stock) >= 4:
            right += any(sorted(rs["field"]) == v["field"] and rs["stock"][: len(stock)] == stock  # type: ignore[index]
                         for rs in starts)  # fmt: skip
    run.result = {"right": right}
    return run


def colluders(how: str, *options: str) -> Callable[[Path, Switch], Run]:
    """*_tx in seat 1, *_rx in seat 2, one tag (the name they share)."""

    def run(tmp: Path, switch: Switch) -> Run:
        mark = tag()
        bots = (f"{CHANNEL} {how}_tx {mark}", f"{CHANNEL} {how}_rx {mark}")
        return play(tmp, bots, mark, switch, "--rounds", "4", "--seed", "11", *options)  # 20+ requests a seat

    return run


def received(run: Run) -> bool:
    return any(v.get("won") is True and v.get("attack", "").endswith("_rx") for v in run.verdicts)  # type: ignore[attr-defined]


def nothing_received(run: Run) -> bool:
    """The receiver ran to the end and saw no signal rise."""
    return any(v.get("rises") == 0 for v in run.verdicts) and ends_normally(run)


def decision_ms(replay: Path, seat: int) -> list[float]:
    out = []
    for line in replay.read_text().splitlines():
        if '"decision"' in line and (obj := json.loads(line)).get("type") == "decision" and obj["seat"] == seat:
            out.append(float(obj["ms"]))
    return out


def thief(tmp: Path, switch: Switch) -> Run:
    """The worker (about 30 ms of CPU a decision) against a quiet opponent, then against the thief."""
    (tmp / "quiet").mkdir()
    (tmp / "thief").mkdir()
    mark = tag()
    quiet = play(tmp / "quiet", (f"{SHARE} worker {mark}", FIRST), mark, switch, "--rounds", "1")
    run = play(tmp / "thief", (f"{SHARE} worker {mark}", f"{SHARE} thief {mark}"), mark, switch, "--rounds", "1")
    calm, robbed = decision_ms(tmp / "quiet" / "r.jsonl", 1), decision_ms(tmp / "thief" / "r.jsonl", 1)
    stolen = [v for v in run.verdicts if "stolen_cpu_s" in v][-1]  # the latest
    forfeit = run.result.get("forfeit")
    cpus = stolen_while_thinking(stolen, [v for v in run.verdicts if "turns" in v][-1])  # the latest
    run.result = {**run.result, "quiet_ms": statistics.median(calm), "thief_ms": statistics.median(robbed),
                  "cpus": round(cpus, 3), "stolen_cpu_s": stolen["stolen_cpu_s"],
                  "victim_timeouts": int(isinstance(forfeit, dict) and forfeit.get("reason") == "timeout")}  # fmt: skip
    run.left += quiet.left
    ratio = float(run.result["thief_ms"]) / float(run.result["quiet_ms"])  # type: ignore[arg-type]
    print(f"cpu thief ({switch}): victim median {run.result['quiet_ms']:.1f} ms against a quiet opponent, "
          f"{run.result['thief_ms']:.1f} ms against the thief (x{ratio:.2f}); "
          f"the thief's children got {cpus:.3f} CPUs while the victim thought ({stolen['stolen_cpu_s']} s of CPU "
          f"outside their bot's own turns)")  # fmt: skip
    return run


def stolen_while_thinking(thief: dict[str, object], victim: dict[str, object]) -> float:
    """The CPUs the thief's children got, on average, in the 10 ms bins of the shared monotonic clock that lie
    wholly inside the victim's turns."""
    t0, width, chunk = float(thief["t0"]), float(thief["bin_s"]), float(thief["chunk_s"])  # type: ignore[arg-type]
    counts = dict(map(tuple, thief["bins"]))  # type: ignore[call-overload, arg-type]
    inside = work = 0.0
    for a, b in victim["turns"]:  # type: ignore[attr-defined]
        first, last = int((a - t0) / width) + 1, int((b - t0) / width)  # the bins wholly inside [a, b]
        inside += max(0, last - first) * width
        work += sum(counts.get(i, 0) for i in range(first, last)) * chunk
    return work / inside if inside else 0.0


def robbed(run: Run) -> bool:
    """The thief's children got a quarter of a CPU or more, on average, while the victim thought."""
    return float(run.result["cpus"]) >= 0.25  # type: ignore[arg-type]


def not_robbed(run: Run) -> bool:
    return float(run.result["cpus"]) < 0.1 and ends_normally(run)  # type: ignore[arg-type]


def memory(mode: str, limit_mb: int) -> Callable[[Path, Switch], Run]:
    def run(tmp: Path, switch: Switch) -> Run:
        mark = tag()
        bots = (FIRST, f"{SHARE} {mode} {mark}")
        return play(tmp, bots, mark, switch, "--bot-memory-mb", str(limit_mb), "--rounds", "1")

    return run


def held_mib(run: Run) -> int:
    return max([int(v.get(k, 0)) for v in run.verdicts for k in ("held_mib", "still_held_mib")] or [0])  # type: ignore[call-overload]


def own_memory_forfeit(run: Run) -> bool:
    forfeit = run.result.get("forfeit")
    return isinstance(forfeit, dict) and forfeit.get("seat") == 2 and forfeit.get("reason") == "crash"


def cmdline(tmp: Path, switch: Switch) -> Run:
    mark = tag()
    return play(tmp, (FIRST, f"{SHARE} cmdline {mark}"), mark, switch, "--rounds", "1")


def shared_folder(tmp: Path) -> Path:
    folder = tmp / "shared"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    return folder


def peekers(tmp: Path, switch: Switch, folder: Path, *options: str, replay: str = "r.jsonl") -> Run:
    """Both bots cwd_peek in ``--bot-cwd FOLDER``; ``named``: their verdicts that name both opening hands of a
    round of the replay."""
    mark = tag()
    bots = (f"{SHARE} cwd_peek {mark}", f"{SHARE} cwd_peek {mark}")
    run = play(tmp, bots, mark, switch, "--bot-cwd", str(folder), "--rounds", "2", *options, replay=replay,
               allowed=(0, 2))  # fmt: skip
    starts = round_starts(tmp)
    run.result["named"] = sum(
        any(sorted(rs["field"]) == v["field"] and sorted(rs["hands"][0] + rs["hands"][1]) == v["named"]  # type: ignore[index, operator]
            for rs in starts)
        for v in run.verdicts if "named" in v
    )  # fmt: skip
    return run


def cwd_replay(tmp: Path, switch: Switch) -> Run:
    """The replay written to ``DIR/x.jsonl`` (or, through a symlink to DIR, or the logs in it)."""
    folder = shared_folder(tmp)
    return peekers(tmp, switch, folder, replay=str(folder / "x.jsonl"))


def cwd_via_link(tmp: Path, switch: Switch) -> Run:
    (tmp / "link").symlink_to(shared_folder(tmp))
    return peekers(tmp, switch, tmp / "shared", replay=str(tmp / "link" / "x.jsonl"))


def cwd_logs(tmp: Path, switch: Switch) -> Run:
    folder = shared_folder(tmp)
    run = peekers(tmp, switch, folder, "--log-dir", str(folder / "logs"))
    run.verdicts = verdicts_in(folder / "logs")
    return run


def cwd_symlink(tmp: Path, switch: Switch) -> Run:
    """The replay outside DIR, and a symlink in DIR to it (``latest.jsonl``, as an organiser may keep)."""
    folder = shared_folder(tmp)
    (folder / "latest.jsonl").symlink_to(tmp / "r.jsonl")
    return peekers(tmp, switch, folder)


def replay_named(run: Run) -> bool:
    return int(run.result.get("named", 0)) > 0  # type: ignore[call-overload]


def refused_inside(run: Run) -> bool:
    """The run was refused (exit 2, one line naming --bot-cwd) before any bot started."""
    return run.code == 2 and "--bot-cwd" in run.err and len(run.err.splitlines()) == 1 and not run.verdicts


def no_replay_named(run: Run) -> bool:
    return int(run.result.get("named", 0)) == 0 and ends_normally(run)  # type: ignore[call-overload]


def cwd_notes(tmp: Path, switch: Switch) -> Run:
    """Both bots in ``--bot-cwd DIR`` (the replay elsewhere): a note one leaves, the other reads."""
    folder = tmp / "shared"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    mark = tag()
    bots = (f"{SHARE} cwd_peek {mark}", f"{SHARE} cwd_peek {mark}")
    return play(tmp, bots, mark, switch, "--bot-cwd", str(folder), "--rounds", "1")


def note_read(run: Run) -> bool:
    return any("note" in v for v in run.verdicts)


DENY = ("ptrace", "process_vm_readv", "perf_event_open", "userfaultfd", "io_uring_setup", "bpf", "unshare",
        "keyctl", "personality", "inotify_init1", "flock", "ofd_lock", "io_setup", "cachestat", "fadvise_dontneed",
        "madvise_pageout")  # fmt: skip


def facilities(tmp: Path, switch: Switch) -> Run:
    mark = tag()
    run = play(tmp, (FIRST, f"{SHARE} facilities {mark}"), mark, switch, "--rounds", "1")
    probes = next((v["probes"] for v in run.verdicts if "probes" in v), {})
    run.result["probes"] = probes
    return run


def facility_open(run: Run) -> bool:
    probes = run.result["probes"]
    return any(probes.get(name) == "ok" for name in DENY)  # type: ignore[attr-defined]


def all_denied(run: Run) -> bool:
    probes = run.result["probes"]
    no_pty = probes.get("ptmx") == "ENOENT"  # type: ignore[attr-defined]  # the sandbox has no pseudo-terminals
    no_probe = probes.get("rwf_nowait") in ("EOPNOTSUPP", "ENOTSUP")  # type: ignore[attr-defined]
    return all(probes.get(name) in DENIED for name in DENY) and no_pty and no_probe and ends_normally(run)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Case:
    """An attack on fairness: how to run it under a switch, how to judge it, and the control that shows it."""

    name: str
    run: Callable[[Path, Switch], Run]
    way_out: Callable[[Run], bool]  # the attack got through
    blocked: Callable[[Run], bool]  # what a defended run must show: the error it met, the limit it hit
    control: Switch | None  # the defence turned off (None: nothing turns it off)
    defended: bool  # the defence is in this tree: the defaults must block the attack
    slow: bool = False


def no_named(run: Run) -> bool:
    return int(run.result["right"]) == 0 and refused(run)  # type: ignore[call-overload]


CASES = [
    Case("lock_ofd-j1", hand_locks("ofd", 1), named_hands, no_named, NO_FILTER_KEEP_TWINS, True),
    Case("lock_ofd-j2", hand_locks("ofd", 2), named_hands, no_named, NO_FILTER_KEEP_TWINS, True),
    Case("lock_posix-j1", hand_locks("posix", 1), named_hands, no_named, NO_FILTER_KEEP_TWINS, True),
    Case("lock_flock-j1", hand_locks("flock", 1), named_hands, no_named, NO_FILTER_KEEP_TWINS, True),
    Case("twins_alive", twins_alive, twins_together, twins_apart, KEEP_TWINS, True),
    # The control runs unsandboxed: with the filter off, unique uids alone keep the keyring of game 1 from game 33.
    Case("keyring", keyring, named_hands, no_named, UNSANDBOXED, True, slow=True),
    Case("collude_ofd", colluders("collude"), received, lambda r: refused(r) and nothing_received(r), NO_FILTER,
         True),
    Case("collude_inotify", colluders("inotify"), received, lambda r: refused(r) and nothing_received(r),
         NO_FILTER, True),
    Case("collude_sysv", colluders("sysv"), received, nothing_received, UNSANDBOXED, True),  # IPC namespaces
    Case("collude_abstract", colluders("abstract"), received, nothing_received, UNSANDBOXED, True),  # network
    Case("cpu_thief", thief, robbed, not_robbed, NO_FREEZING, True, slow=True),
    Case("memfd", memory("memfd", LIMIT_MB), lambda r: held_mib(r) > LIMIT_MB,
         lambda r: held_mib(r) <= LIMIT_MB and (own_memory_forfeit(r) or bool(errors(r))), NO_CGROUPS, True),
    Case("tmpfs", memory("tmpfs", 128), lambda r: held_mib(r) > 128,
         lambda r: held_mib(r) <= 128 and (own_memory_forfeit(r) or bool(errors(r))), NO_CGROUPS, True),
    Case("cmdline", cmdline, lambda r: any(v.get("won") is True for v in r.verdicts),
         lambda r: any(v.get("won") is False for v in r.verdicts) and ends_normally(r), UNSANDBOXED, True),
    # Refused whatever the sandbox: no switch turns it off; cwd_symlink's control shows the bot reading a replay.
    Case("cwd_replay", cwd_replay, replay_named, refused_inside, None, True),
    Case("cwd_replay-link", cwd_via_link, replay_named, refused_inside, None, True),
    Case("cwd_logs", cwd_logs, lambda r: bool(r.verdicts), refused_inside, None, True),
    Case("cwd_symlink", cwd_symlink, replay_named, no_replay_named, UNSANDBOXED, True),
    Case("cwd_notes", cwd_notes, note_read,
         lambda r: not note_read(r) and "EROFS" in errors(r) and ends_normally(r), UNSANDBOXED, True),
    Case("facilities", facilities, facility_open, all_denied, NO_FILTER, True),
]  # fmt: skip


def params(cases: list[Case]) -> list[object]:
    return [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else []) for c in cases]


@needs_bwrap
@pytest.mark.parametrize("case", params(CASES))
def test_an_attack_on_fairness_under_the_defaults(case: Case, tmp_path: Path, battery: BatteryTally) -> None:
    battery.cases += 1
    run = case.run(tmp_path, DEFAULTS)
    way_out = case.way_out(run)
    battery.orphans += len(run.left)
    assert not run.left, f"processes of the bot still ran after the match: {run.left}"
    if not case.defended:  # the defaults are the control: the attack must work, and the tally says it is open
        battery.open_channels += way_out
        battery.expected += way_out
        assert way_out, f"the attack failed though its defence is not in this tree: {run.verdicts} {run.result}"
        return
    blocked = case.blocked(run)
    battery.ways_out += way_out
    battery.expected += blocked and not way_out
    assert not way_out, f"the attack got through: {run.verdicts} {run.result}"
    assert blocked, f"unexpected outcome: {run.verdicts} {run.result} {run.err[-500:]}"


@needs_bwrap
@pytest.mark.parametrize("case", params(CASES))
def test_without_its_defence_the_attack_gets_through(case: Case, tmp_path: Path) -> None:
    """The control: the same attack with the defence turned off works, so the bot really attacks."""
    if case.control is None:
        pytest.skip("nothing turns this defence off")
    if not case.defended and case.control.sandbox == "bwrap":
        pytest.skip("the defence is not in this tree: the run under the defaults is the control")
    if missing := [o for o in case.control.options if not has_option(o)]:
        pytest.skip(f"nothing turns this defence off in this tree: no {' '.join(missing)}")
    run = case.run(tmp_path, case.control)
    assert case.way_out(run), f"the attack bot failed where it should work: {run.verdicts} {run.result}"
    assert not run.left
