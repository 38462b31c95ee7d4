"""The search bot's choices at a fixed number of samples, as one hash: two builds (or the C round loop and the
engine's own, ``--loop``) that print the same hash chose the same action at every decision.

The search bot (``bots/search_bot.py``, its defaults: pruning, the hybrid model, the robust koi-koi call) plays the
second seat of matches against greedy under three presets, ``--samples`` samples a decision with its sampling seed
fixed, so that its choices depend on nothing but the code: the hash covers every answer, koi-koi calls included.
A change meant to make the search faster, not different, keeps the hash::

    .venv/bin/python benchmarks/choices.py               # prints: 424 decisions, 60 samples each: fc2008af545b9c8b
    .venv/bin/python benchmarks/choices.py --loop        # the same search with the engine's own round loop
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import sys
from pathlib import Path
from typing import Any

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
from referee.engine import PRESETS, apply, legal_actions, new_match, visible_event  # noqa: E402
from referee.engine.policies import use_c_round_loop  # noqa: E402
from referee.protocol.messages import event_json  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
search_bot: Any = importlib.import_module("search_bot")  # the bot file of this checkout, not a package module

MATCHES = (("nintendo", 3), ("koikoi-japan", 3), ("cardavia", 6))
"""The presets played and the matches of each (seeds 0..)."""


def main() -> int:
    parser = argparse.ArgumentParser(description="A hash of the search bot's choices at a fixed number of samples.")
    parser.add_argument("--samples", type=int, default=60, help="samples a decision (default 60)")
    parser.add_argument("--scale", type=int, default=1, help="times the matches of each preset (default 1)")
    parser.add_argument("--loop", action="store_true",
                        help="roll out with the engine's own loop (policies.play_round_loop), not the C round loop")
    args = parser.parse_args()
    if args.loop:
        use_c_round_loop(False)
    digest = hashlib.sha256()
    decisions = 0
    for preset, matches in MATCHES:
        rules = PRESETS[preset]
        searcher = search_bot.Searcher(None, args.samples, 0)
        for seed in range(matches * args.scale):
            state = new_match(rules, seed, first_dealer=0)
            searcher.observe({"type": "hello", "seat": 2, "rules": rules.to_dict()})
            while not state.is_over:
                for event in state.events:
                    searcher.observe({"type": "event", **event_json(visible_event(event, 1))})
                legal = legal_actions(state)
                if state.to_move == 1:
                    answers = [search_bot.wire(a) for a in legal]
                    request = {"id": decisions, "legal": answers, "time": {"move_ms": 1e9}}
                    answer = searcher.choose(request)
                    digest.update(repr(answer).encode())
                    decisions += 1
                    action = legal[answers.index(answer)]
                else:
                    action = search_bot.greedy_action(state, legal)
                state = apply(state, action)
    print(f"{decisions} decisions, {args.samples} samples each: {digest.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
