"""The example bots, run as real processes, driven through whole matches by a tiny in-test referee."""

from __future__ import annotations

import importlib.util
import os
import random
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from referee import protocol as P
from referee.engine import PRESETS, Rules, State, apply, legal_actions, new_match, observe
from referee.records import TimeControl
from tests.helpers import ROOT

BOTS = ROOT / "bots"
LINE_WAIT_S = 20.0  # generous: a hung bot fails the test instead of hanging it; never a speed assertion


class BotUnderTest:
    """A bot process with a line reader that gives up after :data:`LINE_WAIT_S`."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log.open("wb")
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.buffer = b""
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout, selectors.EVENT_READ)
        self.next_id = 0
        self.actions: list[dict[str, Any]] = []

    def send(self, msg: dict[str, Any]) -> None:
        self.stdin.write(P.encode(msg))
        self.stdin.flush()

    def read_line(self) -> bytes:
        deadline = time.monotonic() + LINE_WAIT_S
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0 and self.selector.select(left), (
                f"no line from {self.proc.args!r} in {LINE_WAIT_S} s"
            )
            chunk = os.read(self.stdout.fileno(), 65536)
            assert chunk, f"{self.proc.args!r} closed stdout; stderr: {self.stderr()}"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def handshake(self, hello: dict[str, Any]) -> P.BotHello:
        self.send(hello)
        msg = P.parse_bot_message(self.read_line())
        assert isinstance(msg, P.BotHello)
        return msg

    def decide(self, state: State, seat: int) -> int:
        """Send a request for ``seat``; the index in ``legal_actions(state)`` of the bot's checked answer."""
        self.next_id += 1
        request = P.request_message(self.next_id, observe(state, seat), 1000, 30_000)
        self.send(request)
        legal = legal_actions(state)
        action = P.check_action(self.read_line(), self.next_id, legal)
        self.actions.append(P.action_json(action))
        return legal.index(action)

    def finish(self, msg: dict[str, Any] | None) -> int:
        """Send ``msg`` (bye) or close stdin (EOF); the exit code."""
        if msg is not None:
            self.send(msg)
        self.stdin.close()
        try:
            return self.proc.wait(timeout=LINE_WAIT_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.stdout.close()
            self.log.close()

    def stderr(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-2000:]


def play(bots: tuple[BotUnderTest, BotUnderTest], rules: Rules, seed: int, index: int = 1) -> State:
    """One match between two bot processes, checking every answer with the engine's legal actions."""
    for seat, bot in enumerate(bots):
        build = P.hello_message if index == 1 else P.new_match_message
        msg = build(seat, rules, f"m-{seed}", TimeControl(), index=index)
        if index == 1:
            assert bot.handshake(msg).name
        else:
            bot.send(msg)
    state = new_match(rules, seed=seed)
    events = state.events
    while True:
        for event in events:
            for seat, bot in enumerate(bots):
                bot.send(P.event_message(event, seat))
        if state.is_over:
            return state
        seat = state.to_move
        choice = bots[seat].decide(state, seat)
        state = apply(state, legal_actions(state)[choice])
        events = state.events


def python_bot(name: str, *args: str) -> list[str]:
    return [sys.executable, str(BOTS / name), *args]


def node_bot(*args: str) -> list[str]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    return ["node", str(BOTS / "random_bot.js"), *args]


def c_bot(*args: str) -> list[str]:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    return [str(BOTS / "random_bot_c.sh"), *args]


@pytest.fixture(scope="module")
def cache_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose XDG cache is a fresh directory (the C bot compiles into it)."""
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("xdg-cache"))}


COMMANDS: dict[str, Callable[..., list[str]]] = {
    "random.py": lambda *a: python_bot("random_bot.py", *a),
    "greedy.py": lambda *a: python_bot("greedy_bot.py"),
    "minimal.py": lambda *a: python_bot("minimal_bot.py"),
    "random.js": node_bot,
    "random_c": c_bot,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_bot_plays_two_matches_on_one_process_then_leaves_on_bye(
    name: str, tmp_path: Path, cache_env: dict[str, str]
) -> None:
    argv = COMMANDS[name]("--seed", "5")
    bots = (
        BotUnderTest(argv, tmp_path / "a.log", cache_env),
        BotUnderTest(python_bot("random_bot.py", "--seed", "1"), tmp_path / "b.log"),
    )
    first = play(bots, PRESETS["guide"], seed=11)
    assert first.is_over and len(bots[0].actions) > 20
    second = play((bots[1], bots[0]), PRESETS["koikoi-japan"], seed=12, index=2)  # seats swapped
    assert second.is_over
    assert bots[0].finish(P.bye_message()) == 0, bots[0].stderr()
    assert bots[1].finish(P.bye_message()) == 0


@pytest.mark.parametrize("name", [n for n in COMMANDS if n != "minimal.py"])
def test_bot_exits_on_eof_and_logs_errors_to_stderr(
    name: str, tmp_path: Path, cache_env: dict[str, str]
) -> None:
    bot = BotUnderTest(COMMANDS[name](), tmp_path / "bot.log", cache_env)
    assert bot.handshake(P.hello_message(1, PRESETS["cardavia"], "m-1", TimeControl())).name
    bot.send(P.error_message("illegal_action: a test message"))
    assert bot.finish(None) == 0
    assert "a test message" in bot.stderr()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["random.py", "random.js", "random_c"])
def test_random_bots_repeat_with_a_seed(name: str, tmp_path: Path, cache_env: dict[str, str]) -> None:
    runs = []
    for run in range(2):
        bots = (
            BotUnderTest(COMMANDS[name]("--seed", "42"), tmp_path / f"{run}a.log", cache_env),
            BotUnderTest(COMMANDS[name]("--seed", "43"), tmp_path / f"{run}b.log", cache_env),
        )
        end = play(bots, PRESETS["cardavia"], seed=3)
        runs.append((end.scores, bots[0].actions, bots[1].actions))
        for bot in bots:
            assert bot.finish(P.bye_message()) == 0
    assert runs[0] == runs[1]


def test_c_bot_is_compiled_once_into_the_cache(cache_env: dict[str, str], tmp_path: Path) -> None:
    argv = c_bot()
    binary = Path(cache_env["XDG_CACHE_HOME"]) / "koikoi-referee" / "random_bot_c"
    for run in range(2):
        bot = BotUnderTest(argv, tmp_path / f"{run}.log", cache_env)
        assert bot.handshake(P.hello_message(0, PRESETS["guide"], "m", TimeControl())).name == "random-c"
        assert bot.finish(P.bye_message()) == 0
        if run == 0:
            built = binary.stat().st_mtime_ns
    assert binary.stat().st_mtime_ns == built
    assert not (ROOT / "bots" / "c" / "random_bot").exists()


def load_greedy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("greedy_bot", BOTS / "greedy_bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_greedy_policy_beats_random(preset: Rules) -> None:
    """Seeded and in process: the heuristic wins most of 60 matches against uniform random play."""
    choose = load_greedy().choose
    wins = 0
    for i in range(60):
        greedy_seat, rng = i % 2, random.Random(i)
        state = new_match(preset, seed=i)
        while not state.is_over:
            legal = legal_actions(state)
            if state.to_move == greedy_seat:
                request = P.request_message(1, observe(state, greedy_seat), 1000, 1000)
                action = legal[request["legal"].index(choose(request))]
            else:
                action = rng.choice(legal)
            state = apply(state, action)
        wins += state.winner == greedy_seat
    assert wins >= 36, f"greedy won only {wins} of 60"
