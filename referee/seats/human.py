"""A person in the terminal as a seat: ``koikoi-referee play human BOT`` (or ``play BOT human``).

:class:`HumanSeat` implements the :class:`~referee.seats.Seat` interface. It shows each position and the moves
in words, built only from what the seat receives — the ``view`` and ``legal`` of a request and the ``event``
messages, the same ones a bot gets — and reads the person's choices from standard input without blocking the
match's event loop. The person has no clock (``timed`` is False: decision times are recorded, never charged).

``q``, Ctrl-C or the end of input ends the match as a forfeit of this seat with the reason ``quit``; the
match then records a result, and the bots are closed as usual; :func:`referee.match.run_matches` plays no
further match after a person quit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from referee.protocol import Request, action_answer, encode, hello_answer
from referee.records import Failure
from referee.seats.base import Seat, SeatFailure
from referee.seats.render import Renderer, card_name, flow
from referee.text import plural

HUMAN = "human"
"""The seat spec of a person in the terminal; ``human:NAME`` sets the name shown in results and replays."""

HELP = """\
Commands at any prompt:
  1..8            a card by its number in your hand (or a choice's number)
  pine-crane      a card by its id, or a unique beginning of it (pine-c)
  3 2             play card 3 and take the 2nd field card it matches
  s / k           at a koi-koi prompt: stop and score, or koi-koi to play on
  b               show the board again (when taking a field card for a card
                  you played: go back and play another)
  ? / help        this help
  q               quit: you forfeit the match (so does Ctrl-C or Ctrl-D)
Cards: ★ bright, ◆ animal, ▬ ribbon (poem, blue, red), · chaff; x: cannot be
played now (a card that matches the field must be played). No time limit."""

QUIT_WORDS = frozenset({"q", "quit", "exit"})
HELP_WORDS = frozenset({"?", "h", "help"})
BOARD_WORDS = frozenset({"b", "board"})
STOP_WORDS = frozenset({"s", "stop", "n", "no"})
KOIKOI_WORDS = frozenset({"k", "koi", "koikoi", "koi-koi", "y", "yes"})


def is_human(spec: str) -> bool:
    """Whether a seat spec of ``play`` names a person (``human`` or ``human:NAME``)."""
    return spec == HUMAN or spec.startswith(HUMAN + ":")


def human_name(spec: str) -> str:
    """The display name in a ``human[:NAME]`` spec (default ``human``), cut to 64 printable characters."""
    name = spec.partition(":")[2] if ":" in spec else HUMAN
    name = "".join(ch for ch in name if ch.isprintable())[:64].strip()
    return name or HUMAN


@dataclass(frozen=True)
class Reply:
    """What one line of input means: an ``action``, a ``card`` that still needs a capture target, a
    ``command`` (help, quit, board, back), or a ``hint`` saying why it was not understood."""

    action: dict[str, Any] | None = None
    card: str | None = None
    command: str | None = None
    hint: str | None = None


def _command(word: str) -> str | None:
    if word in QUIT_WORDS:
        return "quit"
    if word in HELP_WORDS:
        return "help"
    if word in BOARD_WORDS:
        return "board"
    return None


def resolve(token: str, numbered: Sequence[str]) -> str | Reply:
    """The card id that ``token`` names among ``numbered`` (by number from 1, id, unique id prefix or name),
    or a :class:`Reply` with a hint."""
    if token.isdigit():
        k = int(token)
        if 1 <= k <= len(numbered):
            return numbered[k - 1]
        return Reply(hint=f"there is no number {k}: choose 1 to {len(numbered)}")
    low = token.lower()
    for cid in numbered:
        if low in (cid, card_name(cid).lower(), card_name(cid, ascii_only=True).lower()):
            return cid
    found = [cid for cid in numbered if cid.startswith(low)]
    if len(found) == 1:
        return found[0]
    if found:
        return Reply(hint=f"{token!r} could be {', '.join(found)}: type more of the id, or a number")
    return Reply(hint=f"no card {token!r} here: type a number from 1 to {len(numbered)} or a card id")


def interpret_play(text: str, hand: Sequence[str], legal: Sequence[dict[str, Any]]) -> Reply:
    """A line typed at the play prompt: ``3``, ``pine-c``, ``3 2`` (card and capture target) or a command."""
    words = text.strip().split()
    if not words:
        return Reply(hint="type the number of a card in your hand (? for help)")
    command = _command(words[0].lower())
    if command is not None and len(words) == 1:
        return Reply(command=command)
    if len(words) > 2:
        return Reply(hint="one card, or a card and a capture target (e.g. 3 2)")
    got = resolve(words[0], hand)
    if isinstance(got, Reply):
        return got
    mine = [a for a in legal if a.get("play") == got]
    if not mine:
        playable = [str(k) for k, c in enumerate(hand, 1) if any(a.get("play") == c for a in legal)]
        return Reply(hint=f"{card_name(got)} matches no field card and cannot be played now; "
                          f"playable: {', '.join(playable)}")  # fmt: skip
    targets = [a["capture"] for a in mine if "capture" in a]
    if len(words) == 2:
        if not targets:
            return Reply(hint=f"{card_name(got)} has no capture to choose: type just the card")
        target = resolve(words[1], targets)
        if isinstance(target, Reply):
            return target
        return Reply(action={"play": got, "capture": target})
    if targets:
        return Reply(card=got)
    return Reply(action=mine[0])


def interpret_target(text: str, targets: Sequence[str], *, can_go_back: bool) -> Reply:
    """A line typed when choosing which of two field cards to take."""
    words = text.strip().split()
    if len(words) != 1:
        return Reply(hint=f"type 1 to {len(targets)}, or a card id" + (" (b: back)" if can_go_back else ""))
    word = words[0].lower()
    if can_go_back and word in ("b", "back"):
        return Reply(command="back")
    command = _command(word)  # "b" is the board where there is no way back
    if command is not None:
        return Reply(command=command)
    got = resolve(words[0], targets)
    if isinstance(got, Reply):
        return got
    return Reply(action={"capture": got})


def interpret_koikoi(text: str) -> Reply:
    """A line typed at the koi-koi prompt: ``s`` (stop) or ``k`` (koi-koi), or a command."""
    word = text.strip().lower()
    if word in STOP_WORDS:
        return Reply(action={"koikoi": False})
    if word in KOIKOI_WORDS:
        return Reply(action={"koikoi": True})
    command = _command(word)
    if command is not None:
        return Reply(command=command)
    return Reply(hint="type s to stop and score now, or k to call koi-koi and play on")


def make_console(file: TextIO | None = None) -> Console:
    """A console for the person: colour on a terminal, plain text when ``NO_COLOR`` is set or the output is not
    a terminal."""
    out = file if file is not None else sys.stdout
    plain = bool(os.environ.get("NO_COLOR")) or not out.isatty()
    return Console(
        file=out, color_system=None if plain else "auto", highlight=False, markup=False, emoji=False,
        soft_wrap=False,
    )  # fmt: skip


def _can_encode(text: str, encoding: str | None) -> bool:
    try:
        text.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class _Quit(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class HumanSeat(Seat):
    """A person at the terminal: reads choices from ``stdin_fd``, writes to ``console``."""

    def __init__(self, name: str = HUMAN, *, stdin_fd: int = 0, console: Console | None = None) -> None:
        super().__init__(name, command=HUMAN, timed=False)
        self.console = console if console is not None else make_console()
        ascii_only = not _can_encode("★◆▬·─", self.console.encoding)
        self.renderer = Renderer(1, width=min(self.console.width, 100), ascii_only=ascii_only)
        self._fd = stdin_fd
        self._buffer = b""
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._interrupt: str | None = None  # set by Ctrl-C
        self._loop: asyncio.AbstractEventLoop | None = None
        self._old_sigint: Any = None

    # --- output -------------------------------------------------------------------------------------------

    def _print(self, *lines: Text | str) -> None:
        for line in lines:
            self.console.print(line)

    def _fail(self, detail: str) -> SeatFailure:
        return self.fail(SeatFailure(Failure.QUIT, detail))

    # --- the Seat interface -------------------------------------------------------------------------------

    async def _start(self, hello: dict[str, Any], timeout_s: float) -> bytes:
        """Greet the person and answer with the person's name (a person has no start-up clock)."""
        self.started = True
        self._install_sigint()
        self._greet(hello)
        return encode(hello_answer(self.name))

    async def _new_match(self, msg: dict[str, Any]) -> None:
        """Announce the next match."""
        self._greet(msg)

    def _greet(self, msg: dict[str, Any]) -> None:
        seat = int(msg["seat"])
        self.renderer.seat = seat
        rules = msg["rules"]
        self._print(
            Text(f"Match {msg['match']['id']}: you are seat {seat} ({self.name}) against a bot; "
                 f"rules {rules['name']}, {plural(rules['rounds'], 'round')}.", style="bold"),
            "You have no time limit. Type ? at any prompt for help, q to quit.",
        )  # fmt: skip

    async def send(self, msg: dict[str, Any]) -> None:
        """Show an event (or the referee's error message) in words."""
        kind = msg.get("type")
        if kind == "event":
            self._print(*self.renderer.event(msg))
        elif kind == "error":
            self._print(Text(f"Referee: {msg.get('message')}", style="bold red"))

    async def send_many(self, msgs: list[dict[str, Any]]) -> None:
        """Show events as they come; a Ctrl-C pressed while the opponent was thinking ends the match here."""
        for msg in msgs:
            await self.send(msg)
        if self._interrupt is not None and not any(m.get("event") == "match_end" for m in msgs):
            raise self._fail(self._interrupt)

    async def _ask(
        self, request: Request, timeout_s: float, meanwhile: Callable[[], object] | None
    ) -> tuple[bytes, float]:
        """Show the position and ask until the person gives a legal choice (``timeout_s`` does not apply)."""
        if meanwhile is not None:
            meanwhile()
        rid = request.id
        msg = request.message()
        if self._interrupt is not None:
            raise self._fail(self._interrupt)
        t0 = time.perf_counter()
        try:
            action = await self._choose(msg["decision"], msg["view"], msg["legal"])
        except _Quit as q:
            self._print(Text(f"You quit ({q.detail.removeprefix('the player ')}): the match ends as your forfeit.",
                             style="bold"))  # fmt: skip
            raise self._fail(q.detail) from None
        ms = (time.perf_counter() - t0) * 1000.0
        return encode(action_answer(rid, action)), ms

    async def close(self) -> None:
        """Give Ctrl-C back to the program."""
        self._remove_sigint()

    # --- asking -------------------------------------------------------------------------------------------

    async def _choose(self, decision: str, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        r = self.renderer
        self._print(*r.board(view, legal))
        if decision == "capture":
            targets = [a["capture"] for a in legal]
            got = await self._ask_target(Text("You drew ").append_text(r.card(view["drawn"])), targets, view,
                                         legal, can_go_back=False)  # fmt: skip
            assert got is not None  # no way back from a drawn card
            return got
        if decision == "koikoi":
            me = self.renderer.seat - 1
            total = view["yaku"][me].get("total", 0)
            self._print(Text(f"You have yaku worth {plural(total, 'pt')}: stop now and score, or koi-koi to play on "
                             f"for more (the opponent may score instead).", style="bold"))  # fmt: skip
            while True:
                reply = interpret_koikoi(await self._input("Stop or koi-koi? [s/k] > "))
                if reply.action is not None:
                    return reply.action
                self._handle(reply, view, legal)
        while True:
            reply = interpret_play(await self._input("Your move: card number or id (? for help) > "),
                                   view["hand"], legal)  # fmt: skip
            if reply.action is not None:
                return reply.action
            if reply.card is not None:
                targets = [a["capture"] for a in legal if a.get("play") == reply.card and "capture" in a]
                chosen = await self._ask_target(Text("You play ").append_text(r.card(reply.card)), targets, view,
                                                legal, can_go_back=True)  # fmt: skip
                if chosen:
                    return {"play": reply.card, "capture": chosen["capture"]}
                continue
            self._handle(reply, view, legal)

    async def _ask_target(
        self, what: Text, targets: list[str], view: dict[str, Any], legal: list[dict[str, Any]], *,
        can_go_back: bool,
    ) -> dict[str, Any] | None:  # fmt: skip
        r = self.renderer
        cells = [Text(f"{k} ").append_text(r.card(cid)) for k, cid in enumerate(targets, 1)]
        self._print(*flow(cells, r.width, 2, what.append(": it matches two field cards. Take which?  ")))
        back = " (b: back)" if can_go_back else ""
        while True:
            reply = interpret_target(await self._input(f"Take 1 or 2{back} > "), targets, can_go_back=can_go_back)
            if reply.action is not None:
                return reply.action
            if reply.command == "back":
                return None
            self._handle(reply, view, legal)

    def _handle(self, reply: Reply, view: dict[str, Any], legal: list[dict[str, Any]]) -> None:
        if reply.command == "quit":
            raise _Quit("the player typed q")
        if reply.command == "help":
            self._print(HELP if not self.renderer.ascii_only else HELP.replace("★", "*").replace("◆", "+")
                        .replace("▬", "=").replace("·", "."))  # fmt: skip
        elif reply.command == "board":
            self._print(*self.renderer.board(view, legal))
        elif reply.hint is not None:
            self._print(Text(f"  ? {reply.hint}", style="yellow"))

    async def _input(self, prompt: str) -> str:
        self.console.print(Text(prompt, style="bold cyan"), end="")
        self.console.file.flush()
        line = await self._readline()
        if line is None:
            self.console.print()
            if self._interrupt is not None:
                raise _Quit(self._interrupt)
            raise _Quit("end of input")
        return line

    # --- reading the terminal without blocking the match --------------------------------------------------

    async def _readline(self) -> str | None:
        """The next line of input, or None at the end of input or on Ctrl-C."""
        while b"\n" not in self._buffer and not self._eof:
            if self._interrupt is not None:
                return None
            await self._wait_readable()
            if self._interrupt is not None:
                return None
            try:
                data = os.read(self._fd, 4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                self._buffer += data
            else:
                self._eof = True
        if b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
        elif self._buffer:
            line, self._buffer = self._buffer, b""
        else:
            return None
        return line.decode("utf-8", errors="replace").rstrip("\r")

    async def _wait_readable(self) -> None:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def ready() -> None:
            if not waiter.done():
                waiter.set_result(None)

        try:
            loop.add_reader(self._fd, ready)
        except (OSError, ValueError):  # a regular file cannot be polled: it is always readable
            return
        self._waiter = waiter
        try:
            await waiter
        finally:
            self._waiter = None
            loop.remove_reader(self._fd)

    def _install_sigint(self) -> None:
        try:
            loop = asyncio.get_running_loop()
            old = signal.getsignal(signal.SIGINT)
            loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        except (NotImplementedError, RuntimeError, ValueError):
            return
        self._loop, self._old_sigint = loop, old

    def _remove_sigint(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGINT)
            if self._old_sigint is not None:
                signal.signal(signal.SIGINT, self._old_sigint)

    def _on_sigint(self) -> None:
        """Ctrl-C: quit at once when asking, else when the opponent has moved; a second Ctrl-C stops the
        program as usual."""
        self._interrupt = "the player pressed Ctrl-C"
        self._remove_sigint()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        else:
            self._print(Text("\nCtrl-C: you quit once the opponent has moved (Ctrl-C again to stop at once).",
                             style="bold"))  # fmt: skip
