"""How much of a preset's result hidden cards decide: players told more or less of the deal, against an opponent.

Plays ``--deals`` duplicate deal pairs (each deal twice, the player in each seat) against one style of the
opponent pool (``bots/pool_bot.py``), ``greedy`` (``bots/greedy_bot.py``) or ``learned`` (``bots/learned_bot.py``),
asked through the real request of its seat, with one of these players:

- ``uniform``: a determinized Monte Carlo search (``--samples`` samples a decision; for every legal action, the
  round played out by the search bot's rollout policies and valued by its match odds, as ``bots/search_bot.py``
  does), the hidden cards (the opponent's hand, the stock order) drawn uniformly from the cards it has not seen;
- ``known``: the same search, told the opponent's hand: only the stock order is drawn. No fair player knows more,
  so no way of inferring the opponent's hand can take this search above this figure;
- ``exact``: the same search, told the opponent's hand and its style: in its rollouts the opponent is the pool
  style itself, asked through the real request of its seat (slow: a request a move of every rollout). What the
  best model of the opponent, hand and play, could give this search;
- ``bot``: the search bot itself (``bots/search_bot.py`` with its defaults: its model of the opponent, its koi-koi
  valuation, its successive elimination), ``--samples`` samples a decision instead of a time budget, told only
  the events of its seat, as in a match. Where it scores above ``uniform``, what it infers pays;
- ``portfolio``: the search bot with ``--continuations all``: each action valued by its best continuation among
  the family's policies (``PORTFOLIO`` in ``bots/search_bot.py``), each sampled on every sample;
- ``learned``: the search bot with ``--continuations learned``: its own play after the first action in its
  rollouts is the card play learned from its own choices (``benchmarks/learn_play.py``);
- ``solver``: the ``known`` search, but once its hand holds ``--solve-at`` cards or fewer it values each action on
  each sample by the best line of the rest of the round on that sample (a depth-first search over its own choices,
  the opponent's answers those of the search's rollout policy) instead of a rollout: perfect-information Monte Carlo
  for the end of the round (for the whole round at ``--solve-at 8``, the default: cheap under ``cardavia``, where
  a won match ends the search; under the longer presets keep it to 3 to 5 cards). Its later choices are made as
  if it would know the sample's stock, so where it scores no higher than ``known``, planning its own later moves on
  each sample does not pay;
- ``omniscient``: it sees every card and knows the opponent's style, and plays each round's best line (a depth-first
  search over its own choices, the opponent's answers computed; a round's end valued by the match odds). Cheap
  when a match is one deal (``cardavia``); a round of a longer match can take seconds.

Prints a row per player: games, wins-draws-losses, the score rate with its 95% interval, and the deal pairs it won
twice, split or drawn, or lost twice (a split pair: the seat, not the player, decided it)::

    .venv/bin/python benchmarks/information.py --rules cardavia --opponent stopper --deals 200
    .venv/bin/python benchmarks/information.py --players uniform known --samples 100 --deals 50
    .venv/bin/python benchmarks/information.py --players known solver --solve-at 5 --json runs.json
    .venv/bin/python benchmarks/paired.py runs.json:solver runs.json:known     # the same deals, pair by pair

Standard output, and with ``--json FILE`` each player's results game by game (rewritten after each player): the
input of ``benchmarks/paired.py``, which compares two players, or two runs, on the same deals. Every choice is
seeded (by the deal and the seat), so a run repeats exactly. Progress goes to standard error: a line every
twentieth of the deal pairs (the player, the pairs played, its score rate so far).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS, Action, State, apply, legal_actions, new_match, observe, visible_event  # noqa: E402
from referee.protocol.messages import event_json, request_message  # noqa: E402
from referee.protocol.text import encode  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
search_bot: Any = importlib.import_module("search_bot")  # the bot files of this checkout, not package modules
pool_bot: Any = importlib.import_module("pool_bot")
greedy_bot: Any = importlib.import_module("greedy_bot")
learned_bot: Any = importlib.import_module("learned_bot")
OPPONENTS = ("greedy", "learned", *sorted(pool_bot.STYLES))
"""The opponents: the greedy bot (the search's own model of the opponent), the learned bot (a card play stronger
than greedy's that the search's model does not hold) and the styles of the pool."""

PLAYERS = ("uniform", "known", "exact", "bot", "portfolio", "learned", "solver", "omniscient")
Chooser = Callable[[dict[str, Any]], dict[str, Any]]


def opponent(name: str) -> Chooser:
    """The ``choose(request)`` of the opponent ``name`` (one of :data:`OPPONENTS`)."""
    if name == "greedy":
        return greedy_bot.choose  # type: ignore[no-any-return]
    if name == "learned":
        return learned_bot.chooser(learned_bot.load_learned(learned_bot.WEIGHTS_FILE))  # type: ignore[no-any-return]
    return pool_bot.chooser(name)  # type: ignore[no-any-return]


def pool_action(choose: Chooser, state: State) -> Action:
    """The opponent's action at ``state``: its answer (a pool style's, greedy's or the learned bot's) to the real
    request of the seat to move."""
    request = json.loads(encode(request_message(1, observe(state, state.to_move), 1000, 0)))
    want = choose(request)
    return next(a for a in legal_actions(state) if search_bot.wire(a) == want)


def redraw(state: State, me: int, rng: random.Random, known: bool) -> State:
    """``state`` with its hidden cards drawn again: the stock order, and unless ``known`` the opponent's hand."""
    opp = 1 - me
    unseen = list(state.stock[state.stock_pos:])
    hands = state.hands
    if not known:
        held = [c for c in range(48) if hands[opp] >> c & 1]
        unseen += held
        rng.shuffle(unseen)
        drawn = sum(1 << c for c in unseen[: len(held)])
        hands = (hands[0], drawn) if opp == 1 else (drawn, hands[1])
        unseen = unseen[len(held):]
    else:
        rng.shuffle(unseen)
    sample = state._copy()
    sample.hands = hands
    sample.stock = (*state.stock[: state.stock_pos], *unseen)
    return sample


