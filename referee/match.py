"""One match between two seats: the referee's loop over the engine, with time control, forfeits and a replay.

:func:`play_match` plays on seats that already exist (a tournament reuses bot processes); :func:`run_matches`
(and :func:`run_match` for one) is the synchronous helper that makes the seats from seat factories (a bot
command, a person at the terminal, a scripted seat), plays, and always closes them, killing the bots' process
groups (also on Ctrl-C and SIGTERM). A bot's fault never raises: it becomes a :class:`Forfeit` in the result.

What a seat receives is built only from ``observe(state, seat)`` and ``visible_event(event, seat)``, and
:mod:`referee.protocol` builds every message sent and checks every answer read (a seat hands back the bot's raw
line; the match turns it into an engine action or a forfeit).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.engine import (
    Deal,
    Event,
    MatchEnd,
    Rules,
    State,
    apply,
    new_match,
    observe,
)
from referee.errors import Interrupted
from referee.protocol import (
    IllegalAction,
    ProtocolError,
    check_answer,
    encode_events,
    error_message,
)
from referee.protocol.text import action_text, request_legal_text
from referee.records import Failure, Forfeit, MatchResult, SeatStats, Termination, TimeControl

__all__ = [
    "Failure", "Forfeit", "MatchConfig", "MatchResult", "SeatFactory", "Termination",
    "TimeControl", "bot_factory", "play_match", "run_match", "run_matches", "run_sync",
]  # fmt: skip

from referee.replay import ReplayWriter
from referee.replay.lines import Header, HeaderBot, Hello
from referee.replay.lines import Result as ReplayResult
from referee.seats import BotSeat, Seat, SeatFailure
from referee.seats.exchange import open_seat
from referee.seats.files import fingerprint, own_paths
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
    seat_times: tuple[TimeControl, TimeControl] | None = None  # per engine seat (a handicap); None: ``time``
    replay_path: Path | None = None
    replay_key: bytes | None = field(default=None, repr=False)  # signs the replay (referee.signing); None: unsigned
    names: tuple[str, str] | None = None  # the seats' names in the event (a tournament's), in the replay header

    @property
    def clocks(self) -> tuple[TimeControl, TimeControl]:
        """Each engine seat's time control: :attr:`seat_times`, else :attr:`time` for both."""
        return self.seat_times or (self.time, self.time)


class _Forfeited(Exception):
    def __init__(self, seat: int, failure: SeatFailure, *, both: bool = False, own: str | None = None) -> None:
        super().__init__(seat, failure)
        self.seat = seat
        self.failure = failure
        self.both = both  # both seats failed (the handshake): nobody wins
        self.own = failure.detail if own is None else own  # what the seat is told: its own failure, nothing else


def _header(seats: tuple[Seat, Seat], config: MatchConfig) -> Header:
    """The replay header of ``config`` played by ``seats`` (each seat's own time control in a handicap)."""
    clocks = config.clocks
    bots = tuple(HeaderBot(s.command, clocks[i] if config.seat_times else None, _seat_sandbox(s))
                 for i, s in enumerate(seats))  # fmt: skip
    return Header.new(
        config.match_id, config.rules, config.seed, config.deals, config.first_dealer, (bots[0], bots[1]),
        config.time, {"names": list(config.names)} if config.names else None,
    )


def _seat_sandbox(seat: Seat) -> dict[str, str]:
    """For a bot process seat, ``sandbox`` (``bwrap`` or ``none``) and how it is held: ``limits``, ``freezer``,
    ``filter`` (see :attr:`~referee.seats.process.BotProcess.isolation`), and the fingerprint of its own files
    (``files``, :mod:`referee.seats.files`); nothing for another seat."""
    if not isinstance(seat, BotSeat):
        return {}
    mode = seat.process.sandbox
    if mode is None:
        return {}
    if seat.process.files is None:  # once a process: the files it started with (a reused one plays on with them)
        seat.process.files = fingerprint(own_paths(seat.process.command, seat.process.limits.python))
    return {"sandbox": mode, **seat.process.isolation, "files": seat.process.files}


