#!/usr/bin/env python3
"""A koikoi/1 bot that plays a uniformly random legal action, written with the bot helper
(:func:`referee.bot.run`; ``bots/minimal_bot.py`` is the standalone example of the protocol itself).

Run: ``python3 bots/random_bot.py [--seed N] [--name NAME]``. It reads one JSON object per line on stdin,
writes one per line on stdout (flushed), and logs to stderr.
"""

from __future__ import annotations

import argparse
import random
import sys

from referee.bot import run


def main(argv: list[str] | None = None) -> int:
    """Answer the referee until ``bye`` or the end of stdin."""
    parser = argparse.ArgumentParser(description="A koikoi/1 bot that plays uniformly random legal actions.")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random choices (default: random)")
    parser.add_argument("--name", default="random", help="the name sent in hello")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    return run(lambda request: rng.choice(request["legal"]), name=args.name, version="1.0")


if __name__ == "__main__":
    sys.exit(main())