Answer = Callable[[State, list[Action]], Action]
"""The opponent's action at a state, given its legal actions."""


def best_line(state: State, me: int, start: int, answer: Answer, odds: Any, deal: bool) -> tuple[float, list[Action]]:
    """The value for ``me`` of the best line of round ``start`` from ``state`` (every card seen), and its actions of
    ``me``: a depth-first search over the choices of ``me``, the opponent's answers given by ``answer``, the round's
    end valued by ``odds``; a won match ends the search. ``deal``: whether the round's last step deals the next
    round (a hand yaku of that deal then counts)."""
    while not state.is_over and state.round == start:
        legal = legal_actions(state)
        if len(legal) > 1 and state.to_move == me:
            top, line = -1.0, [legal[0]]
            for action in legal:
                value, rest = best_line(apply(state, action, record=False, deal=deal), me, start, answer, odds, deal)
                if value > top:
                    top, line = value, [action, *rest]
                if top >= 1.0:
                    break  # the match is won: nothing is better
            return top, line
        action = legal[0] if len(legal) == 1 else answer(state, legal)
        state = apply(state, action, record=False, deal=deal)
    return float(search_bot.outcome(state, me, odds)), []


class Search:
    """The determinized search of ``uniform`` and ``known``; of ``exact`` when given the opponent's style (``exact``:
    its request handler)."""

    def __init__(self, samples: int, known: bool, exact: Chooser | None = None) -> None:
        self.samples, self.known, self.exact = samples, known, exact
        self.mine = search_bot.OWN_KOIKOI["cautious"]
        self.theirs = search_bot.Policy(search_bot.GREEDY, search_bot.CASHING[search_bot.cautious])

    def rollout(self, state: State, me: int, odds: Any) -> float:
        """The round played out from ``state`` and valued for ``me``: the search bot's rollout, or with ``exact``
        the opponent's moves asked of its style (the loop of ``policies.play_round``, written out: the compiled
        ``play_round`` takes engine policies only, not a pool style's request handler)."""
        if self.exact is None:
            return float(search_bot.rollout(state, me, odds, self.theirs, self.mine))
        start = state.round
        while not state.is_over and state.round == start:
            legal = legal_actions(state)
            if len(legal) == 1:
                action = legal[0]
            elif state.to_move == me:
                action = self.mine.act(state, legal)
            else:
                action = pool_action(self.exact, state)
            state = apply(state, action, record=False)
        return float(search_bot.outcome(state, me, odds))

    def act(self, state: State, me: int, rng: random.Random) -> Action:
        legal = legal_actions(state)
        odds = search_bot.match_odds(state.rules, 0.5)
        totals = [0.0] * len(legal)
        for _ in range(self.samples):
            sample = redraw(state, me, rng, self.known)
            for i, action in enumerate(legal):
                totals[i] += self.rollout(apply(sample, action, record=False), me, odds)
        return legal[max(range(len(legal)), key=totals.__getitem__)]