async def play_match(seats: tuple[Seat, Seat], config: MatchConfig) -> MatchResult:
    """Play one match on ``seats`` (started with ``hello`` if needed, else told ``new_match``).

    Never raises for a seat's fault: a failure becomes a :class:`Forfeit`. Seats are left running (see
    :func:`run_match` for the helper that closes them).
    """
    rules = config.rules
    clocks = config.clocks
    state = new_match(rules, config.seed, config.deals, config.first_dealer)
    writer = ReplayWriter(config.replay_path, key=config.replay_key) if config.replay_path is not None else None
    round_ends: list[dict[str, Any]] = []  # the public round_end events, as the result holds them
    decisions = 0
    times: tuple[list[float], list[float]] = ([], [])  # each seat's decision times (ms)
    bank = [float(clocks[0].bank_ms), float(clocks[1].bank_ms)]
    try:
        if writer is not None:
            writer.record(_header(seats, config))
        try:
            await _handshake(seats, config, writer)
            await _send_events(seats, state.events, writer, round_ends, flush=state.is_over)
            flush = None if writer is None else writer.flush
            while not state.is_over:
                p = state.to_move
                seat = seats[p]
                seats[1 - p].pause()  # the other seat does not run on this seat's time
                move_ms = clocks[p].move_ms
                view = observe(state, p)
                request = seat.request(view, move_ms, int(bank[p]))  # numbered by the seat's process
                try:
                    # The replay's lines of the last decision reach the file while the seat thinks.
                    line, ms = await seat.ask(request, (move_ms + bank[p]) / 1000.0, flush)
                except SeatFailure as failure:
                    if failure.reason is Failure.TIMEOUT and seat.timed:  # it thought for all it had: its stats say so
                        times[p].append(move_ms + bank[p])
                        bank[p] = 0.0
                    raise _Forfeited(p, failure) from None
                times[p].append(ms)
                illegal = None  # a well-formed answer too late is a timeout, even if it is not legal
                try:
                    index = check_answer(line, request)
                except IllegalAction as exc:
                    illegal, index = exc, -1
                except ProtocolError as exc:
                    raise _Forfeited(p, SeatFailure(exc.reason, str(exc))) from None
                if ms > move_ms and seat.timed:  # a human seat has no clock
                    bank[p] -= ms - move_ms
                    if bank[p] < 0:
                        left = ms - move_ms + bank[p]
                        detail = f"answered request {request.id} after {ms:.0f} ms ({left:.0f} ms of bank)"
                        raise _Forfeited(p, SeatFailure(Failure.TIMEOUT, detail))
                if illegal is not None:
                    raise _Forfeited(p, SeatFailure(illegal.reason, str(illegal)))
                decisions += 1
                action = view.legal[index]
                if writer is not None:
                    writer.decision(p + 1, request.id, request.decision, request_legal_text(request),
                                    action_text(action), ms)  # fmt: skip
                state = apply(state, action)
                await _send_events(seats, state.events, writer, round_ends, flush=state.is_over)
        except _Forfeited as f:
            result = await _forfeit(seats, config, state, f, writer, decisions, round_ends)
            _pause(seats)
            return dataclasses.replace(result, seat_stats=_seat_stats(seats, times, bank))
        await _flush(seats)
        _pause(seats)
        winner = state.winner
        end = state.events[-1]
        reason = Termination(end.reason) if isinstance(end, MatchEnd) else Termination.ROUNDS
        result = MatchResult(
            config.match_id, winner, state.scores, state.round, reason, None,
            (seats[0].name, seats[1].name), config.seed, decisions, tuple(round_ends),
            seat_stats=_seat_stats(seats, times, bank),
        )  # fmt: skip
        if writer is not None:
            writer.record(ReplayResult.of(result))
        return result
    finally:
        if writer is not None:
            writer.close()


