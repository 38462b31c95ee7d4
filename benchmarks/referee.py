"""Decisions per second through the full referee, beside a raw JSON-line echo over the same kind of pipes.

Run: ``.venv/bin/python benchmarks/referee.py [--matches N] [--rules PRESET] [--rounds N] [--gz]``. Both sides
use the same minimal Python bot (first legal action) over asyncio subprocess pipes. The raw echo writes the same request
lines the referee would write (encoded in the loop from plain dicts with the generic JSON encoder, where the
referee writes its requests from cached texts) and parses each answer; the referee side plays whole
matches (engine, views, events to both seats, validation, time control, replay file, the bot in its sandbox).
Goal: a ratio <= 1.5 against the echo that reads each bot's stdout through asyncio's subprocess pipe, as the median
over rounds of each round's ratio (the echo and the referee run back to back in a round, so both see the machine in
the same state; the best figure of each side over all rounds is printed too). The referee
reads a bot's stdout through a pipe of its own connected straight to a stream (one event-loop pass per line where
the subprocess pipe takes two); the ratio against an echo that reads the same way is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This file is named like the package: keep its own folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS, apply, legal_actions, new_match, observe  # noqa: E402
from referee.match import MatchConfig, play_match  # noqa: E402
from referee.protocol import encode, request_message  # noqa: E402
from referee.seats import BotSeat  # noqa: E402
from referee.seats.process import Limits  # noqa: E402

MINIMAL_BOT = """
import sys
from json import dumps, loads
out = sys.stdout
for line in sys.stdin:
    if line.startswith('{"type":"request"'):
        msg = loads(line)
        out.write(dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}) + "\\n")
        out.flush()
    elif line.startswith('{"type":"hello"'):
        out.write('{"type":"hello","name":"minimal"}\\n')
        out.flush()
    elif line.startswith('{"type":"bye"'):
        break
"""


def bot_command(path: Path) -> str:
    """The command line of the minimal bot written to ``path``."""
    path.write_text(MINIMAL_BOT)
    return f"{sys.executable} {path}"


def sample_requests(rules_name: str, matches: int) -> list[dict[str, Any]]:
    """The requests of ``matches`` engine-only matches played with the first legal action."""
    out: list[dict[str, Any]] = []
    for seed in range(matches):
        state = new_match(PRESETS[rules_name], seed)
        while not state.is_over:
            # A plain dict: the echo encodes it with the generic JSON encoder, as a raw echo would.
            out.append(dict(request_message(len(out) + 1, observe(state, state.to_move), 1000, 30000)))
            state = apply(state, legal_actions(state)[0])
    return out


async def _direct_reader(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamReader:
    """A stream reading the pipe ``fd`` through a read-pipe transport of its own."""
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), open(fd, "rb", 0))  # noqa: SIM115
    return reader


async def raw_echo(
    command: str, requests: list[dict[str, Any]], bots: int = 2, direct: bool = False
) -> tuple[float, float]:
    """Round trips per second: write a request line, read and parse the answer.

    Like a match, the requests alternate between ``bots`` processes (two by default: a match has two seats).
    ``direct``: read each bot's stdout as the referee does (a pipe of its own, connected straight to a stream:
    one event-loop pass per line) instead of through the subprocess's own pipe (two passes).
    Also returns this process's CPU microseconds per round trip.
    """
    loop = asyncio.get_running_loop()
    pipes: list[tuple[asyncio.StreamWriter, asyncio.StreamReader]] = []
    procs = []
    for _ in range(bots):
        if direct:
            read_end, write_end = os.pipe()
            reader = await _direct_reader(loop, read_end)
            proc = await asyncio.create_subprocess_exec(
                *command.split(), stdin=asyncio.subprocess.PIPE, stdout=write_end, start_new_session=True
            )
            os.close(write_end)
        else:
            proc = await asyncio.create_subprocess_exec(
                *command.split(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                start_new_session=True,
            )  # fmt: skip
            assert proc.stdout is not None
            reader = proc.stdout
        assert proc.stdin is not None
        proc.stdin.write(b'{"type":"hello"}\n')
        await reader.readline()
        pipes.append((proc.stdin, reader))
        procs.append(proc)
    t0, c0 = time.perf_counter(), time.process_time()
    for k, req in enumerate(requests):
        w, r = pipes[k % bots]
        w.write(encode(req))
        answer = json.loads(await r.readline())
        assert answer["id"] == req["id"]
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(b'{"type":"bye"}\n')
        await proc.wait()
    return len(requests) / elapsed, cpu / len(requests) * 1e6


async def referee(
    command: str, rules_name: str, matches: int, replay_dir: Path, gz: bool = False, ponder: bool = False
) -> tuple[float, int, float]:
    """Decisions per second over ``matches`` full matches (after one warm-up match), the decisions, and the
    referee's CPU microseconds per decision. The bots are frozen while it is not their turn unless ``ponder``."""
    seats = (BotSeat(command, limits=Limits(ponder=ponder)), BotSeat(command, limits=Limits(ponder=ponder)))
    try:
        await play_match(seats, MatchConfig(PRESETS[rules_name], 10_000))
        decisions = 0
        t0, c0 = time.perf_counter(), time.process_time()
        for k in range(matches):
            path = replay_dir / f"m{k}.jsonl{'.gz' if gz else ''}"
            result = await play_match(seats, MatchConfig(PRESETS[rules_name], k, replay_path=path))
            assert result.forfeit is None, result.forfeit
            decisions += result.decisions
        cpu = (time.process_time() - c0) / decisions * 1e6
        return decisions / (time.perf_counter() - t0), decisions, cpu
    finally:
        await asyncio.gather(*(s.close() for s in seats))


