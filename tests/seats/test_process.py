"""A bot as an OS process: framing, caps, stderr log, and the kill of the whole process group."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.seats.process import (
    BotClosedError,
    BotCommandError,
    BotProcess,
    Limits,
    LineTooLongError,
    check_command,
    command_argv,
)
from tests.helpers import TESTS, group_members

HERE = TESTS


def script(code: str) -> str:
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_command_argv_runs_scripts_with_their_interpreter() -> None:
    assert command_argv("bots/random_bot.py --seed 3") == [
        sys.executable,
        "bots/random_bot.py",
        "--seed",
        "3",
    ]
    assert command_argv("bots/random_bot.js") == ["node", "bots/random_bot.js"]
    assert command_argv("'my bot' -x") == ["my bot", "-x"]
    with pytest.raises(BotCommandError):
        command_argv("   ")
    with pytest.raises(BotCommandError):
        command_argv("unterminated 'quote")


def test_check_command_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(BotCommandError, match=r"not found: nope\.py"):
        check_command("nope.py")
    with pytest.raises(BotCommandError, match="not found on PATH"):
        check_command("no-such-program-koikoi")
    plain = tmp_path / "bot"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(BotCommandError, match="not executable"):
        check_command(str(plain))
    assert check_command("bots/random_bot.py")[1] == "bots/random_bot.py"


def test_lines_round_trip_and_eof_is_closed() -> None:
    async def main() -> None:
        p = BotProcess(script("import sys\nfor l in sys.stdin: print(l.strip().upper(), flush=True)"))
        await p.start()
        p.write(b'{"a":1}\n{"b":2}\n')
        assert await p.read_line() == b'{"A":1}'
        assert await p.read_line() == b'{"B":2}'
        assert p.pid is not None
        await p.close()
        assert group_members(p.pid) == []
        with pytest.raises(BotClosedError):
            p.write(b"x\n")

    run(main())


ECHO_ON_DEMAND = script(
    "import sys\nfor l in sys.stdin: sys.stdout.write(l.strip().replace(',', '\\n') + '\\n'); sys.stdout.flush()"
)
"""Echoes each line at once; ``a,b`` comes back as two lines in one write (the second then waits in the buffer)."""


def test_a_short_deadline_after_long_ones_still_times_out() -> None:
    async def main() -> None:
        p = BotProcess(ECHO_ON_DEMAND)
        await p.start()
        for k in range(3):  # reads answered against a 30 s deadline: one timer, armed for it
            p.write(b"%d\n" % k)
            assert await p.read_line(30.0) == b"%d" % k
        t0 = time.monotonic()
        with pytest.raises(TimeoutError):
            await p.read_line(0.3)  # nothing was asked: no answer comes
        assert 0.29 <= time.monotonic() - t0 < 20.0  # its own deadline, not the armed 30 s one
        await p.close()

    run(main())


def test_an_earlier_reads_timer_does_not_end_a_later_read() -> None:
    async def main() -> None:
        p = BotProcess(ECHO_ON_DEMAND)
        await p.start()
        p.write(b"a,b\n")
        assert await p.read_line(30.0) == b"a"
        assert await p.read_line(0.05) == b"b"  # already read in: the timer is armed for this short deadline
        # The next read has a later deadline, and its answer is asked for after the short one is due.
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, p.write, b"c\n")
        assert await p.read_line(60.0) == b"c"
        p.write(b"d\n")
        assert await p.read_line(30.0) == b"d"
        await p.close()

    run(main())


def test_a_timer_due_with_no_read_pending_leaves_the_next_read_timed() -> None:
    async def main() -> None:
        p = BotProcess(ECHO_ON_DEMAND)
        await p.start()
        p.write(b"a,b\n")
        assert await p.read_line(30.0) == b"a"
        assert await p.read_line(0.05) == b"b"
        await asyncio.sleep(0.3)  # the timer comes due between reads
        with pytest.raises(TimeoutError):
            await p.read_line(0.1)
        p.write(b"c\n")
        assert await p.read_line(30.0) == b"c"
        await p.close()

    run(main())


def test_a_read_cancelled_from_outside_is_a_cancellation_not_a_timeout() -> None:
    async def main() -> None:
        p = BotProcess(ECHO_ON_DEMAND)
        await p.start()
        task = asyncio.ensure_future(p.read_line(30.0))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        p.write(b"a\n")
        assert await p.read_line(10.0) == b"a"
        await p.close()

    run(main())


def test_exit_is_reported_with_its_status() -> None:
    async def main() -> None:
        p = BotProcess(script("import sys; sys.stdout.write('partial'); sys.exit(7)"))
        await p.start()
        with pytest.raises(BotClosedError):
            await p.read_line()
        assert "status 7" in await p.exit_text()
        await p.close()

    run(main())


def test_a_line_over_the_cap_is_oversized_and_memory_stays_bounded() -> None:
    async def main() -> None:
        # 50 MB without a newline: the reader must give up at the cap, not buffer it all.
        p = BotProcess(
            script("import sys; sys.stdout.write('x' * 50_000_000); sys.stdout.flush()"), max_line=1000
        )
        await p.start()
        with pytest.raises(LineTooLongError):
            await p.read_line()
        assert p._stdout is not None and len(p._stdout._buffer) <= 2 * 1000 + 65536  # type: ignore[attr-defined]
        await p.close()

    run(main())


def test_a_line_at_the_cap_is_accepted() -> None:
    async def main() -> None:
        p = BotProcess(script("print('y' * 1000, flush=True); import time; time.sleep(5)"), max_line=1000)
        await p.start()
        assert await p.read_line() == b"y" * 1000
        await p.close(exit_wait_s=0.0)

    run(main())


def test_stderr_goes_to_a_capped_log(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "bot.log"

    async def main() -> None:
        p = BotProcess(
            script(
                "import sys; sys.stderr.write('e' * 300_000); sys.stderr.flush(); print('done', flush=True)"
            ),
            stderr_path=log,
            stderr_cap=10_000,
        )
        await p.start()
        assert await p.read_line() == b"done"  # the bot was never blocked on its stderr
        await p.close()

    run(main())
    text = log.read_bytes()
    assert text.startswith(b"e" * 10_000)
    assert text.endswith(b"[stderr log truncated]\n")
    assert len(text) < 10_100


def test_close_kills_the_whole_group_even_a_child_ignoring_sigterm() -> None:
    code = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )

    async def main() -> int:
        p = BotProcess(script(code), limits=Limits(sandbox="none"))
        await p.start()
        assert await p.read_line() == b"ready"
        assert p.pid is not None
        assert len(group_members(p.pid)) == 2  # the limit wrappers exec the bot: the bot and its child
        await p.close(exit_wait_s=0.05, grace_s=0.05)
        return p.pid

    pgid = run(main())
    assert group_members(pgid) == []


def _default_signals() -> None:
    """In the child, before it runs the referee: SIGINT and SIGTERM as a terminal's foreground job gets them."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_referee_interrupted_mid_match_leaves_no_process(tmp_path: Path, signum: int, code: int) -> None:
    """A referee stopped mid-match (Ctrl-C or SIGTERM) kills its bots' process groups before it exits."""
    pidfile = tmp_path / "pids"
    bot = tmp_path / "hang.py"
    bot.write_text(
        "import json, os, sys\n"
        f"open({str(pidfile)!r}, 'a').write(str(os.getpid()) + '\\n')\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line)['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'name': 'hang'}), flush=True)\n"
    )
    exe = str(Path(sys.executable).parent / "koikoi-referee")
    referee = subprocess.Popen(
        [exe, "play", str(bot), str(bot), "--move-ms", "60000", "--sandbox", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONFAULTHANDLER": "1"},
        preexec_fn=_default_signals,  # a suite started in the background of a shell would pass on SIGINT ignored
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(pidfile.read_text().split() if pidfile.exists() else []) < 2:
        time.sleep(0.05)
    pids = [int(x) for x in pidfile.read_text().split()]
    assert all(group_members(pid) for pid in pids)
    time.sleep(0.3)
    referee.send_signal(signum)
    try:
        _, err = referee.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # where it is stuck: every thread's stack (faulthandler, on SIGABRT)
        referee.send_signal(signal.SIGABRT)
        _, err = referee.communicate(timeout=30)
        pytest.fail(f"the referee did not stop within 30 s of the signal:\n{err.decode(errors='replace')}")
    assert referee.returncode == code, err
    if signum == signal.SIGINT:
        assert b"interrupted" in err
    for pid in pids:
        assert group_members(pid) == []


DETACHING_BOT = """\
import json, os, sys, time
def detach():  # a short-lived helper in a session of its own whose parent is gone: an orphan
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            os.setsid()
            time.sleep(0.05)
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "detacher"}), flush=True)
    elif msg["type"] == "request":
        detach()
        time.sleep(0.025)
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


def zombie_children(pid: int) -> int:
    """How many children of ``pid`` are zombies (read from ``/proc``)."""
    kids: list[str] = []
    try:
        for tid in Path(f"/proc/{pid}/task").iterdir():
            kids += (tid / "children").read_text().split()
    except OSError:
        return 0
    count = 0
    for kid in kids:
        try:
            stat = Path(f"/proc/{kid}/stat").read_text()
        except OSError:
            continue
        count += stat[stat.rindex(")") + 2] == "Z"
    return count


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["none", "auto"])
def test_orphans_of_a_bot_are_reaped_during_a_run(tmp_path: Path, mode: str) -> None:
    """A bot that leaves a detached helper at every request: the referee (a subreaper) reaps the orphans as
    they end instead of keeping one zombie per request (in the sandbox they never reach the referee)."""
    bot = tmp_path / "detach.py"
    bot.write_text(DETACHING_BOT)
    exe = str(Path(sys.executable).parent / "koikoi-referee")
    first = str(HERE / "bots" / "first_bot.py")
    referee = subprocess.Popen(
        [exe, "play", str(bot), first, "--games", "12", "--rounds", "1", "--seed", "5", "--json", "--sandbox", mode],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    most = 0
    while referee.poll() is None:
        most = max(most, zombie_children(referee.pid))
        time.sleep(0.01)
    out, err = referee.communicate()
    assert referee.returncode == 0, err
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == 12 and all(r["forfeit"] is None for r in results)
    helpers = sum((r["decisions"] + 1) // 2 for r in results)  # about half the decisions are the bot's
    assert helpers >= 60, helpers  # fixed by the seed
    assert most <= 5, f"{most} zombies at once"