class Solver(Search):
    """The ``known`` search, each action valued by the best line of the round on each sample once the hand is small."""

    def __init__(self, samples: int, solve_at: int) -> None:
        super().__init__(samples, True)
        self.solve_at = solve_at

    def act(self, state: State, me: int, rng: random.Random) -> Action:
        if state.hands[me].bit_count() > self.solve_at:
            return super().act(state, me, rng)
        legal = legal_actions(state)
        odds = search_bot.match_odds(state.rules, 0.5)
        totals = [0.0] * len(legal)
        for _ in range(self.samples):
            sample = redraw(state, me, rng, True)
            for i, action in enumerate(legal):
                after = apply(sample, action, record=False, deal=False)
                totals[i] += best_line(after, me, state.round, self.theirs.act, odds, deal=False)[0]
        return legal[max(range(len(legal)), key=totals.__getitem__)]


class Bot:
    """The search bot, as ``bots/search_bot.py`` plays (its ``Searcher``), at a fixed number of samples."""

    def __init__(self, samples: int, continuations: str = "greedy") -> None:
        self.samples = samples
        self.continuations = continuations
        self.searcher: Any = None
        self.asked = 0

    def start(self, state: State, me: int, seed: int) -> None:
        """A new match on deal ``seed``, in seat ``me``."""
        self.searcher = search_bot.Searcher(None, self.samples, seed, continuations=self.continuations)
        self.searcher.observe({"type": "hello", "seat": me + 1, "rules": state.rules.to_dict()})

    def see(self, state: State, me: int) -> None:
        """The events of the last step, as seat ``me`` is told them."""
        for event in state.events:
            self.searcher.observe({"type": "event", **event_json(visible_event(event, me))})

    def act(self, state: State, me: int, rng: random.Random) -> Action:
        legal = legal_actions(state)
        self.asked += 1
        answer = self.searcher.choose({"id": self.asked, "legal": [search_bot.wire(a) for a in legal],
                                       "time": {"move_ms": 1e9, "bank_ms": 0}})  # fmt: skip
        return next(a for a in legal if search_bot.wire(a) == answer)


class Omniscient:
    """The best line of each round, seeing every card, against the opponent's known style."""

    def __init__(self, choose: Chooser) -> None:
        self.choose = choose
        self.line: list[Action] = []

    def answer(self, state: State, legal: list[Action]) -> Action:
        """The opponent's action at ``state``: its style's answer to the real request of its seat."""
        return pool_action(self.choose, state)

    def act(self, state: State, me: int, rng: random.Random) -> Action:
        if not self.line:
            odds = search_bot.match_odds(state.rules, 0.5)
            self.line = best_line(state, me, state.round, self.answer, odds, deal=True)[1]
        return self.line.pop(0)


Seen = Callable[[State, list[Action], Action], None]
"""Told each choice of the player: the state, the legal actions and the one it chose."""


def play(player: Search | Bot | Omniscient, choose: Chooser, rules_name: str, seed: int, me: int,
         seen: Seen | None = None) -> float:  # fmt: skip
    """One match on deal ``seed``, ``player`` in seat ``me``: 1 for a win, 1/2 a draw, 0 a loss. ``seen`` is told
    each of the player's choices among two actions or more."""
    rng = random.Random(f"{seed}/{me}")
    state = new_match(PRESETS[rules_name], seed)
    bot = player if isinstance(player, Bot) else None
    if isinstance(player, Omniscient):
        player.line = []
    if bot is not None:
        bot.start(state, me, seed)
    while not state.is_over:
        if bot is not None:
            bot.see(state, me)
        legal = legal_actions(state)
        if len(legal) == 1:
            action = legal[0]
        elif state.to_move == me:
            action = player.act(state, me, rng)
            if seen is not None:
                seen(state, legal, action)
        else:
            action = pool_action(choose, state)
        state = apply(state, action, record=bot is not None)
    return 0.5 if state.winner is None else float(state.winner == me)