def main() -> None:
    """Run the measurements ``--rounds`` times, interleaved; print the best figures and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=40, help="matches on the referee side (default 40)")
    parser.add_argument("--rules", default="koikoi-japan", choices=sorted(PRESETS))
    parser.add_argument("--rounds", type=int, default=15, help="interleaved repetitions (default 15)")
    parser.add_argument("--gz", action="store_true", help="write compressed replays (.jsonl.gz)")
    args = parser.parse_args()
    load = os.getloadavg()
    best: dict[str, tuple[float, float]] = {}
    ratios: list[float] = []
    direct_ratios: list[float] = []
    ponder_ratios: list[float] = []

    def keep(label: str, rate: float, cpu: float) -> None:
        old = best.get(label)
        best[label] = (max(rate, old[0]) if old else rate, min(cpu, old[1]) if old else cpu)

    with tempfile.TemporaryDirectory() as tmp:
        command = bot_command(Path(tmp) / "minimal_bot.py")
        requests = sample_requests(args.rules, args.matches)
        for _ in range(args.rounds):
            keep("raw1", *asyncio.run(raw_echo(command, requests, bots=1)))
            raw, cpu2 = asyncio.run(raw_echo(command, requests))
            keep("raw2", raw, cpu2)
            raw_d, cpu2d = asyncio.run(raw_echo(command, requests, direct=True))
            keep("raw2d", raw_d, cpu2d)
            ref, decisions, cpu_ref = asyncio.run(referee(command, args.rules, args.matches, Path(tmp), args.gz))
            keep("ref", ref, cpu_ref)
            ratios.append(raw / ref)
            direct_ratios.append(raw_d / ref)
            ref_p, _, cpu_p = asyncio.run(referee(command, args.rules, args.matches, Path(tmp), args.gz, ponder=True))
            keep("ponder", ref_p, cpu_p)
            ponder_ratios.append(raw / ref_p)
    (raw1, cpu1), (raw, cpu2), (ref, cpu_ref) = best["raw1"], best["raw2"], best["ref"]
    raw_d, cpu2d = best["raw2d"]
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs; "
          f"best of {args.rounds} interleaved rounds")  # fmt: skip
    print(f"raw echo, one bot:   {raw1:9.0f} round trips/s  ({1e6 / raw1:6.1f} us each, {cpu1:5.1f} us CPU here; "
          f"{len(requests)} requests)")  # fmt: skip
    print(f"raw echo, two bots:  {raw:9.0f} round trips/s  ({1e6 / raw:6.1f} us each, {cpu2:5.1f} us CPU here; "
          "alternating as in a match)")  # fmt: skip
    print(f"  read directly:     {raw_d:9.0f} round trips/s  ({1e6 / raw_d:6.1f} us each, {cpu2d:5.1f} us CPU here; "
          "stdout read as the referee reads it)")  # fmt: skip
    print(f"full referee:        {ref:9.0f} decisions/s    ({1e6 / ref:6.1f} us each, {cpu_ref:5.1f} us CPU here; "
          f"{decisions} decisions, replays {'.jsonl.gz' if args.gz else '.jsonl'})")  # fmt: skip
    print(f"referee cost ratio:  {statistics.median(ratios):9.2f}x  wall time against the two-bot echo: the median of "
          f"the {args.rounds} rounds, each echo and referee run back to back (goal <= 1.5x)")  # fmt: skip
    print(f"  per round:         {' '.join(f'{r:.2f}' for r in ratios)}  (best against best {raw / ref:.2f}x)")
    print(f"  against the echo that reads directly: median {statistics.median(direct_ratios):.2f}x, "
          f"best against best {raw_d / ref:.2f}x")  # fmt: skip
    ref_p, cpu_p = best["ponder"]
    print(f"  bots not frozen:   median {statistics.median(ponder_ratios):.2f}x (--ponder: the bots run between "
          f"their turns; {1e6 / ref_p:.1f} us a decision at best, {cpu_p:.1f} us CPU here); freezing costs "
          f"{1e6 / ref - 1e6 / ref_p:+.1f} us a decision, best against best")  # fmt: skip
    print(
        f"referee CPU:         {cpu_ref:9.1f} us per decision in the referee process "
        f"({cpu_ref / cpu2:.2f}x the echo's {cpu2:.1f} us)"
    )


if __name__ == "__main__":
    main()
