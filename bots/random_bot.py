#!/usr/bin/env python3
"""A koikoi/1 bot that plays a uniformly random legal action. Python standard library only; copy it freely.

Run: ``python3 bots/random_bot.py [--seed N] [--name NAME]``. It reads one JSON object per line on stdin,
writes one per line on stdout (flushed), and logs to stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any


def send(msg: dict[str, Any]) -> None:
    """Write one message as a JSON line and flush it."""
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """Answer the referee until ``bye`` or the end of stdin."""
    parser = argparse.ArgumentParser(description="A koikoi/1 bot that plays uniformly random legal actions.")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random choices (default: random)")
    parser.add_argument("--name", default="random", help="the name sent in hello")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    while True:
        line = sys.stdin.buffer.readline()
        if not line:  # EOF: the referee is gone
            return 0
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "name": args.name, "version": "1.0", "protocol": "koikoi/1"})
        elif kind == "request":
            send({"type": "action", "id": msg["id"], "action": rng.choice(msg["legal"])})
        elif kind == "error":
            print(f"referee error: {msg.get('message')}", file=sys.stderr)
        elif kind == "bye":
            return 0
        # new_match and event need no answer


if __name__ == "__main__":
    sys.exit(main())
