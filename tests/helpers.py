"""What the test modules share: the repository's paths, the bots of tests/bots/, the referee as a process or in
this process, the tournament flags that keep a match short, and the hostile runs of the sandbox batteries.

Test modules import from here (``from tests.helpers import ...``), never from one another.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from referee.engine import (
    CARD_IDS,
    PRESETS,
    Action,
    Deal,
    Event,
    Rules,
    State,
    apply,
    legal_actions,
    new_match,
    visible_event,
)
from referee.engine.rules import Leader
from referee.protocol import action_from_json, event_json
from referee.records import Forfeit, MatchResult, Termination
from referee.tournament import BotSpec, Format, Record, TournamentConfig
from referee.tournament.schedule import MatchSpec

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root: the working directory of most referee runs (``bots/...`` paths are relative to it)."""
TESTS = ROOT / "tests"
BOTS = TESTS / "bots"
"""The small bots the tests drive (first, broken, check breaker, the JVM and package sources)."""
HOSTILE = TESTS / "hostile"
"""The hostile bots of the batteries (``hostile_bot.py``, ``attack_bot.py``, the channel bots)."""
EXE = Path(sys.executable).parent / "koikoi-referee"
"""The installed ``koikoi-referee`` console script of the running virtualenv."""

FIRST = str(BOTS / "first_bot.py")
"""A bot that always plays the first legal action."""
ASKED_DEAL = ("--seed", "10")
"""A deal on which two bots that play their first legal action are each asked 8 times or more in the first round
(seat 1 nine times, seat 2 eight), for a test whose bot acts on its requests: on a drawn deal a round can end
before a seat is asked at all (seed 1157904559969443: seat 2 won the round on its first turn, seat 1 was never
asked)."""
BROKEN = str(BOTS / "broken_bot.py")
"""A bot that breaks in the way its first argument names."""
GREEDY = str(ROOT / "bots" / "greedy_bot.py")
"""The house greedy bot."""
RANDOM = str(ROOT / "bots" / "random_bot.py")
"""The house random bot (give it ``--seed N``)."""

CLOCK = ("--startup-ms", "20000", "--move-ms", "5000", "--bank-ms", "20000")
"""Time-control flags no bot runs out of on a busy machine."""
FAST = ("--rules", "cardavia", *CLOCK)
"""Flags of a short match: the single-deal cardavia rules and a generous clock."""


def benchmark_module(name: str) -> Any:
    """``benchmarks/NAME.py`` loaded by its path as a module of its own (``benchmarks/referee.py`` is named like the
    package, so the folder stays off the import path)."""
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def short_matches(seats: Sequence[tuple[str, list[str]]], folder: Path, seed: int) -> list[dict[str, Any]]:
    """Each ``(rules, [seat 1 command, seat 2 command])`` played for 3 rounds through the referee (``play --json``,
    ``--seed seed``), its replay in ``folder`` verified by ``replay verify``; their result lines."""
    results = []
    for i, (rules, commands) in enumerate(seats):
        replay = folder / f"{i}.replay.jsonl"
        out = subprocess.run([str(EXE), "play", *commands, "--json", "--rules", rules, "--rounds", "3", "--seed",
                              str(seed), "--replay", str(replay)], capture_output=True, text=True, timeout=300,
                             cwd=ROOT)  # fmt: skip
        assert out.returncode == 0, out.stderr
        results.append(json.loads(out.stdout.splitlines()[-1]))
        verify = subprocess.run([str(EXE), "replay", "verify", str(replay)], capture_output=True, text=True,
                                timeout=120, cwd=ROOT)  # fmt: skip
        assert verify.returncode == 0, verify.stdout + verify.stderr
    return results


