"""The cheating battery: each attack of a contestant on the referee, its opponent or the machine
(``tests/hostile/attack_bot.py``) through a real ``koikoi-referee play`` or ``tournament`` run in a subprocess,
with its expected outcome under the bwrap sandbox: the attack finds nothing, harms nobody, leaves no process,
and a limit it runs into is the attacker's own problem.

An attack bot says what it achieved on stderr (``VERDICT {json}`` lines, kept by the referee in the bot's log);
the test also checks the side effects it can see from outside (the opponent's forfeit, the results file, the
processes carrying the bot's tag). Each sandboxed case adds to the battery tally; an attack that gets through
counts as a way out, and the run's summary line must say "ways out found: 0".

The same bots run once without the sandbox, where the attacks that need no more than the same user id must
work: this shows that each bot really attacks (a test that cannot fail proves nothing).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import ASKED_DEAL, FIRST, GREEDY, HOSTILE, BatteryTally, Run, run_tagged, sandbox_problem

ATTACK = HOSTILE / "attack_bot.py"
THINKER = f"{HOSTILE / 'hostile_bot.py'} sleepy /dev/null 200"  # 200 ms per answer
FRAMING_DEAL = ("--rounds", "1", *ASKED_DEAL)
"""The framing attack's match: on a drawn deal the attacker's seat can win the round before its opponent is ever
asked, and the attack never has its chance."""
LIMIT_MB = 256
TMP_CAP = (256 + 8) << 20  # the default size of a sandboxed bot's /tmp, and a write or two beyond

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

PROBLEM = sandbox_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"bwrap cannot run here: {PROBLEM}")


def play(tmp: Path, mode: str, *, sandbox: str, opponent: str = FIRST, extra: tuple[str, ...] = (),
         json_out: bool = True, env: dict[str, str] | None = None, program: str | None = None) -> Run:  # fmt: skip
    """One match, the attacker in seat 2, through ``koikoi-referee play`` in ``tmp`` (replay and logs there).
    ``program`` runs the attack bot as that program (a copy made by :func:`installed`) instead of a ``.py``."""
    tag = f"--tag={uuid.uuid4().hex}"
    argv = [
        "play", opponent, f"{program or ATTACK} {mode} {tag}", "--replay", "r.replay.jsonl", "--log-dir", "logs",
        "--sandbox", sandbox, "--startup-ms", "20000", "--move-ms", "300", "--bank-ms", "1000", *extra,
        *(["--json"] if json_out else []),
    ]  # fmt: skip
    run = run_tagged(argv, tmp, tag, env=env, stdout=None if json_out else tmp / "out.txt")
    assert run.code == 0, run.err
    if json_out:
        run.result = json.loads(run.out.splitlines()[-1])
    return run


def installed(folder: Path, name: str = "attack-bot") -> Path:
    """The attack bot as an executable program in ``folder`` (as a contestant ships a binary or a script),
    readable by any user: a sandboxed bot of a root referee runs as a user of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text("#!/usr/bin/python3\n" + ATTACK.read_text())
    program.chmod(0o755)
    folder.chmod(0o755)
    return program


def beside(tmp: Path) -> Run:
    """The organiser runs ``play ./attack-bot ... --replay r.replay.jsonl`` in the bot's own folder."""
    installed(tmp)
    return play(tmp, "replay_search", sandbox="bwrap", program="./attack-bot")


def under_home(tmp: Path) -> Run:
    """The organiser works in ``~/contest`` with the bots in ``~/contest/bots`` and the replay in ``~/contest``."""
    home = tmp / "home"
    installed(home / "contest" / "bots")
    env = {**os.environ, "HOME": str(home)}
    return play(home / "contest", "replay_search", sandbox="bwrap", program="bots/attack-bot", env=env)


def neighbours(tmp: Path) -> Run:
    """Two contestants' programs in one ``bots`` folder, as a tournament is often laid out."""
    installed(tmp / "bots")
    opponent = tmp / "bots" / "other-bot"
    opponent.write_text("#!/usr/bin/python3\n" + Path(FIRST).read_text())
    opponent.chmod(0o755)
    return play(tmp, "bot_peek", sandbox="bwrap", opponent=str(opponent), program="bots/attack-bot")


def seed_of(replay: Path) -> str:
    """The seed in a replay's header, as a string."""
    return str(json.loads(replay.read_text().splitlines()[0])["seed"])


def own_forfeit(run: Run, reason: str, detail: str) -> bool:
    """The attacker (seat 2) forfeited for ``reason``, with ``detail`` in the forfeit's detail."""
    forfeit = run.result.get("forfeit")
    return isinstance(forfeit, dict) and forfeit.get("seat") == 2 and forfeit.get("reason") == reason \
        and detail in str(forfeit.get("detail"))  # fmt: skip


