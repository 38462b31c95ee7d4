"""The helper that turns a Python function into a koikoi/1 bot: ``from referee.bot import run; run(choose)``.

``choose(request) -> action`` gets each ``request`` message as a dict (see PROTOCOL.md) and returns one element of
``request["legal"]``. :func:`run` does the rest of the protocol: it answers ``hello`` with the bot's name and
version, passes ``hello``/``new_match`` and every ``event`` to an optional observer, echoes each request's ``id``,
flushes every line, logs ``error`` messages and anything unexpected to stderr, and returns on ``bye`` or the end of
its input. It never raises on a bad line: a line that is not JSON, or a message of an unknown type, is logged and
skipped; when ``choose`` raises or returns something that is not legal, the first legal action is sent instead (and
the problem logged), so the bot keeps its seat.

Standard library only, like the example bots; this module imports nothing else from the package than its root
(:data:`referee.PROTOCOL`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any

from referee import PROTOCOL

Message = dict[str, Any]
"""One decoded protocol line."""

Chooser = Callable[[Message], Message]
"""``choose(request) -> action``: an element of ``request["legal"]``."""

Observer = Callable[[Message], None]
"""Called with every ``hello``, ``new_match`` and ``event`` message, before the next request is read."""


def _log(text: str, err: IO[str]) -> None:
    err.write(text + "\n")
    err.flush()


def _send(msg: Message, out: IO[str]) -> None:
    out.write(json.dumps(msg, separators=(",", ":")) + "\n")
    out.flush()


def answer(request: Message, choose: Chooser, err: IO[str] | None = None) -> Message:
    """The ``action`` line for ``request``: ``choose``'s answer when it is legal, else the first legal action."""
    err = sys.stderr if err is None else err
    legal = request.get("legal")
    rid = request.get("id")
    if not isinstance(legal, list) or not legal:
        _log(f"bot: request without legal actions: {request!r}", err)
        return {"type": "action", "id": rid, "action": {}}
    try:
        action = choose(request)
    except Exception as exc:  # a bug in the bot's policy must not forfeit the match
        _log(f"bot: choose raised {type(exc).__name__}: {exc}; playing the first legal action", err)
        action = legal[0]
    if action not in legal:
        _log(f"bot: choose returned {action!r}, not a legal action; playing the first legal action", err)
        action = legal[0]
    return {"type": "action", "id": rid, "action": action}


def run(
    choose: Chooser,
    *,
    name: str = "python-bot",
    version: str | None = None,
    observe: Observer | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """Play the protocol on stdin/stdout until ``bye`` or end of file; returns 0 (the exit status to use).

    ``name``/``version`` go into the ``hello`` answer; ``observe`` sees ``hello``, ``new_match`` and ``event``
    messages (an exception it raises is logged, not fatal). The streams default to the process's own.
    """
    inp = sys.stdin.buffer if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr

    def notify(msg: Message) -> None:
        if observe is None:
            return
        try:
            observe(msg)
        except Exception as exc:
            _log(f"bot: observer raised {type(exc).__name__}: {exc}", err)

    for raw in inp:
        try:
            msg = json.loads(raw)
        except ValueError as exc:
            _log(f"bot: ignoring a line that is not JSON ({exc}): {raw[:200]!r}", err)
            continue
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "hello":
            hello: Message = {"type": "hello", "name": name, "protocol": PROTOCOL}
            if version is not None:
                hello["version"] = version
            _send(hello, out)
            notify(msg)
        elif kind == "request":
            _send(answer(msg, choose, err), out)
        elif kind in ("event", "new_match"):
            notify(msg)
        elif kind == "error":
            _log(f"bot: referee error: {msg.get('message')}", err)
        elif kind == "bye":
            return 0
        else:
            _log(f"bot: ignoring an unexpected message: {str(msg)[:200]}", err)
    return 0