def referee(*args: str | Path, cwd: Path = ROOT, check: int | None = 0, timeout: float = 300, fsize: int | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """The CLI as a process in ``cwd``; its exit code asserted to be ``check`` (unless None). ``fsize`` caps the
    size of every file it writes (RLIMIT_FSIZE: a full disk); ``env`` replaces the environment (None: this
    process's)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write over the cap fails with EFBIG instead
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    proc = subprocess.run([str(EXE), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False, preexec_fn=limit if fsize is not None else None)  # fmt: skip
    if check is not None:
        assert proc.returncode == check, proc.stdout + proc.stderr
    return proc


class Output(NamedTuple):
    """What a command run in this process wrote."""

    stdout: str
    stderr: str


def cli(*args: str | Path, check: int = 0) -> Output:
    """The CLI in this process, for commands that start no bot: its exit code asserted to be ``check``, and no
    traceback (an exit other than through ``SystemExit`` is a crash)."""
    from typer.testing import CliRunner  # here, not at the top: the engine tests need no command line

    from referee.cli import app

    result = CliRunner().invoke(app, list(map(str, args)))
    assert result.exit_code == check, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    return Output(result.stdout, result.stderr)


def merge(*args: str | Path, check: int = 0) -> Output:
    """``tournament merge`` in this process."""
    return cli("tournament", "merge", *args, check=check)


def standings(folder: Path) -> dict[str, object]:
    """The parts of a tournament's standings.json that describe results (not the folder, shard or timings)."""
    doc = json.loads((folder / "standings.json").read_text())
    measured = {"mean_ms", "p95_ms", "max_ms", "min_bank_ms", "peak_memory_mb"}  # timings differ run to run
    doc["standings"] = [{k: v for k, v in row.items() if k not in measured} for row in doc["standings"]]
    return {k: doc[k] for k in ("standings", "pairings", "pairs", "matches")}


SCRIPTED_BOT = r"""
import json, sys, time
mode = sys.argv[1]
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        send({"type": "hello", "name": mode})
    elif kind == "request":
        if mode == "crash":
            sys.exit(1)
        if mode == "hang":
            time.sleep(3600)
        time.sleep(delay)
        if mode == "illegal":
            send({"type": "action", "id": msg["id"], "action": {"koikoi": msg["decision"] != "koikoi"}})
            continue
        if mode == "invalid":  # well-formed JSON, but not an answer to the request
            send({"type": "action", "id": msg["id"] + 1000, "action": msg["legal"][0]})
            continue
        legal = msg["legal"]
        send({"type": "action", "id": msg["id"], "action": legal[0] if mode == "first" else legal[-1]})
    elif kind == "bye":
        break
"""
"""A bot whose first argument is its mode: first, last, crash, hang, illegal or invalid; its second a delay."""


def slow_match(referee_exe: Path, replay: Path, pids: Path) -> subprocess.Popen[bytes]:
    """A referee playing a slow koikoi-japan match between two sleepy bots (their pids in ``pids``) into
    ``replay``, in the background."""
    bot = f"{HOSTILE / 'hostile_bot.py'} sleepy {pids}"
    return subprocess.Popen(
        [str(referee_exe), "play", bot, bot, "--rules", "koikoi-japan", "--seed", "8", "--replay", str(replay)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of the process group ``pgid`` (read from ``/proc``, not from the referee)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry))
    return out


@dataclass
class BatteryTally:
    """What the hostile-bot battery saw, summed over the run (printed by ``tests/conftest.py``)."""

    cases: int = 0
    expected: int = 0
    orphans: int = 0
    leaked_bytes: int = 0
    ways_out: int = 0  # attacks of the cheating battery that got through the sandbox
    open_channels: int = 0  # attacks on fairness that get through because their defence is not in the tree yet


BATTERY = pytest.StashKey[BatteryTally]()
KIT_TIMES = pytest.StashKey[dict[str, float]]()
"""Seconds from ``new-bot`` to a verified match, per starter kit (tests/cli/test_kits.py), for the summary."""


# The hostile runs of the cheating and fairness batteries (tests/seats/test_attacks.py, test_channels.py).


@cache
def sandbox_problem() -> str | None:
    """Why the bwrap sandbox cannot run here, or None when it can."""
    from referee.seats.sandbox import SandboxError, choose

    try:
        choose("bwrap")
    except SandboxError as exc:
        return str(exc)
    return None


@dataclass
class Run:
    """One referee run: its exit status and output, the attack bot's verdicts, what it left running."""

    code: int
    out: str
    err: str
    verdicts: list[dict[str, object]]
    took: float
    left: list[int] = field(default_factory=list)
    result: dict[str, object] = field(default_factory=dict)

    def won(self, key: str = "won") -> bool:
        """True when any verdict says the attack got through."""
        return any(v.get(key) is True for v in self.verdicts)

    def forfeit_of(self, seat: int) -> bool:
        """True when ``seat`` lost by forfeit."""
        forfeit = self.result.get("forfeit")
        return isinstance(forfeit, dict) and forfeit.get("seat") == seat


def tagged(tag: str) -> list[int]:
    """Live processes whose command line carries ``tag`` (seen from the host, through any PID namespace)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes()
            raw = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        if tag.encode() in line and raw[raw.rindex(b")") + 2 :][:1] != b"Z":
            out.append(int(entry))
    return out


def left_behind(tag: str, patience_s: float = 5.0) -> list[int]:
    """The tagged processes still alive after ``patience_s`` (SIGKILL lands at once; this absorbs a busy
    machine). Any found are killed here, so that a failing test does not leave them running."""
    deadline = time.monotonic() + patience_s
    while (left := tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def verdicts_in(folder: Path) -> list[dict[str, object]]:
    """Every ``VERDICT`` line in the bot logs of ``folder``."""
    out = []
    for log in sorted(folder.glob("*.log")) if folder.is_dir() else []:
        for line in log.read_bytes().splitlines():
            if line.startswith(b"VERDICT "):
                out.append(json.loads(line[8:]))
    return out


def run_tagged(argv: list[str], cwd: Path, tag: str, *, env: dict[str, str] | None = None, stdout: Path | None = None,
               logs: str = "logs") -> Run:  # fmt: skip
    """Run ``koikoi-referee ARGV`` in ``cwd``; collect the verdicts from ``cwd/logs`` and what the bot left."""
    t0 = time.monotonic()
    with open(stdout, "w") if stdout is not None else open(os.devnull, "w") as sink:
        done = subprocess.run([str(EXE), *argv], cwd=cwd, env=env, stdout=subprocess.PIPE if stdout is None else sink,
                              stderr=subprocess.PIPE, text=True, timeout=180)  # fmt: skip
    took = time.monotonic() - t0
    run = Run(done.returncode, done.stdout or "", done.stderr, verdicts_in(cwd / logs), took)
    run.left = left_behind(tag)
    return run


# Rounds from explicit deals (tests/engine/): readable deals and actions, and two deals the rules tests share.


def random_match(rules: Rules, seed: int, chooser: int) -> Iterator[tuple[State, Action | None]]:
    """Every state of a match of ``rules`` dealt from ``seed`` and played with legal actions drawn uniformly (from
    ``random.Random(chooser)``), each with the action about to be applied (None at the end)."""
    rng = random.Random(chooser)
    state = new_match(rules, seed)
    steps = 0
    while not state.is_over:
        action = rng.choice(legal_actions(state))
        yield state, action
        state = apply(state, action)
        steps += 1
        assert steps <= rules.rounds * 3 * 16 + 1, "a match ran past its turn bound"
    yield state, None


def deal(hand0: Sequence[str], hand1: Sequence[str], field: Sequence[str], stock: Sequence[str] = ()) -> Deal:
    """A deal from readable lists; the stock continues with the unused cards in card order."""
    used = {*hand0, *hand1, *field, *stock}
    rest = [c for c in CARD_IDS if c not in used]
    return Deal.from_json(
        {"hands": [list(hand0), list(hand1)], "field": list(field), "stock": [*stock, *rest]}
    )


def first_dealer_for(rules: Rules, leader: int) -> int:
    """The first dealer that makes ``leader`` play first in round 1."""
    return leader if rules.leader is Leader.DEALER else 1 - leader


def start(rules: Rules | str, *deals: Deal, leader: int = 0) -> State:
    """A match from explicit deals in which ``leader`` plays first."""
    r = PRESETS[rules] if isinstance(rules, str) else rules
    return new_match(r, seed=1, deals=deals, first_dealer=first_dealer_for(r, leader))


def action(state: State, text: str) -> Action:
    """``play X``, ``play X capture Y``, ``capture Y``, ``koikoi`` or ``stop`` as an action of ``state``."""
    words = text.split()
    form: dict[str, Any]
    if words == ["koikoi"] or words == ["stop"]:
        form = {"koikoi": words[0] == "koikoi"}
    elif words[0] == "play":
        form = {"play": words[1]} if len(words) == 2 else {"play": words[1], "capture": words[3]}
    else:
        form = {"capture": words[1]}
    return action_from_json(form, state)


def play(state: State, *texts: str) -> tuple[State, list[Event]]:
    """Apply readable actions in order; the state after them and every event they caused."""
    events: list[Event] = []
    for text in texts:
        state = apply(state, action(state, text))
        events.extend(state.events)
    return state, events


def only(events: Sequence[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


MATCHING = dict(
    hand0=["pine-crane", "cherry-curtain", "maple-deer", "peony-chaff-1", "clover-chaff-1", "pampas-chaff-1",
           "paulownia-chaff-1", "willow-lightning"],
    hand1=["maple-chaff-1", "peony-chaff-2", "clover-chaff-2", "pampas-chaff-2", "paulownia-chaff-2",
           "willow-ribbon", "chrysanthemum-chaff-1", "chrysanthemum-chaff-2"],
    # two pines, three cherries
    field=["pine-chaff-1", "pine-chaff-2", "cherry-chaff-1", "cherry-chaff-2", "cherry-ribbon",
           "plum-chaff-1", "wisteria-chaff-1", "iris-chaff-1"],
)  # fmt: skip

# Seat 0 makes boar-deer-butterfly on its second turn and five animals on its third; seat 1 makes the poetry
# ribbons on its second turn.
KOIKOI_DEAL = deal(
    hand0=["clover-boar", "peony-butterfly", "pampas-geese", "wisteria-chaff-1", "iris-chaff-1",
           "paulownia-chaff-1", "chrysanthemum-chaff-1", "paulownia-chaff-3"],
    hand1=["pine-ribbon", "cherry-ribbon", "wisteria-chaff-2", "iris-chaff-2", "paulownia-chaff-2",
           "chrysanthemum-chaff-2", "wisteria-cuckoo", "iris-bridge"],
    field=["clover-chaff-1", "maple-chaff-1", "peony-chaff-1", "pine-chaff-1", "plum-chaff-1",
           "cherry-chaff-1", "pampas-chaff-1", "willow-lightning"],
    stock=["maple-deer", "plum-ribbon", "chrysanthemum-ribbon", "wisteria-ribbon", "willow-swallow"],
)  # fmt: skip
TO_FIRST_YAKU = ("play clover-boar", "play pine-ribbon", "play peony-butterfly")


def seat_event(event: Event, seat: int) -> dict[str, Any]:
    """The koikoi/1 event line ``seat`` receives for ``event`` (without its ``type``), built by the protocol."""
    return event_json(visible_event(event, seat))


TESHI_ORDER = [0, 1, 2, 3, 8, 12, 16, 20, 9, 13, 17, 21, 24, 28, 32, 36, 10, 14, 18, 22, 25, 29, 33, 37]
"""A card order for :func:`deal_of` whose first hand holds the four pines (teshi) and whose field has no month twice."""


def deal_of(order: list[int]) -> Deal:
    """The deal of the cards ``order`` begins with, the rest of the deck after them in card order: the hands are
    cards 0-7 and 8-15, the field 16-23, the stock the rest (``order[24]`` drawn first)."""
    deck = order + [c for c in range(48) if c not in order]
    return Deal((sum(1 << c for c in deck[0:8]), sum(1 << c for c in deck[8:16])), sum(1 << c for c in deck[16:24]),
                tuple(deck[24:]))  # fmt: skip


# Tournament building blocks without bots (tests/tournament/).


def make_config(n: int = 3, pairs: int = 4, fmt: Format = Format.ROUND_ROBIN, **kw: object) -> TournamentConfig:
    """A tournament of ``n`` bots that are never started (for the building blocks that need no bot)."""
    bots = tuple(BotSpec(f"bot{i}", f"python3 bot{i}.py") for i in range(n))
    return TournamentConfig(bots=bots, rules=PRESETS["cardavia"], format=fmt, pairs=pairs, **kw)  # type: ignore[arg-type]


def finished(spec: MatchSpec, winner: int | None, forfeit: Forfeit | None = None) -> Record:
    """A finished match of ``spec``: ``winner`` is seat 1 or 2 (None: a draw)."""
    result = MatchResult(
        spec.match_id, None if winner is None else winner - 1, (1, 0), 1,
        Termination.FORFEIT if forfeit else Termination.ROUNDS, forfeit, spec.seats, spec.seed, 3,
    )  # fmt: skip
    return Record(spec, result)