def main() -> int:
    parser = argparse.ArgumentParser(description="Score rates of players told more or less of the deal, against a "
                                     "style of the opponent pool.")  # fmt: skip
    parser.add_argument("--rules", default="cardavia", choices=sorted(PRESETS), help="preset (default cardavia)")
    parser.add_argument("--opponent", default="stopper", choices=OPPONENTS,
                        help="greedy_bot.py, learned_bot.py, or a style of the opponent pool (default stopper)")
    parser.add_argument("--deals", type=int, default=100, help="deal pairs (default 100)")
    parser.add_argument("--first", type=int, default=0, help="the first deal's seed (default 0): seeds FIRST..")
    parser.add_argument("--samples", type=int, default=200, help="samples a decision of the searches (default 200)")
    parser.add_argument("--players", nargs="+", choices=PLAYERS, default=list(PLAYERS),
                        help="players (default all seven)")
    parser.add_argument("--solve-at", type=int, default=8,
                        help="the solver's hand size from which it plans the rest of the round (default 8: all of it)")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write each player's results, game by game, to FILE (for benchmarks/paired.py)")
    args = parser.parse_args()
    if args.deals < 1 or args.samples < 1 or args.first < 0:
        parser.error("--deals and --samples must be 1 or more, --first 0 or more")
    record: dict[str, Any] = {"rules": args.rules, "opponent": args.opponent, "samples": args.samples,
                              "solve_at": args.solve_at, "first": args.first, "deals": args.deals, "players": {}}
    choose = opponent(args.opponent)
    print(f"rules {args.rules}, against {args.opponent}, {args.deals} deal pairs from seed {args.first}, "
          f"{args.samples} samples a decision")  # fmt: skip
    print("| player | games | W-D-L | score rate (95%) | pairs won twice / split or drawn / lost twice | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in args.players:
        started = time.perf_counter()
        if name == "omniscient":
            player: Search | Bot | Omniscient = Omniscient(choose)
        elif name in ("bot", "portfolio", "learned"):
            player = Bot(args.samples, {"bot": "greedy", "portfolio": "all", "learned": "learned"}[name])
        elif name == "solver":
            player = Solver(args.samples, args.solve_at)
        else:
            player = Search(args.samples, name != "uniform", choose if name == "exact" else None)
        results: list[list[float]] = []
        step = max(1, args.deals // 20)
        for seed in range(args.first, args.first + args.deals):
            results.append([play(player, choose, args.rules, seed, me) for me in (0, 1)])
            if len(results) % step == 0 or len(results) == args.deals:
                so_far = sum(map(sum, results)) / (2 * len(results))
                print(f"{name}: {len(results)}/{args.deals} deal pairs, {100 * so_far:.1f}% so far, "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
        flat = [r for pair in results for r in pair]
        n = len(flat)
        rate = sum(flat) / n
        half = 1.96 * math.sqrt(sum((r - rate) ** 2 for r in flat) / max(n - 1, 1) / n)
        wins, draws = flat.count(1.0), flat.count(0.5)
        twice = sum(sum(p) == 2 for p in results)
        lost = sum(sum(p) == 0 for p in results)
        low, high = max(rate - half, 0.0), min(rate + half, 1.0)
        print(f"| {name} | {n} | {wins}-{draws}-{n - wins - draws} | {100 * rate:.1f}% [{100 * low:.1f}, "
              f"{100 * high:.1f}] | {twice} / {args.deals - twice - lost} / {lost} | "
              f"{time.perf_counter() - started:.0f} |", flush=True)  # fmt: skip
        if args.json is not None:
            record["players"][name] = results
            args.json.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
