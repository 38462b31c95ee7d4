"""Learn a card play from the search bot's own choices: the weights of ``referee/engine/play_weights.json``.

One step of expert iteration. The search bot (``bots/search_bot.py``, its ``Searcher`` at ``--samples`` samples a
decision) plays matches in-process against greedy or a style of the opponent pool; each of its card plays and
capture choices with more than one legal action is written as a line of ``--data`` (its seat's view: hand, field,
both capture piles, the drawn card, the other player's koi-koi calls; the legal actions; the one it chose). Then a
conditional logit model (a softmax over the legal actions of the weighted sum of their
:data:`~referee.engine.policies.FEATURES`) is fitted to those choices by Newton's method, and its weights written
to ``--out``: :class:`~referee.engine.policies.Learned` plays the action of highest score. Last, ``--check`` deal
pairs of the learned play against the greedy heuristic (both with greedy's koi-koi rule, no search) measure the
policy itself::

    .venv/bin/python benchmarks/learn_play.py gather --rules nintendo --opponent greedy --deals 200 --first 9000 \\
        --data plays.jsonl                          # and --opponent reacher --first 9500, at once
    .venv/bin/python benchmarks/learn_play.py fit plays.jsonl --out referee/engine/play_weights.json --check 2000

With ``gather --continuations learned`` the search plays on with the learned play of the weights file in its
rollouts, so that a fit to its choices is a further step of expert iteration. ``gather`` appends, and skips the
deals its file already holds (a stopped run goes on where it stopped); every choice is seeded by the deal and the
seat, so a run repeats exactly. ``fit`` prints the share of the search's choices that greedy's valuation and the
learned play each make, the weights, and with ``--check`` the learned play's score rate against greedy on deal
pairs ``--check-first`` on (``duel`` of ``benchmarks/policies.py``; ``fit`` needs numpy: the ``[rl]`` extra).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# benchmarks/referee.py is named like the package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from referee.engine import PRESETS, Action, State  # noqa: E402
from referee.engine.policies import FEATURES, GREEDY_POLICY, Decision, Learned, Policy, action_features  # noqa: E402
from referee.engine.state import Phase  # noqa: E402

WEIGHTS = Path(__file__).resolve().parent.parent / "referee" / "engine" / "play_weights.json"


def view(state: State, legal: list[Action], chosen: Action, seed: int, me: int) -> dict[str, Any]:
    """One decision as a line of the data: the seat's view, the legal actions and the choice."""
    p = state.to_move
    return {
        "seed": seed, "me": me, "round": state.round, "hand": state.hands[p], "field": state.field,
        "mine": state.captured[p], "theirs": state.captured[1 - p],
        "pending": state.pending if state.phase is Phase.DRAW_CHOICE else -1, "their_calls": state.koikoi[1 - p],
        "legal": [[a.card, a.target] for a in legal], "chosen": legal.index(chosen),
    }  # fmt: skip


def recorder(lines: list[dict[str, Any]], seed: int, me: int) -> Callable[[State, list[Action], Action], None]:
    """What ``information.play`` tells of the search's choices, kept in ``lines`` (not its koi-koi calls)."""

    def keep(state: State, legal: list[Action], action: Action) -> None:
        if state.phase is not Phase.KOIKOI:
            lines.append(view(state, legal, action, seed, me))

    return keep


def rows(line: dict[str, Any]) -> list[list[float]]:
    """The features of each legal action of one decision of the data (what depends on the decision alone, once)."""
    x = Decision(line["hand"], line["field"], line["mine"], line["theirs"], line["pending"], line["their_calls"])
    return [action_features(x, c, t) for c, t in line["legal"]]


