"""A trained policy as a contest bot: ``python -m referee.rl.serve my_policy:act`` is a ``koikoi/1`` bot command.

``my_policy:act`` names a callable ``act(observation, action_mask) -> action index`` with the numbers of the
environments (:mod:`referee.rl.observation`, :mod:`referee.rl.actions`): a module importable from the working
directory (``package.module:act``) or a file (``path/to/policy.py:act``). Each request's ``view`` becomes the
very observation the environment gives in that position, and the chosen index becomes the action the bot sends;
:func:`referee.bot.run` does the protocol (an exception or an illegal index plays the first legal action and is
logged on stderr, so the bot keeps its seat)::

    koikoi-referee play "python -m referee.rl.serve my_policy:act" bots/greedy_bot.py --sandbox none

Under the sandbox the policy's file must be readable by the bot (see PROTOCOL.md).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.bot import Message, run
from referee.rl.actions import INDEX
from referee.rl.observation import action_mask, encode_wire, wire_action
from referee.rl.policies import Policy


class PolicyLoadError(Exception):
    """The policy named on the command line cannot be loaded."""


def load_policy(spec: str) -> Policy:
    """The callable named by ``module:attribute`` or ``file.py:attribute``; :class:`PolicyLoadError` if not."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise PolicyLoadError(f"{spec!r}: expected MODULE:NAME or FILE.py:NAME")
    try:
        if where.endswith(".py") or "/" in where:
            path = Path(where)
            loader = importlib.util.spec_from_file_location(path.stem, path)
            if loader is None or loader.loader is None or not path.is_file():
                raise PolicyLoadError(f"{where}: no such file")
            module = importlib.util.module_from_spec(loader)
            sys.modules[loader.name] = module  # as an import would (dataclasses and pickling look it up)
            loader.loader.exec_module(module)
        else:
            if "" not in sys.path:
                sys.path.insert(0, "")
            module = importlib.import_module(where)
    except PolicyLoadError:
        raise
    except Exception as exc:
        raise PolicyLoadError(f"{where}: cannot import: {type(exc).__name__}: {exc}") from None
    policy = getattr(module, attr, None)
    if not callable(policy):
        raise PolicyLoadError(f"{where} has no callable {attr!r}")
    return policy  # type: ignore[no-any-return]


def chooser(policy: Policy) -> Callable[[Message], Message]:
    """``choose(request) -> action`` for :func:`referee.bot.run`: the policy on the request's observation."""

    def choose(request: Message) -> Message:
        view: dict[str, Any] = request["view"]
        legal: list[Message] = request["legal"]
        drawn = view.get("drawn")
        by_index = {INDEX[wire_action(a, drawn)]: a for a in legal}
        mask = action_mask(wire_action(a, drawn) for a in legal)
        index = int(policy(encode_wire(view), mask))
        if index not in by_index:
            raise ValueError(f"the policy chose action {index}, which is not legal here")
        return by_index[index]

    return choose


def main(argv: list[str] | None = None) -> int:
    """Load the policy and play until ``bye``."""
    parser = argparse.ArgumentParser(
        prog="python -m referee.rl.serve",
        description="Play koikoi/1 on stdin/stdout with a policy(observation, action_mask) -> index.",
    )
    parser.add_argument("policy", help="the policy: MODULE:NAME or FILE.py:NAME")
    parser.add_argument("--name", default=None, help="the bot's name in hello (default: the policy's)")
    args = parser.parse_args(argv)
    try:
        policy = load_policy(args.policy)
    except PolicyLoadError as exc:
        print(f"referee.rl.serve: error: {exc}", file=sys.stderr)
        return 2
    return run(chooser(policy), name=args.name or args.policy.rpartition(":")[2][:64])


if __name__ == "__main__":
    sys.exit(main())