def ends_normally(run: Run) -> bool:
    """The match reached its end without a forfeit."""
    return run.result.get("forfeit") is None and run.result.get("reason") in ("rounds", "broke")


@dataclass(frozen=True)
class Attack:
    """An attack under the sandbox: how to run it and how to judge it (a way out, or the expected outcome)."""

    mode: str
    run: Callable[[Path], Run]
    way_out: Callable[[Run], bool]  # the attack got through
    expected: Callable[[Run], bool]  # everything else that must hold


def sandboxed(mode: str, **kw: object) -> Callable[[Path], Run]:
    return lambda tmp: play(tmp, mode, sandbox="bwrap", **kw)  # type: ignore[arg-type]


def seed_attack(tmp: Path) -> Run:
    """The seed as CI passes it (``--seed $GITHUB_RUN_ID``, the variable in the environment), then a drawn seed
    printed to the referee's stdout, a file."""
    env = {**os.environ, "GITHUB_RUN_ID": "4242424242"}
    run = play(tmp, "seed_read", sandbox="bwrap", extra=("--seed", "4242424242"), json_out=False, env=env)
    (tmp / "drawn").mkdir()
    drawn = play(tmp / "drawn", "seed_read", sandbox="bwrap", json_out=False)
    run.verdicts += drawn.verdicts
    run.left += drawn.left
    run.result = {"seeds": [seed_of(tmp / "r.replay.jsonl"), seed_of(tmp / "drawn" / "r.replay.jsonl")]}
    return run


def seed_found(run: Run) -> bool:
    seeds = run.result["seeds"]
    assert isinstance(seeds, list)
    return any(s in v.get("candidates", []) for v in run.verdicts for s in seeds)  # type: ignore[operator]


def tournament(tmp: Path, mode: str, *, sandbox: str, jobs: int = 1) -> Run:
    """A tournament (first bot against the attacker, 2 deal pairs) with its output in ``tmp/out``."""
    tag = f"--tag={uuid.uuid4().hex}"
    argv = [
        "tournament", "-b", f"first={FIRST}", "-b", f"cheat={ATTACK} {mode} {tag}", "-n", "2", "-j", str(jobs),
        "--out", "out", "--no-html", "--sandbox", sandbox, "--startup-ms", "20000", "--move-ms", "1000",
        "--bank-ms", "20000",
    ]  # fmt: skip
    run = run_tagged(argv, tmp, tag, logs="out/logs")
    assert run.code in (0, 1), run.err
    run.result = {"results": (tmp / "out" / "results.jsonl").read_text()}
    return run


def fills_stopped(run: Run) -> bool:
    fills = [f for v in run.verdicts for f in v.get("fills", [])]  # type: ignore[attr-defined]
    return len(fills) == 2 and all(f["error"] and f["written"] <= TMP_CAP for f in fills)


def flood_log_capped(tmp: Path) -> bool:
    log = tmp / "logs" / "m-0001-seat2.log"
    return log.stat().st_size < (1 << 20) + 200