def benchmark(name: str) -> Any:
    """Another benchmark of this folder, as a module (the folder stays off the import path)."""
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", Path(__file__).resolve().parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gather(args: argparse.Namespace) -> int:
    """Play the search bot against ``--opponent`` and append its decisions to ``--data``."""
    information = benchmark("information")
    if args.opponent not in information.OPPONENTS:
        raise SystemExit(f"learn_play: unknown opponent {args.opponent!r} ({', '.join(information.OPPONENTS)})")
    choose = information.opponent(args.opponent)
    path = Path(args.data)
    done: set[int] = set()
    if path.exists():
        for text in path.read_text(encoding="utf-8").splitlines():
            try:
                done.add(int(json.loads(text)["seed"]))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a stop: its deal is played again
    started = time.perf_counter()
    decisions = 0
    with path.open("a", encoding="utf-8") as out:
        for k, seed in enumerate(range(args.first, args.first + args.deals)):
            if seed in done:
                continue
            lines: list[dict[str, Any]] = []
            for me in (0, 1):
                bot = information.Bot(args.samples, args.continuations)
                information.play(bot, choose, args.rules, seed, me, recorder(lines, seed, me))
            out.write("".join(json.dumps(line) + "\n" for line in lines))  # a deal's lines at once
            out.flush()
            decisions += len(lines)
            print(f"gather: deal {seed} ({k + 1}/{args.deals}), {decisions} decisions, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip
    return 0


def fit(args: argparse.Namespace) -> int:
    """Fit the weights to the decisions of the data files and write them."""
    import numpy as np

    started = time.perf_counter()
    feats: list[list[float]] = []
    spans: list[tuple[int, int, int]] = []  # first row, number of rows, chosen
    for name in args.files:
        for text in Path(name).read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(text)
                r = rows(line)
                chosen = int(line["chosen"])
            except (ValueError, KeyError, TypeError, IndexError):
                continue
            if len(r) > 1 and 0 <= chosen < len(r):
                spans.append((len(feats), len(r), chosen))
                feats.extend(r)
    if not spans:
        print("fit: no decision with a choice in the data", file=sys.stderr)
        return 2
    x = np.array(feats)
    group = np.repeat(np.arange(len(spans)), [n for _, n, _ in spans])
    picked = np.array([s + c for s, _, c in spans])
    weights = np.zeros(len(FEATURES))
    weights[0] = 1.0  # the greedy valuation
    for _ in range(50):  # Newton's method on the mean negative log-likelihood, with a small ridge
        score = x @ weights
        top = np.full(len(spans), -np.inf)
        np.maximum.at(top, group, score)
        e = np.exp(score - top[group])
        z = np.zeros(len(spans))
        np.add.at(z, group, e)
        p = e / z[group]
        mean = np.zeros((len(spans), len(FEATURES)))
        np.add.at(mean, group, p[:, None] * x)
        grad = (mean.sum(0) - x[picked].sum(0)) / len(spans) + 2 * args.ridge * weights
        centred = x - mean[group]
        hess = (centred * p[:, None]).T @ centred / len(spans) + 2 * args.ridge * np.eye(len(FEATURES))
        step = np.linalg.solve(hess, grad)
        weights -= step
        if float(np.abs(step).max()) < 1e-9:
            break

    def agrees(w: Any) -> float:
        score = x @ w
        hits = sum(int(np.argmax(score[s:s + n]) == c) for s, n, c in spans)
        return hits / len(spans)

    greedy = np.zeros(len(FEATURES))
    greedy[0] = 1.0
    print(f"fit: {len(spans)} decisions, the search's choice made by greedy's valuation {100 * agrees(greedy):.1f}%, "
          f"by the learned play {100 * agrees(weights):.1f}%, {time.perf_counter() - started:.1f} s")  # fmt: skip
    for name, w in zip(FEATURES, weights, strict=True):
        print(f"  {name:<16} {w:+.4f}")
    rounded = [round(float(w), 6) for w in weights]
    data = {"features": list(FEATURES), "weights": rounded,
            "decisions": len(spans), "data": [Path(f).name for f in args.files]}  # fmt: skip
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"fit: weights written to {args.out}")
    if args.check:
        learned = Policy(GREEDY_POLICY.valuation, GREEDY_POLICY.koikoi, Learned("learned", tuple(rounded)))
        rate, half = benchmark("policies").duel(PRESETS[args.rules], learned.act, args.check, args.check_first)
        print(f"check: the learned play against greedy under {args.rules}, {args.check} deal pairs: "
              f"{100 * rate:.1f}% ± {100 * half:.1f}")  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Learn a card play from the search bot's choices (expert "
                                     "iteration): gather its decisions, fit the weights.")  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gather", help="play the search bot and append its decisions to a data file")
    g.add_argument("--rules", default="nintendo", choices=sorted(PRESETS), help="preset (default nintendo)")
    g.add_argument("--opponent", default="greedy",
                   help="greedy, learned, or a style of the opponent pool (default greedy)")
    g.add_argument("--deals", type=int, default=100, help="deal pairs (default 100)")
    g.add_argument("--first", type=int, default=9000, help="the first deal's seed (default 9000)")
    g.add_argument("--samples", type=int, default=1000, help="the search's samples a decision (default 1000)")
    g.add_argument("--continuations", default="greedy", choices=("greedy", "learned"),
                   help="the search's own play after its first action in its rollouts: greedy (the default), or the "
                   "learned play of the weights file (a further step of expert iteration)")
    g.add_argument("--data", required=True, help="the data file (JSON lines), appended to")
    f = sub.add_parser("fit", help="fit the weights to data files and write them")
    f.add_argument("files", nargs="+", help="data files of gather")
    f.add_argument("--out", default=str(WEIGHTS), help=f"the weights file (default {WEIGHTS})")
    f.add_argument("--ridge", type=float, default=1e-4, help="the ridge penalty on the weights (default 1e-4)")
    f.add_argument("--check", type=int, default=0, help="deal pairs of the learned play against greedy (default 0)")
    f.add_argument("--check-first", type=int, default=21000, help="the first check deal's seed (default 21000)")
    f.add_argument("--rules", default="nintendo", choices=sorted(PRESETS), help="the check's preset (default nintendo)")
    args = parser.parse_args(argv)
    if args.command == "gather":
        if args.deals < 1 or args.samples < 1:
            parser.error("--deals and --samples must be at least 1")
        return gather(args)
    if args.check < 0:
        parser.error("--check must be 0 or more")
    return fit(args)


if __name__ == "__main__":
    sys.exit(main())
