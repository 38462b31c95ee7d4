"""One match between two seats: the referee's loop over the engine, with time control, forfeits and a replay.

:func:`play_match` plays on seats that already exist (a tournament reuses bot processes); :func:`run_match`
and :func:`run_matches` are the synchronous helpers that start the bots, play, and always kill their process
groups (also on Ctrl-C and SIGTERM). A bot's fault never raises: it becomes a :class:`Forfeit` in the result.

What a seat receives is built only from ``observe(state, seat)`` and ``visible_event(event, seat)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.engine import (
    Deal,
    Event,
    MatchEnd,
    Misdeal,
    RoundEnd,
    RoundStart,
    Rules,
    State,
    apply,
    full_event,
    new_match,
    observe,
    public_event,
)
from referee.errors import RefereeError
from referee.protocol import encode, error_message, event_message, hello_message, new_match_message
from referee.records import Failure, Forfeit, MatchResult, Termination, TimeControl

__all__ = [
    "Failure", "Forfeit", "MatchConfig", "MatchInterrupted", "MatchResult", "Termination", "TimeControl",
    "play_match", "run_match", "run_matches", "run_sync",
]  # fmt: skip

from referee.replay import ReplayWriter
from referee.seats import BotSeat, Seat, SeatFailure
from referee.seats.process import Limits, kill_all_now


@dataclass(frozen=True)
class MatchConfig:
    """Everything that decides a match apart from the seats."""

    rules: Rules
    seed: int
    match_id: str = "m-0001"
    deals: tuple[Deal, ...] = ()
    first_dealer: int | None = None  # engine seat 0/1, None: the rules decide
    time: TimeControl = TimeControl()  # noqa: RUF009 - frozen, so one shared default is safe
    replay_path: Path | None = None


class MatchInterrupted(RefereeError):
    """The referee was told to stop (SIGTERM) in the middle of a match; every bot was killed."""


class _Forfeited(Exception):
    def __init__(self, seat: int, failure: SeatFailure, *, both: bool = False) -> None:
        super().__init__(seat, failure)
        self.seat = seat
        self.failure = failure
        self.both = both  # both seats failed (the handshake): nobody wins


def _seat_command(seat: Seat) -> str:
    command = getattr(seat, "command", None)
    return command if isinstance(command, str) else seat.name


def _seat_sandbox(seat: Seat) -> dict[str, str]:
    """``{"sandbox": "bwrap"|"none"}`` for a bot process seat, else nothing."""
    mode = getattr(getattr(seat, "process", None), "sandbox", None)
    return {"sandbox": mode} if isinstance(mode, str) else {}


async def play_match(seats: tuple[Seat, Seat], config: MatchConfig) -> MatchResult:
    """Play one match on ``seats`` (started with ``hello`` if needed, else told ``new_match``).

    Never raises for a seat's fault: a failure becomes a :class:`Forfeit`. Seats are left running (see
    :func:`run_match` for the helper that closes them).
    """
    rules, tc = config.rules, config.time
    state = new_match(rules, config.seed, config.deals, config.first_dealer)
    writer = ReplayWriter(config.replay_path) if config.replay_path is not None else None
    round_ends: list[dict[str, Any]] = []
    decisions = 0
    try:
        if writer is not None:
            writer.header(
                match_id=config.match_id, rules=rules.to_dict(), seed=config.seed,
                deals=[d.to_json() for d in config.deals],
                first_dealer=None if config.first_dealer is None else config.first_dealer + 1,
                bots=[{"seat": i + 1, "command": _seat_command(s), **_seat_sandbox(s)} for i, s in enumerate(seats)],
                time=tc.to_json(),
            )  # fmt: skip
        try:
            await _handshake(seats, config, writer)
            await _send_events(seats, state.events, writer, round_ends)
            bank = [float(tc.bank_ms), float(tc.bank_ms)]
            move_ms = tc.move_ms
            while not state.is_over:
                p = state.to_move
                view = observe(state, p)
                legal = view.legal
                legal_wire = [a.to_json() for a in legal]
                request = {
                    "type": "request", "id": 0, "decision": view.decision, "view": view.to_json(),
                    "legal": legal_wire, "time": {"move_ms": move_ms, "bank_ms": int(bank[p])},
                }  # fmt: skip
                try:
                    answer, ms = await seats[p].decide(request, (move_ms + bank[p]) / 1000.0)
                except SeatFailure as failure:
                    raise _Forfeited(p, failure) from None
                if ms > move_ms and getattr(seats[p], "timed", True):  # a human seat has no clock
                    bank[p] -= ms - move_ms
                    if bank[p] < 0:
                        left = ms - move_ms + bank[p]
                        detail = f"answered request {answer['id']} after {ms:.0f} ms ({left:.0f} ms of bank)"
                        raise _Forfeited(p, SeatFailure("timeout", detail))
                action = answer["action"]
                try:
                    index = legal_wire.index(action)
                except ValueError:
                    shown = json.dumps(action)[:200]
                    raise _Forfeited(p, SeatFailure(
                        "illegal_action", f"request {answer['id']}: {shown} is not one of the legal actions "
                        f"{legal_wire}"[:600])) from None  # fmt: skip
                decisions += 1
                if writer is not None:
                    writer.write({"type": "decision", "seat": p + 1, "id": answer["id"],
                                  "decision": view.decision, "legal": legal_wire, "action": action,
                                  "ms": round(ms, 3)})  # fmt: skip
                state = apply(state, legal[index])
                await _send_events(seats, state.events, writer, round_ends)
        except _Forfeited as f:
            return await _forfeit(seats, config, state, f, writer, decisions, round_ends)
        await _flush(seats)
        winner = state.winner
        end = state.events[-1]
        reason = Termination(getattr(end, "reason", "rounds"))
        result = MatchResult(
            config.match_id, winner, state.scores, state.round, reason, None,
            (seats[0].name, seats[1].name), config.seed, decisions, tuple(round_ends),
        )  # fmt: skip
        if writer is not None:
            writer.write(_result_line(result))
        return result
    finally:
        if writer is not None:
            writer.close()


async def _handshake(seats: tuple[Seat, Seat], config: MatchConfig, writer: ReplayWriter | None) -> None:
    rules, tc = config.rules, config.time

    async def open_seat(i: int) -> None:
        seat = seats[i]
        if seat.started:
            await seat.new_match(new_match_message(i, rules, config.match_id, tc, index=1))
        else:
            await seat.start(hello_message(i, rules, config.match_id, tc), tc.startup_ms / 1000.0)

    outcomes = await asyncio.gather(open_seat(0), open_seat(1), return_exceptions=True)
    failed: list[tuple[int, SeatFailure]] = []
    for i, out in enumerate(outcomes):
        if isinstance(out, SeatFailure):
            failed.append((i, out))
        elif isinstance(out, BaseException):
            raise out
        elif writer is not None:
            writer.write({"type": "hello", "seat": i + 1, "name": seats[i].name,
                          "version": getattr(seats[i], "version", None)})  # fmt: skip
    if len(failed) == 2:
        (_, f0), (_, f1) = failed
        seats[1].failed = f1
        detail = f"{f0.detail} (seat 2 failed too: {f1.reason}: {f1.detail})"
        raise _Forfeited(0, SeatFailure(f0.reason, detail), both=True)
    if failed:
        raise _Forfeited(*failed[0])


async def _send_events(
    seats: tuple[Seat, Seat],
    events: Sequence[Event],
    writer: ReplayWriter | None,
    round_ends: list[dict[str, Any]],
) -> None:
    # A deal is filtered per seat; every other event is public: built and encoded once, for both seats and the
    # replay (whose full form of a public event is the same).
    per_seat: tuple[list[tuple[dict[str, Any], bytes]], list[tuple[dict[str, Any], bytes]]] = ([], [])
    for e in events:
        if isinstance(e, RoundStart | Misdeal):
            if writer is not None:
                writer.write({"type": "event", **full_event(e)})
            for i in (0, 1):
                msg = event_message(e, i)
                per_seat[i].append((msg, encode(msg)))
            continue
        msg = {"type": "event", **public_event(e)}
        line = encode(msg)
        if writer is not None:
            writer.write_line(line[:-1].decode())
        per_seat[0].append((msg, line))
        per_seat[1].append((msg, line))
        if isinstance(e, RoundEnd):
            round_ends.append(public_event(e))
    if writer is not None:
        writer.flush()
    over = bool(events) and isinstance(events[-1], MatchEnd)
    for i in (0, 1):
        try:
            await seats[i].send_encoded(per_seat[i])
        except SeatFailure as failure:
            if over:  # the match is decided; the seat is just not reused
                seats[i].failed = failure
                continue
            raise _Forfeited(i, failure) from None


async def _flush(seats: tuple[Seat, Seat]) -> None:
    """Deliver held-back events; a seat failing now is only marked (its match is decided)."""
    for seat in seats:
        if seat.failed is None:
            try:
                await seat.flush()
            except SeatFailure as failure:
                seat.failed = failure


async def _forfeit(
    seats: tuple[Seat, Seat], config: MatchConfig, state: State, f: _Forfeited, writer: ReplayWriter | None,
    decisions: int, round_ends: list[dict[str, Any]],
) -> MatchResult:  # fmt: skip
    seats[f.seat].failed = f.failure
    await _flush(seats)
    with contextlib.suppress(SeatFailure):
        await seats[f.seat].send(
            error_message(f"you forfeit the match: {f.failure.reason}: {f.failure.detail}")
        )
    forfeit = Forfeit(f.seat, Failure(f.failure.reason), f.failure.detail)
    result = MatchResult(
        config.match_id, None if f.both else 1 - f.seat, state.scores, state.round, Termination.FORFEIT, forfeit,
        (seats[0].name, seats[1].name), config.seed, decisions, tuple(round_ends),
    )  # fmt: skip
    if writer is not None:
        writer.write(_result_line(result))
    return result


def _result_line(result: MatchResult) -> dict[str, Any]:
    return {
        "type": "result", "winner": None if result.winner is None else result.winner + 1,
        "scores": list(result.scores), "rounds": result.rounds, "reason": result.reason.value,
        "forfeit": None if result.forfeit is None else result.forfeit.to_json(),
        "bots": [{"seat": i + 1, "name": n} for i, n in enumerate(result.names)],
    }  # fmt: skip


def run_match(
    commands: tuple[str, str],
    config: MatchConfig,
    *,
    log_dir: Path | None = None,
    limits: Limits | None = None,
) -> MatchResult:
    """Start two bot processes, play one match, and close them (killing their process groups)."""
    return run_matches(commands, [config], log_dir=log_dir, limits=limits)[0]


def run_matches(
    commands: tuple[str, str],
    configs: Sequence[MatchConfig],
    *,
    log_dir: Path | None = None,
    limits: Limits | None = None,
    on_result: Callable[[MatchResult], None] | None = None,
) -> list[MatchResult]:
    """Play ``configs`` in order between two bot commands, reusing each process (``new_match``) until it
    fails.

    Always kills every process group it started, also on Ctrl-C (KeyboardInterrupt propagates) and SIGTERM
    (:class:`MatchInterrupted`).
    """

    async def main() -> list[MatchResult]:
        seats: list[BotSeat | None] = [None, None]
        results: list[MatchResult] = []
        try:
            for config in configs:
                for i in (0, 1):
                    old = seats[i]
                    if old is None or old.failed is not None:
                        if old is not None:
                            await old.close()
                        log = None if log_dir is None else log_dir / f"{config.match_id}-seat{i + 1}.log"
                        seats[i] = BotSeat(commands[i], label=f"seat{i + 1}", stderr_path=log, limits=limits)
                pair = (seats[0], seats[1])
                assert pair[0] is not None and pair[1] is not None
                result = await play_match((pair[0], pair[1]), config)
                results.append(result)
                if on_result is not None:
                    on_result(result)
        finally:
            await asyncio.gather(*(s.close() for s in seats if s is not None), return_exceptions=True)
        return results

    return run_sync(main)


def run_sync(main: Callable[[], Coroutine[Any, Any, list[MatchResult]]]) -> list[MatchResult]:
    """Run ``main`` in a fresh event loop; SIGTERM cancels it (:class:`MatchInterrupted`); bots die either
    way."""

    async def guarded() -> list[MatchResult]:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        installed = False
        if task is not None:
            try:
                loop.add_signal_handler(signal.SIGTERM, task.cancel)
                installed = True
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        try:
            return await main()
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        raise MatchInterrupted("terminated; every bot was stopped") from None
    finally:
        kill_all_now()
