"""Write ``koikoi-replay/1`` files for tests, by playing a match with the engine and a seeded random policy;
and re-simulate a replay's decisions with the engine, to know what a viewer of it must show.

The lines follow docs/design.md ("Replay format koikoi-replay/1") exactly, so tests can later switch to
replays written by the real match runner without changing what they check.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from referee.engine import (
    CARD_IDS,
    PRESETS,
    Deal,
    Phase,
    State,
    apply,
    ids_of,
    legal_actions,
    new_match,
    rules_from_dict,
    score,
)
from referee.engine.views import DECISIONS
from referee.protocol import action_from_json, action_json, full_event_json


def replay_lines(
    *,
    rules: str = "koikoi-japan",
    seed: int = 7,
    names: tuple[str, str] = ("alpha", "beta"),
    match_id: str = "m-0001",
    policy_seed: int = 1,
    max_decisions: int | None = None,
) -> list[dict[str, Any]]:
    """The lines of one replay: header, hellos, events and decisions, and the result (unless cut short)."""
    r = PRESETS[rules]
    lines: list[dict[str, Any]] = [
        {
            "type": "header", "format": "koikoi-replay/1", "program": "koikoi-referee 0.1.0",
            "protocol": "koikoi/1", "match_id": match_id, "created": "2024-01-01T00:00:00+00:00",
            "rules": r.to_dict(), "seed": seed, "deals": [], "first_dealer": None,
            "bots": [{"seat": s + 1, "command": f"bots/{names[s]}.py"} for s in (0, 1)],
            "time": {"startup_ms": 10000, "move_ms": 1000, "bank_ms": 30000},
        },
        {"type": "hello", "seat": 1, "name": names[0], "version": "1.0"},
        {"type": "hello", "seat": 2, "name": names[1], "version": "1.0"},
    ]  # fmt: skip
    rng = random.Random(policy_seed)
    state: State = new_match(r, seed)
    lines.extend({"type": "event", **full_event_json(e)} for e in state.events)
    n = 0
    while not state.is_over:
        if max_decisions is not None and n >= max_decisions:
            return lines
        legal = legal_actions(state)
        action = rng.choice(legal)
        n += 1
        lines.append({
            "type": "decision", "seat": state.to_move + 1, "id": n, "decision": DECISIONS[state.phase],
            "legal": [action_json(a) for a in legal], "action": action_json(action), "ms": 1.5,
        })  # fmt: skip
        state = apply(state, action)
        lines.extend({"type": "event", **full_event_json(e)} for e in state.events)
    a, b = state.scores
    lines.append({
        "type": "result", "winner": None if state.winner is None else state.winner + 1, "scores": [a, b],
        "rounds": state.round, "reason": "broke" if r.end_when_broke and min(a, b) <= 0 else "rounds",
        "forfeit": None, "bots": [{"seat": 1, "name": names[0]}, {"seat": 2, "name": names[1]}],
    })  # fmt: skip
    return lines


def write_replay(path: Path, **kwargs: Any) -> list[dict[str, Any]]:
    """Write a replay (see :func:`replay_lines` for the options) to ``path``; returns its lines."""
    lines = replay_lines(**kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return lines


def engine_states(lines: list[dict[str, Any]]) -> list[State]:
    """The engine state of each viewer step: the deal, then the position after each decision, computed here
    independently of the viewer."""
    header = lines[0]
    rules = rules_from_dict(header["rules"])
    fd = header["first_dealer"]
    deals = [Deal.from_json(d) for d in header["deals"]]
    state = new_match(rules, int(header["seed"]), deals, None if fd is None else fd - 1)
    out = [state]
    for line in lines[1:]:
        if line["type"] == "decision":
            state = apply(state, action_from_json(line["action"], state))
            out.append(state)
    return out


def expected_view(state: State, seat: int | None = None) -> dict[str, Any]:
    """The parts of a viewer step that the engine state fixes, for the full view or as ``seat`` (0/1) sees it."""
    hands: list[list[str] | None] = [ids_of(state.hands[0]), ids_of(state.hands[1])]
    if seat is not None:
        hands[1 - seat] = None
    return {
        "hands": hands,
        "sizes": [state.hands[0].bit_count(), state.hands[1].bit_count()],
        "field": ids_of(state.field),
        "captured": [ids_of(state.captured[0]), ids_of(state.captured[1])],
        "scores": list(state.scores),
        "calls": list(state.koikoi),
        "stock": state.stock_left,
        "drawn": CARD_IDS[state.pending] if state.phase is Phase.DRAW_CHOICE else None,
        "totals": [score(state.captured[s], state.rules, state.koikoi[s]).total for s in (0, 1)],
    }


KEYS = ("hands", "sizes", "field", "captured", "scores", "calls", "stock", "drawn", "totals")


def shown(step: dict[str, Any]) -> dict[str, Any]:
    """The same parts of a viewer step."""
    return {k: step[k] for k in KEYS}
