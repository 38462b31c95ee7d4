"""Search speed: CPU time of the search bot per sample, at a fixed number of samples a decision.

The search bot (``bots/search_bot.py``, its default model) advises one seat of matches that greedy plays on both
sides, at each of that seat's card plays with a choice; each decision takes ``--samples`` samples with successive
elimination off (every action sampled every time), so the work per decision does not depend on when the search
would have stopped. Prints the decisions, the CPU milliseconds a decision and the samples per CPU second, with
the rollouts (one per action per sample) per CPU second. A search at ``--ms N`` takes about N/1000 times the
samples per second in a decision (fewer when it stops early). CPU time of this process, so a busy machine changes
the figure less than wall time would (the caches are shared all the same: compare two builds side by side)::

    .venv/bin/python benchmarks/search.py --matches 4
    .venv/bin/python benchmarks/search.py --rules nintendo --samples 100
    .venv/bin/python benchmarks/search.py --rules nintendo --loop     # rollouts by the engine's own loop
    .venv/bin/python benchmarks/search.py --rules nintendo --continuations learned
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path
from typing import Any

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS, Phase, apply, legal_actions, new_match, visible_event  # noqa: E402
from referee.engine.policies import rollout_in_c, use_c_round_loop  # noqa: E402
from referee.protocol.messages import event_json  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
search_bot: Any = importlib.import_module("search_bot")  # the bot file of this checkout, not a package module


def main() -> int:
    parser = argparse.ArgumentParser(description="CPU time of the search bot per sample (successive elimination off).")
    parser.add_argument("--rules", default="koikoi-japan", choices=sorted(PRESETS),
                        help="preset (default koikoi-japan)")
    parser.add_argument("--matches", type=int, default=4, help="greedy-vs-greedy matches, seeds 0.. (default 4)")
    parser.add_argument("--samples", type=int, default=200, help="samples a decision (default 200)")
    parser.add_argument("--continuations", default="greedy", choices=search_bot.CONTINUATIONS,
                        help="the search's own play after the first action in its rollouts (default greedy)")
    parser.add_argument("--loop", action="store_true",
                        help="roll out with the engine's own loop (policies.play_round_loop), not the C round loop")
    args = parser.parse_args()
    search_bot.PRUNE_AT = frozenset()
    if args.loop:
        use_c_round_loop(False)
    rules = PRESETS[args.rules]
    cpu = 0.0
    decisions = rollouts = 0
    for seed in range(args.matches):
        state = new_match(rules, seed, first_dealer=0)
        searcher = search_bot.Searcher(None, args.samples, 0, continuations=args.continuations)
        searcher.observe({"type": "hello", "seat": 1, "rules": rules.to_dict()})
        while not state.is_over:
            for event in state.events:
                searcher.observe({"type": "event", **event_json(visible_event(event, 0))})
            legal = legal_actions(state)
            if state.to_move == 0 and len(legal) > 1 and state.phase is Phase.PLAY:
                decisions += 1
                started = time.process_time()
                request = {"id": decisions, "legal": [search_bot.wire(a) for a in legal], "time": {"move_ms": 1e9}}
                searcher.search(request)
                cpu += time.process_time() - started
                rollouts += len(legal) * args.samples
            state = apply(state, search_bot.greedy_action(state, legal))
    if not decisions:
        print("no decision was searched", file=sys.stderr)
        return 1
    c_loop = "C round loop" if rollout_in_c(search_bot.GREEDY_POLICY) else "Python round loop"
    print(f"{args.rules} ({c_loop}, {args.continuations} continuation): {decisions} decisions of {args.samples} "
          f"samples, {1000 * cpu / decisions:.1f} ms cpu a decision, {decisions * args.samples / cpu:,.0f} samples/s, "
          f"{rollouts / cpu:,.0f} rollouts/s (cpu)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
