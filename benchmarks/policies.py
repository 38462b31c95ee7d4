"""Rollout policies on their own: each policy of the search's family, and variants of it, against greedy.

The search bot plays its rollouts with simple policies (``referee.engine.policies``: a valuation of cards and a
koi-koi rule). A search's choice is only as good as the continuation its rollouts assume, so a policy that beat
greedy when played alone would be a candidate for better rollouts. This plays whole matches policy against the
greedy heuristic on the engine, no bot process and no search: ``--pairs`` duplicate deal pairs (each match seed
played twice, the policies swapping seats), and prints each policy's score rate with a 95% interval over the deal
pairs (a pair counts the mean of its two games; 50% is greedy's strength)::

    .venv/bin/python benchmarks/policies.py --rules nintendo --pairs 2000
    .venv/bin/python benchmarks/policies.py --rules koikoi-japan --random 60 --pairs 400

The rows: the family's other valuations (``spiteful``, ``rare``, ``count``) with greedy's koi-koi rule; greedy's
valuation with the other koi-koi rules (``never``, ``bold``) and with the greedy rule's thresholds moved one at a
time; then ``--random N`` valuations with weights drawn at random around greedy's (seeded by ``--seed``). The best
of many random rows is biased up by chance: play it again on other deals (``--first``) before believing it.
Standard output only; every match is seeded, so a run repeats exactly.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable
from pathlib import Path

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS, Action, Rules, State, apply, legal_actions, new_match, score  # noqa: E402
from referee.engine.policies import (  # noqa: E402
    BRIGHTS,
    GREEDY,
    GREEDY_POLICY,
    VALUATIONS,
    KoikoiRule,
    Policy,
    Valuation,
    bold,
    cautious,
    never,
)

Act = Callable[[State, list[Action]], Action]
"""A player on the engine: its action at a state where it is to move, from the legal ones."""


def match(rules: Rules, seed: int, seats: tuple[Act, Act]) -> float:
    """One match on seed ``seed``: 1 when seat 0 wins, 1/2 a draw, 0 a loss."""
    state = new_match(rules, seed)
    while not state.is_over:
        legal = legal_actions(state)
        action = legal[0] if len(legal) == 1 else seats[state.to_move](state, legal)
        state = apply(state, action, record=False)
    return 0.5 if state.winner is None else float(state.winner == 0)


def duel(rules: Rules, player: Act, pairs: int, first: int, opponent: Act = GREEDY_POLICY.act) -> tuple[float, float]:
    """``player``'s score rate against ``opponent`` (greedy's policy unless given) over ``pairs`` deal pairs from
    seed ``first``, each seed played twice with the players swapping seats, and the half width of its 95% interval
    over the pairs (a pair counts the mean of its two games)."""
    means = [(match(rules, s, (player, opponent)) + 1 - match(rules, s, (opponent, player))) / 2
             for s in range(first, first + pairs)]  # fmt: skip
    rate = sum(means) / pairs
    spread = math.sqrt(sum((m - rate) ** 2 for m in means) / max(pairs - 1, 1))
    return rate, 1.96 * spread / math.sqrt(pairs)


def koikoi_rule(hand: int = 5, points: int = 7, brights: int = 2, cards: int = 10) -> KoikoiRule:
    """Greedy's koi-koi rule (:func:`~referee.engine.policies.cautious`) with its thresholds as given: play on
    with ``hand`` cards or more in hand, under ``points``, while the opponent has no yaku, fewer than ``brights``
    brights and fewer than ``cards`` cards."""

    def rule(state: State, p: int) -> bool:
        if state.round >= state.rules.rounds and state.scores[p] > state.scores[1 - p]:
            return False
        if state.hands[p].bit_count() < hand or score(state.captured[p], state.rules, state.koikoi[p]).total >= points:
            return False
        opp = state.captured[1 - p]
        if score(opp, state.rules, state.koikoi[1 - p]).total > 0:
            return False
        return (opp & BRIGHTS).bit_count() < brights and opp.bit_count() < cards

    return rule


def rows(randoms: int, rng: random.Random) -> list[tuple[str, Policy]]:
    """The policies to play, by name."""
    out: list[tuple[str, Policy]] = [(v.name, Policy(v, cautious)) for v in VALUATIONS[1:] if v is not None]
    out += [("greedy, never koi-koi", Policy(GREEDY, never)), ("greedy, bold", Policy(GREEDY, bold))]
    moved = (("hand", 4, 5), ("hand", 6, 5), ("points", 5, 7), ("points", 10, 7), ("brights", 1, 2),
             ("brights", 3, 2), ("cards", 8, 10), ("cards", 13, 10))  # fmt: skip
    for name, value, default in moved:
        out.append((f"greedy, koi-koi {name} {value} (not {default})", Policy(GREEDY, koikoi_rule(**{name: value}))))
    for k in range(randoms):
        base = (10.0 * rng.uniform(0.5, 2), 5.0 * rng.uniform(0.5, 2), 4.0 * rng.uniform(0.5, 2),
                rng.uniform(0.3, 3))  # fmt: skip
        groups, count = rng.uniform(0.3, 3), rng.uniform(0, 1.5)
        spite, sweep = rng.choice((0.0, rng.uniform(0, 1))), rng.choice((0.0, rng.uniform(0, 4)))
        v = Valuation(f"random {k + 1}", base=base, groups=groups, count=count, spite=spite, sweep=sweep)
        weights = ", ".join(f"{w:.1f}" for w in v.base)
        out.append((f"{v.name}: base ({weights}), groups {v.groups:.1f}, count {v.count:.1f}, spite {v.spite:.1f}, "
                    f"sweep {v.sweep:.1f}", Policy(v, cautious)))  # fmt: skip
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description="Rollout policies played alone against greedy (duplicate deals).")
    parser.add_argument("--rules", default="koikoi-japan", choices=sorted(PRESETS),
                        help="preset (default koikoi-japan)")
    parser.add_argument("--pairs", type=int, default=1000, help="deal pairs a policy (default 1000)")
    parser.add_argument("--first", type=int, default=0, help="seed of the first deal pair (default 0)")
    parser.add_argument("--random", type=int, default=0, metavar="N",
                        help="also N valuations with random weights (default 0)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random weights (default 1)")
    args = parser.parse_args()
    if args.pairs < 2 or args.random < 0:
        parser.error("--pairs must be 2 or more and --random 0 or more")
    rules = PRESETS[args.rules]
    print(f"rules {args.rules}, {args.pairs} deal pairs from seed {args.first}, against greedy")
    print("| policy | score rate (95%) |")
    print("| --- | --- |")
    for name, policy in rows(args.random, random.Random(args.seed)):
        rate, half = duel(rules, policy.act, args.pairs, args.first)
        print(f"| {name} | {100 * rate:.1f}% ± {100 * half:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
