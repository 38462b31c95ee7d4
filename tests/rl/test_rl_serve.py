"""A trained policy as a contest bot (``python -m referee.rl.serve``), a bot program as the Gym opponent, and a
Python function as a seat: real processes, real replays."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT

pytest.importorskip("numpy", reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'")
pytest.importorskip("gymnasium", reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'")

import numpy as np

from referee.engine import PRESETS, card
from referee.match import MatchConfig, run_match
from referee.records import TimeControl
from referee.replay import Decision, Result, read_replay, verify
from referee.rl.actions import CHOOSE_BASE, INDEX
from referee.rl.observation import wire_action
from referee.rl.opponents import BotOpponent, OpponentError
from referee.rl.single import KoikoiEnv
from referee.seats.function import FunctionSeat
from referee.seats.process import Limits

GREEDY = f"{sys.executable} {ROOT / 'bots' / 'greedy_bot.py'}"
GENEROUS = TimeControl(startup_ms=60_000, move_ms=30_000, bank_ms=120_000)
POLICY = """
import numpy as np

def highest(observation, mask):
    assert observation.shape == (257,) and observation.dtype == np.float32
    return int(np.flatnonzero(mask)[-1])

def broken(observation, mask):
    raise RuntimeError("no idea")
"""


def _highest_index(decision: Decision) -> Any:
    """The legal action with the highest index of the action space (a capture choice: 192 + its target)."""

    def index(action: dict[str, Any]) -> int:
        if set(action) == {"capture"}:
            return CHOOSE_BASE + card(action["capture"])
        return INDEX[wire_action(action, None)]

    return max(decision.legal, key=index)


def _serve(tmp_path: Path, name: str) -> str:
    (tmp_path / "policy.py").write_text(POLICY, encoding="utf-8")
    return f"{sys.executable} -m referee.rl.serve {tmp_path / 'policy.py'}:{name}"


@pytest.mark.slow
def test_a_served_policy_plays_a_match_through_the_referee(tmp_path: Path) -> None:
    replay = tmp_path / "served.jsonl"
    config = MatchConfig(PRESETS["koikoi-japan"], seed=5, time=GENEROUS, replay_path=replay)
    # No sandbox: the policy file lives in the test's folder, which a sandboxed bot could not read.
    limits = Limits(sandbox="none")
    result = run_match((_serve(tmp_path, "highest"), GREEDY), config, limits=limits, log_dir=tmp_path)
    assert result.forfeit is None, result.forfeit
    assert result.names[0] == "highest"
    assert verify(replay).ok
    decisions = [line for _, line in read_replay(replay) if isinstance(line, Decision) and line.seat == 0]
    assert len(decisions) >= 8
    for d in decisions:  # every action is the policy's choice, not the helper's fallback
        assert d.action == _highest_index(d)
    log = (tmp_path / "m-0001-seat1.log").read_text(encoding="utf-8")
    assert "bot:" not in log
    (end,) = [line for _, line in read_replay(replay) if isinstance(line, Result)]
    assert end.scores == result.scores


def test_a_policy_that_raises_still_keeps_its_seat(tmp_path: Path) -> None:
    config = MatchConfig(PRESETS["cardavia"], seed=2, time=GENEROUS)
    result = run_match((_serve(tmp_path, "broken"), GREEDY), config, limits=Limits(sandbox="none"), log_dir=tmp_path)
    assert result.forfeit is None
    assert "choose raised RuntimeError" in (tmp_path / "m-0001-seat1.log").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "message"),
    [("nocolon", "expected MODULE:NAME"), ("/nowhere/p.py:act", "no such file"), ("json:nothing", "no callable")],
)
def test_serve_refuses_a_policy_it_cannot_load_in_one_line(spec: str, message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "referee.rl.serve", spec], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_the_gym_env_plays_a_whole_episode_against_a_bot_command() -> None:
    opponent = BotOpponent(GREEDY, time=GENEROUS)
    env = KoikoiEnv(opponent, seat="player_2")
    try:
        for seed in (4, 9):  # the second episode reuses the bot's process (new_match)
            observation, info = env.reset(seed=seed)
            total = 0.0
            while True:
                index = int(np.flatnonzero(observation["action_mask"])[0])
                observation, reward, terminated, _, info = env.step(index)
                total += reward
                if terminated:
                    break
            assert env.table.over and "illegal_action" not in info
            assert total == env.table.state.scores[1] - PRESETS["koikoi-japan"].starting_points
            assert opponent.name == "greedy"
        # An episode cut short by an illegal action leaves the bot mid-match: the next one starts a fresh process.
        first_process = opponent._seat
        observation, _ = env.reset(seed=5)
        illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
        assert env.step(illegal)[2]
        observation, _ = env.reset(seed=6)
        assert opponent._seat is not first_process
        terminated = False
        while not terminated:
            observation, _, terminated, _, info = env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        assert env.table.over and "illegal_action" not in info
        env.close()  # closed, then reset: a new process plays the next episode
        observation, _ = env.reset(seed=7)
        assert opponent._seat is not None and opponent.name == "greedy"
        terminated = False
        while not terminated:
            observation, _, terminated, _, info = env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        assert env.table.over and "illegal_action" not in info
    finally:
        env.close()


def test_a_bot_that_cannot_start_is_an_opponent_error() -> None:
    env = KoikoiEnv(f"{sys.executable} -c 'import sys; sys.exit(3)'")
    try:
        with pytest.raises(OpponentError, match="crash"):
            env.reset(seed=1)
    finally:
        env.close()


def test_a_function_seat_plays_a_match_and_sees_its_events() -> None:
    seen: list[str] = []
    asked: list[str] = []

    def first(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request["decision"])
        return request["legal"][0]

    def confused(request: dict[str, Any]) -> dict[str, Any]:
        return {"play": "no-such-card"}

    seat = FunctionSeat(first, "first", observe=lambda msg: seen.append(msg["type"]))
    config = MatchConfig(PRESETS["guide"], seed=3, time=GENEROUS)
    result = run_match((lambda c, i: seat, GREEDY), config)
    assert result.forfeit is None and result.names == ("first", "greedy")
    assert seen[0] == "hello" and "event" in seen and asked
    err = io.StringIO()
    result = run_match((lambda c, i: FunctionSeat(confused, stderr=err), GREEDY), config)
    assert result.forfeit is None and "not a legal action" in err.getvalue()


def test_a_policy_installed_with_the_package_serves_inside_the_sandbox(tmp_path: Path) -> None:
    command = f"{sys.executable} -m referee.rl.serve referee.rl.policies:greedy"
    config = MatchConfig(PRESETS["cardavia"], seed=8, time=GENEROUS)
    result = run_match((command, GREEDY), config, limits=Limits(sandbox="auto"), log_dir=tmp_path)
    assert result.forfeit is None, result.forfeit
    assert result.names == ("greedy", "greedy")
    assert "bot:" not in (tmp_path / "m-0001-seat1.log").read_text(encoding="utf-8")
