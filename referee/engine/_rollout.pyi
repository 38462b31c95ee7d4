"""The C round loop of :func:`referee.engine.policies.play_round` (``_rollout.c``), built with the compiled engine."""

from typing import Any

def setup(constants: dict[str, Any], kinds: tuple[int, ...], month_masks: tuple[int, ...],
          card_groups: tuple[tuple[tuple[int, float], ...], ...]) -> None: ...
def play(rules: tuple[int, ...], policies: tuple[Any, Any], me: int, position: tuple[int, ...],
         stock: tuple[int, ...]) -> tuple[int, ...] | None: ...