def _pause(seats: tuple[Seat, Seat]) -> None:
    """Between matches nobody's turn: both seats stop (a reused bot waits frozen in a tournament's cache)."""
    for seat in seats:
        seat.pause()


def _seat_stats(
    seats: tuple[Seat, Seat], times: tuple[list[float], list[float]], bank: list[float]
) -> tuple[SeatStats, SeatStats]:
    """Each seat's decision times, bank left and peak memory (of a bot process) in this match."""

    def one(i: int) -> SeatStats:
        seat = seats[i]
        return SeatStats.of_times(times[i], max(bank[i], 0.0) if seat.timed else None, seat.peak_memory)

    return one(0), one(1)


async def _handshake(seats: tuple[Seat, Seat], config: MatchConfig, writer: ReplayWriter | None) -> None:
    def open_one(i: int) -> Coroutine[Any, Any, None]:
        return open_seat(seats[i], i, config.rules, config.match_id, config.clocks[i])

    if seats[0].started and seats[1].started:  # running seats (a series): nothing to wait for, no tasks
        outcomes: list[BaseException | None] = []
        for i in (0, 1):
            try:
                await open_one(i)
                outcomes.append(None)
            except SeatFailure as failure:
                outcomes.append(failure)
    else:
        outcomes = list(await asyncio.gather(open_one(0), open_one(1), return_exceptions=True))
    failed: list[tuple[int, SeatFailure]] = []
    for i, out in enumerate(outcomes):
        if isinstance(out, SeatFailure):
            failed.append((i, out))
        elif isinstance(out, BaseException):
            raise out
        elif writer is not None:
            writer.record(Hello(i, seats[i].name, seats[i].version))
    if len(failed) == 2:
        (_, f0), (_, f1) = failed  # each recorded by its seat
        detail = f"{f0.detail} (seat 2 failed too: {f1.reason}: {f1.detail})"  # the record's; seat 1 is told its own
        raise _Forfeited(0, SeatFailure(f0.reason, detail), both=True, own=f0.detail)
    if failed:
        raise _Forfeited(*failed[0])


async def _send_events(
    seats: tuple[Seat, Seat],
    events: Sequence[Event],
    writer: ReplayWriter | None,
    round_ends: list[dict[str, Any]],
    *,
    flush: bool,
) -> None:
    # Only a seat that is not a bot process reads the messages. ``flush``: push the replay's lines to the file
    # now (else the next request's ``meanwhile`` does).
    encoded = encode_events(events, messages=seats[0].messages or seats[1].messages)
    round_ends.extend(encoded.round_ends)
    per_seat = encoded.seats
    if writer is not None:
        writer.write_lines(encoded.replay)
    if writer is not None and flush:
        writer.flush()
    over = bool(events) and type(events[-1]) is MatchEnd
    for i in (0, 1):
        try:
            await seats[i].send_encoded(per_seat[i])
        except SeatFailure as failure:
            if over:  # the match is decided; the seat (which recorded its failure) is just not reused
                continue
            raise _Forfeited(i, failure) from None


async def _flush(seats: tuple[Seat, Seat]) -> None:
    """Deliver held-back events; a seat failing now is only marked, by itself (its match is decided)."""
    for seat in seats:
        if seat.failed is None:
            with contextlib.suppress(SeatFailure):
                await seat.flush()


async def _forfeit(
    seats: tuple[Seat, Seat], config: MatchConfig, state: State, f: _Forfeited, writer: ReplayWriter | None,
    decisions: int, round_ends: list[dict[str, Any]],
) -> MatchResult:  # fmt: skip
    seats[f.seat].fail(f.failure)  # what the match found in an answer (a seat records its own failures)
    await _flush(seats)
    with contextlib.suppress(SeatFailure):
        await seats[f.seat].send(
            error_message(f"you forfeit the match: {f.failure.reason}: {f.own}")  # never the other bot's words
        )
    forfeit = Forfeit(f.seat, f.failure.reason, f.failure.detail)
    result = MatchResult(
        config.match_id, None if f.both else 1 - f.seat, state.scores, state.round, Termination.FORFEIT, forfeit,
        (seats[0].name, seats[1].name), config.seed, decisions, tuple(round_ends),
    )  # fmt: skip
    if writer is not None:
        writer.record(ReplayResult.of(result))
    return result


