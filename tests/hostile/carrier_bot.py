"""A koikoi/1 bot that carries what it saw in one game of a duplicate deal pair into the other game.

Usage: carrier_bot.py SEARCH_BOT [--playouts N]. SEARCH_BOT is the path of ``bots/search_bot.py``, named on the
command line so that the sandbox lets this bot read it; the bot plays that search (``--playouts`` samples per
decision, 8 by default, so that it repeats exactly) and adds a channel.

The two games of a pair deal the same cards with the seats swapped, and a tournament plays them on two
processes of each bot, one after the other. Both processes see the same inode of this program file (read-only),
and open-file-description locks on it need no write access: a process that plays the first game of a pair
publishes, round by round, the field, its own opening hand and every card drawn from the stock, as read locks on
byte ranges of this file (``fcntl`` ``F_OFD_SETLK``: one value a 256-byte slot, the value in the lock's length),
and keeps them while it waits in the tournament's cache. The process that plays the other game finds them with
``F_OFD_GETLK`` (the probe reports another description's lock and its length): a record whose field is its own
field, and whose hand shares no card with its own hand, is the other game of its pair, and that hand is the
opponent's hand now, and those draws are the stock's order. In both games it plans on samples of the state (in
the second-played one, with those cards put in their true places): every pair of its own next two decisions,
the opponent played by the greedy heuristic, the round played out greedily after them, on a few samples of the
stock cards nobody drew, for the best point margin.

A record sits in one of :data:`CHANNELS` channels chosen by the field, so that the processes of several
workers (``-j 2``) rarely meet in one. Each process drops all its locks when it starts a match. Where file locks
are denied (a syscall filter), the bot says so once on stderr and plays the plain search.

On stderr: ``CARRIER published`` once a match it plays first, ``CARRIER known`` for each round it plays with the
other game's cards.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.util
import os
import random
import struct
import sys
from typing import Any

SLOT = 256  # bytes a value
MARKER = 171
SLOTS = 1 + 1 + 8 + 8 + 1 + 24  # marker, round, field, hand, number of draws, draws
CHANNELS = 61
BASE = 1 << 20  # the first locked byte (past the end of the file: locks need no data there)
F_OFD_GETLK = getattr(fcntl, "F_OFD_GETLK", 36)
F_OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", 37)
FLOCK = "hhqqi4x"  # struct flock on 64-bit Linux: type, whence, start, len, pid


class Board:
    """Values published as read locks on this program file, and read back from other processes' locks."""

    def __init__(self, path: str) -> None:
        self.fd: int | None = os.open(path, os.O_RDONLY)
        self.ok = True

    def _lock(self, cmd: int, kind: int, start: int, length: int) -> bytes:
        assert self.fd is not None
        return fcntl.fcntl(self.fd, cmd, struct.pack(FLOCK, kind, os.SEEK_SET, start, length, 0))

    def _call(self, cmd: int, kind: int, start: int, length: int) -> bytes | None:
        if not self.ok:
            return None
        try:
            return self._lock(cmd, kind, start, length)
        except OSError as exc:
            self.ok = False
            print(f"CARRIER no locks: {exc}", file=sys.stderr, flush=True)
            return None

    def clear(self) -> None:
        """Drop every lock of this process."""
        self._call(F_OFD_SETLK, fcntl.F_UNLCK, BASE, CHANNELS * SLOTS * SLOT)

    def publish(self, channel: int, values: list[int]) -> None:
        """Write ``values`` (each 0..254) into ``channel``, replacing what this process had there."""
        start = BASE + channel * SLOTS * SLOT
        self._call(F_OFD_SETLK, fcntl.F_UNLCK, start, SLOTS * SLOT)
        for i, v in enumerate(values):
            self._call(F_OFD_SETLK, fcntl.F_RDLCK, start + i * SLOT, v + 1)

    def read(self, channel: int, n: int) -> list[int | None]:
        """The first ``n`` values another process holds in ``channel`` (None: no lock there)."""
        start = BASE + channel * SLOTS * SLOT
        out: list[int | None] = []
        for i in range(n):
            got = self._call(F_OFD_GETLK, fcntl.F_WRLCK, start + i * SLOT, SLOT)
            if got is None:
                return []
            kind, _, _, length, _ = struct.unpack(FLOCK, got)
            out.append(None if kind == fcntl.F_UNLCK else length - 1)
        return out


def cards_of(mask: int) -> list[int]:
    """The cards of a mask, lowest first."""
    return [c for c in range(48) if mask >> c & 1]