ATTACKS = [
    Attack("takeover", sandboxed("takeover", opponent=GREEDY), lambda r: r.won() or r.forfeit_of(1),
           lambda r: ends_normally(r) and bool(r.verdicts)),
    Attack("parent_fds", sandboxed("parent_fds"), Run.won, lambda r: len(r.verdicts) == 2 and ends_normally(r)),
    Attack("parent_fds-j2", lambda tmp: tournament(tmp, "parent_fds", sandbox="bwrap", jobs=2), Run.won,
           lambda r: len(r.verdicts) == 8),  # games a and b of a pair side by side, four matches, two looks each
    Attack("replay_search", sandboxed("replay_search"), Run.won, lambda r: len(r.verdicts) == 1),
    Attack("replay_search-beside", beside, Run.won, lambda r: len(r.verdicts) == 1),
    Attack("replay_search-home", under_home, Run.won, lambda r: len(r.verdicts) == 1),
    Attack("bot_peek", neighbours, Run.won, lambda r: len(r.verdicts) == 1 and ends_normally(r)),
    Attack("seed_read", seed_attack, seed_found, lambda r: len(r.verdicts) == 2),
    # A frozen attacker cannot even try while its opponent's request is pending: no verdict is right too.
    Attack("framing", sandboxed("framing", opponent=THINKER, extra=FRAMING_DEAL), lambda r: r.forfeit_of(1),
           lambda r: ends_normally(r)),
    Attack("setsid_churn", sandboxed("setsid_churn"), lambda r: bool(r.left),
           lambda r: ends_normally(r) and r.won("churning")),
    Attack("results_rewrite", lambda tmp: tournament(tmp, "results_rewrite", sandbox="bwrap"),
           lambda r: r.won() or "forged" in str(r.result["results"]),
           lambda r: len(r.verdicts) == 4 and str(r.result["results"]).count("\n") == 4),
    Attack("fork_bomb", sandboxed("fork_bomb"), lambda r: bool(r.left) or r.forfeit_of(1),
           lambda r: any(v.get("error") for v in r.verdicts) or own_forfeit(r, "crash", "")),  # a limit hit
    Attack("disk_fill", sandboxed("disk_fill"), lambda r: not fills_stopped(r), lambda r: not r.forfeit_of(1)),
    Attack("stderr_flood", sandboxed("stderr_flood"), lambda r: r.forfeit_of(1), ends_normally),
    Attack("memory_children", sandboxed("memory_children", extra=("--bot-memory-mb", str(LIMIT_MB))),
           lambda r: any(int(v.get("held_mib", 0)) > LIMIT_MB for v in r.verdicts),  # type: ignore[call-overload]
           lambda r: own_forfeit(r, "crash", "memory")),
    Attack("memory_orphans", sandboxed("memory_orphans", extra=("--bot-memory-mb", str(LIMIT_MB))),
           lambda r: any(int(v.get("held_mib", 0)) > LIMIT_MB for v in r.verdicts),  # type: ignore[call-overload]
           lambda r: own_forfeit(r, "crash", "memory")),
]  # fmt: skip


@needs_bwrap
@pytest.mark.parametrize("attack", [
    pytest.param(a, id=a.mode)
    for a in ATTACKS
])  # fmt: skip
def test_an_attack_under_the_sandbox_finds_no_way_out(attack: Attack, tmp_path: Path, battery: BatteryTally) -> None:
    battery.cases += 1
    run = attack.run(tmp_path)
    way_out = attack.way_out(run)
    expected = attack.expected(run) and not run.left and run.took < 90
    battery.ways_out += way_out
    battery.orphans += len(run.left)
    battery.expected += expected and not way_out
    assert not way_out, f"the attack got through: {run.verdicts} {run.result}"
    assert not run.left, f"processes of the bot still ran after the match: {run.left}"
    assert expected, f"unexpected outcome: {run.verdicts} {run.result}"
    if attack.mode == "stderr_flood":
        assert flood_log_capped(tmp_path)


CONTROLS = {
    "takeover": lambda tmp: play(tmp, "takeover", sandbox="none", opponent=GREEDY),
    "parent_fds": lambda tmp: play(tmp, "parent_fds", sandbox="none"),
    "parent_fds-j2": lambda tmp: tournament(tmp, "parent_fds", sandbox="none", jobs=2),
    "replay_search": lambda tmp: play(tmp, "replay_search", sandbox="none"),
    # Bots are frozen between their turns, sandboxed or not: only one that may think on its opponent's time
    # (--ponder) can try to stop an unsandboxed referee.
    "framing": lambda tmp: play(tmp, "framing", sandbox="none", opponent=THINKER, extra=(*FRAMING_DEAL, "--ponder")),
    "results_rewrite": lambda tmp: tournament(tmp, "results_rewrite", sandbox="none"),
}
JUDGE = {a.mode: a.way_out for a in ATTACKS}


@pytest.mark.parametrize("mode", sorted(CONTROLS))
def test_without_the_sandbox_the_attack_gets_through(mode: str, tmp_path: Path) -> None:
    """The attacks that need nothing but the referee's user id work on an unsandboxed referee: the bots are real."""
    run = CONTROLS[mode](tmp_path)
    assert JUDGE[mode](run), f"the attack bot failed where it should work: {run.verdicts} {run.result}"
    assert not run.left


def test_without_the_sandbox_the_seed_is_read_from_the_referee(tmp_path: Path) -> None:
    """From the referee's command line and environment, and from its stdout when that is a file."""
    env = {**os.environ, "GITHUB_RUN_ID": "4242424242"}
    run = play(tmp_path, "seed_read", sandbox="none", extra=("--seed", "4242424242"), json_out=False, env=env)
    assert "4242424242" in run.verdicts[0]["candidates"]  # type: ignore[operator]
    drawn = tmp_path / "drawn"
    drawn.mkdir()
    run = play(drawn, "seed_read", sandbox="none", json_out=False)
    assert seed_of(drawn / "r.replay.jsonl") in run.verdicts[0]["candidates"]  # type: ignore[operator]