SeatFactory = Callable[[MatchConfig, int], Seat]
"""Makes a fresh seat for engine seat ``i`` (0 or 1) of the match ``config`` about to be played."""


def bot_factory(command: str, *, log_dir: Path | None = None, limits: Limits | None = None) -> SeatFactory:
    """A :data:`SeatFactory` of bot processes running ``command`` (stderr kept in ``log_dir`` when given, as
    ``MATCH-seatN.log``)."""

    def make(config: MatchConfig, i: int) -> Seat:
        log = None if log_dir is None else log_dir / log_name(config.match_id, i)
        seat = BotSeat(command, label=f"seat{i + 1}", stderr_path=log, limits=limits)
        if log_dir is not None:
            seat.log_of = lambda match_id: log_dir / log_name(match_id, i)
        return seat

    return make


def log_name(match_id: str, seat: int) -> str:
    """The stderr log file name of seat ``seat`` (0 or 1) in match ``match_id``: ``MATCH-seatN.log``."""
    return f"{match_id}-seat{seat + 1}.log"


def run_match(
    commands: tuple[str | SeatFactory, str | SeatFactory],
    config: MatchConfig,
    *,
    log_dir: Path | None = None,
    limits: Limits | None = None,
) -> MatchResult:
    """Make two seats (a bot command starts a process), play one match, and close them (killing the bots'
    process groups)."""
    return run_matches(commands, [config], log_dir=log_dir, limits=limits)[0]


def run_matches(
    seats: tuple[str | SeatFactory, str | SeatFactory],
    configs: Sequence[MatchConfig],
    *,
    log_dir: Path | None = None,
    limits: Limits | None = None,
    on_result: Callable[[MatchResult], None] | None = None,
    reuse: bool = True,
) -> list[MatchResult]:
    """Play ``configs`` in order between two seats, each a :data:`SeatFactory` or a bot command (made into one
    by :func:`bot_factory` with ``log_dir`` and ``limits``).

    A seat is reused (``new_match``) until it fails; then the factory makes a fresh one for the next match.
    With ``reuse`` False every match gets fresh seats (for bots, fresh processes: needed when matches share a
    deal, since no process may see a deal twice). A seat that failed with ``quit`` (a person left the table)
    ends the series. Always closes every seat, which
    kills every bot process group, also on Ctrl-C (KeyboardInterrupt propagates) and SIGTERM
    (:class:`~referee.errors.Interrupted`, exit status 143).
    """
    factories = tuple(
        bot_factory(s, log_dir=log_dir, limits=limits) if isinstance(s, str) else s for s in seats
    )

    async def main() -> list[MatchResult]:
        current: list[Seat | None] = [None, None]
        results: list[MatchResult] = []
        try:
            for config in configs:
                if any(s is not None and s.failed is not None and s.failed.reason is Failure.QUIT for s in current):
                    break
                pair: list[Seat] = []
                for i in (0, 1):
                    old = current[i]
                    if old is None or old.failed is not None or not reuse:
                        if old is not None:
                            await old.close()
                        old = current[i] = factories[i](config, i)
                    pair.append(old)
                result = await play_match((pair[0], pair[1]), config)
                results.append(result)
                if on_result is not None:
                    on_result(result)
        finally:
            await asyncio.gather(*(s.close() for s in current if s is not None), return_exceptions=True)
        return results

    return run_sync(main)


def run_sync(main: Callable[[], Coroutine[Any, Any, list[MatchResult]]]) -> list[MatchResult]:
    """Run ``main`` in a fresh event loop; SIGTERM cancels it (:class:`~referee.errors.Interrupted`); bots die either
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
        raise Interrupted("terminated; every bot was stopped", code=143) from None
    finally:
        kill_all_now()
