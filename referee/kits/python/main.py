"""{{NAME}}: a koikoi/1 bot. It reads one JSON message per line on stdin and answers requests on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any, Literal, TypedDict

Action = dict[str, Any]  # one element of a request's "legal" list, sent back as it is


class View(TypedDict):
    """What the seat may know when it must decide (a few of its fields)."""

    seat: int
    hand: list[str]
    field: list[str]
    drawn: str | None


class Request(TypedDict):
    """A decision to make: answer with one of ``legal``, echoing ``id``."""

    type: Literal["request"]
    id: int
    decision: Literal["play", "capture", "koikoi"]
    view: View
    legal: list[Action]


def log(*parts: object) -> None:
    """Debug output goes to stderr: the referee keeps it in a log file (stdout is for protocol lines only)."""
    print("[{{NAME}}]", *parts, file=sys.stderr, flush=True)


def month(card_id: str) -> str:
    """The month of a card id: ``pine`` for ``pine-crane``."""
    return card_id.split("-", 1)[0]


def choose(request: Request) -> Action:
    """The strategy: stop at the first yaku, else play a card that takes something from the field."""
    legal = request["legal"]
    if request["decision"] == "koikoi":
        return next(a for a in legal if a.get("koikoi") is False)
    on_field = {month(c) for c in request["view"]["field"]}
    for action in legal:
        if "capture" in action or month(str(action.get("play", ""))) in on_field:
            return action
    return legal[0]


def send(message: dict[str, Any]) -> None:
    """Write one line and flush it: an answer left in a buffer never reaches the referee."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    """The request loop."""
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            log("seat", message["seat"], "rules", message["rules"]["name"])
            send({"type": "hello", "name": "{{NAME}}", "version": "0.1", "protocol": "koikoi/1"})
        elif kind == "new_match":
            log("new match", message["match"]["id"])
        elif kind == "request":
            send({"type": "action", "id": message["id"], "action": choose(message)})
        elif kind == "error":
            log("referee:", message["message"])
        elif kind == "bye":
            break


if __name__ == "__main__":
    main()