def load_search(path: str) -> Any:
    """The search bot's module, from its file."""
    spec = importlib.util.spec_from_file_location("search_bot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    """Play until ``bye``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("search_bot")
    parser.add_argument("--playouts", type=int, default=8)
    args = parser.parse_args(argv)
    search = load_search(args.search_bot)
    board = Board(os.path.abspath(__file__))

    class Carrier(search.Searcher):  # type: ignore[misc, name-defined]
        """The search bot, with the other game's cards when it can read them."""

        def __init__(self) -> None:
            super().__init__(None, args.playouts, 0)
            self.known: dict[int, tuple[int, list[int]]] = {}  # round -> (opponent's opening hand, stock order)
            self.publishing: int | None = None  # the round this process publishes
            self.published = False
            self.seen = (0, 0)  # rounds and draws of the current round taken in

        def observe(self, msg: dict[str, Any]) -> None:
            super().observe(msg)
            if msg["type"] in ("hello", "new_match"):
                board.clear()
                self.known, self.publishing, self.published, self.seen = {}, None, False, (0, 0)
                return
            record = self.record
            if record is None or not record.rounds:
                return
            r = record.rounds[-1]
            now = (len(record.rounds), len(r.drawn))
            if now == self.seen:
                return
            if now[0] != self.seen[0]:
                self.round_start(now[0], r.hand, r.field)
            self.seen = now
            if self.publishing == now[0]:
                self.publish(now[0], r.hand, r.field, r.drawn)

        def round_start(self, number: int, hand: int, field: int) -> None:
            channel = field % CHANNELS
            got = board.read(channel, SLOTS)
            ok = len(got) == SLOTS and got[0] == MARKER and got[1] == number % 255
            ok = ok and got[2:10] == cards_of(field) and all(v is not None for v in got[10:19])
            if ok:
                other = sum(1 << int(c) for c in got[10:18] if c is not None)
                draws = [int(c) for c in got[19 : 19 + int(got[18] or 0)] if c is not None]
                if other.bit_count() == 8 and not other & (hand | field):
                    self.known[number] = (other, draws)
                    print(f"CARRIER known round {number}: {len(draws)} draws", file=sys.stderr, flush=True)
                    return
            self.publishing = number
            if not self.published:
                self.published = True
                print("CARRIER published", file=sys.stderr, flush=True)

        def publish(self, number: int, hand: int, field: int, drawn: list[int]) -> None:
            values = [MARKER, number % 255, *cards_of(field), *cards_of(hand), len(drawn), *drawn]
            board.publish(field % CHANNELS, values)

        def choose(self, request: dict[str, Any]) -> dict[str, Any]:
            record = self.record
            if record is None or len(request["legal"]) == 1:
                return dict(super().choose(request))
            # The same planner in both games of a pair, on samples of what it does not know: the games differ
            # only in what the channel brought (in the second-played game, the opponent's hand and the stock).
            rng = random.Random(f"carrier/{self.match}/{request['id']}")
            states = [self.sample(record, rng) for _ in range(SAMPLES)]
            actions = search.legal_actions(states[0])
            answers = [search.wire(a) for a in actions]
            if sorted(map(str, answers)) != sorted(map(str, request["legal"])):
                return dict(super().choose(request))
            me = record.seat
            values = [sum(plan(search, search.apply(s, a, record=False), me, PLAN_DEPTH) for s in states)
                      for a in actions]  # fmt: skip
            return dict(answers[max(range(len(actions)), key=values.__getitem__)])

        def sample(self, record: Any, rng: random.Random) -> Any:  # type: ignore[override]
            state = search.determinize(record, rng)  # a plain sample: what the search's model adds is not needed
            known = self.known.get(len(record.rounds))
            r = record.current
            if known is None or r is None:
                return state
            return knowing(state, 1 - record.seat, known[0] & ~r.opponent_played, known[1], rng)

    carrier = Carrier()
    return int(search.run(carrier.choose, name="carrier", version="1.0", observe=carrier.observe))


SAMPLES = 4  # samples of the unknown stock cards a decision
PLAN_DEPTH = 2  # own decisions enumerated after the one being chosen


def plan(search: Any, state: Any, me: int, depth: int) -> int:
    """The best point margin (``me`` minus the opponent, at the end of the round) from ``state``, with the
    opponent greedy and ``depth`` more of ``me``'s own decisions enumerated (greedy after them)."""
    start = state.round
    while not state.is_over and state.round == start:
        legal = search.legal_actions(state)
        if state.to_move == me and len(legal) > 1 and depth > 0:
            return max(plan(search, search.apply(state, a, record=False), me, depth - 1) for a in legal)
        action = legal[0] if len(legal) == 1 else search.greedy_action(state, legal)
        state = search.apply(state, action, record=False)
    return int(state.scores[me] - state.scores[1 - me])


def knowing(state: Any, opp: int, hand: int, stock: list[int], rng: random.Random) -> Any:
    """``state`` (a sample) with the opponent's true ``hand`` and the stock's known order; the sample itself when
    they do not fit it."""
    pos = state.stock_pos
    if list(state.stock[: min(pos, len(stock))]) != stock[:pos] or hand.bit_count() != state.hands[opp].bit_count():
        return state
    pool = state.hands[opp] | sum(1 << c for c in state.stock[pos:])
    ahead = stock[pos:]
    ahead_mask = sum(1 << c for c in ahead)
    if hand & ~pool or ahead_mask & ~pool or hand & ahead_mask:
        return state
    free = cards_of(pool & ~hand & ~ahead_mask)
    rng.shuffle(free)
    new = state._copy()
    hands = list(state.hands)
    hands[opp] = hand
    new.hands = (hands[0], hands[1])
    new.stock = (*state.stock[:pos], *ahead, *free)
    return new


if __name__ == "__main__":
    sys.exit(main())
