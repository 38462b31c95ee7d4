"""Hidden information: what is written to a bot's stdin never holds the opponent's hand, the stock order or
the seed. The bytes actually written to each pipe are recorded by a bot that copies its stdin to a file, and
checked against the replay's full deals, at every request and over every deal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from referee.engine import PRESETS, Action, apply, ids_of, new_match, rules_from_dict
from referee.match import MatchConfig, TimeControl, run_match
from referee.protocol import action_from_json
from referee.seats.process import Limits
from tests.helpers import BROKEN


def strings(value: Any) -> set[str]:
    """Every string in a JSON value (keys and values)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set(value).union(*(strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings(v) for v in value)) if value else set()
    return set()


def replay_facts(path: Path) -> tuple[dict[int, list[set[str]]], list[dict[int, set[str]]], int]:
    """From a replay: per seat, the cards hidden from it at each of its decisions; per deal, the cards
    that seat never saw in that deal; and the seed."""
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    header = lines[0]
    state = new_match(rules_from_dict(header["rules"]), header["seed"], (), header["first_dealer"] and
                      header["first_dealer"] - 1)  # fmt: skip
    hidden_at: dict[int, list[set[str]]] = {0: [], 1: []}
    deals: list[dict[int, set[str]]] = []
    current: dict[str, Any] | None = None
    for line in lines[1:]:
        if line["type"] == "decision":
            p = line["seat"] - 1
            for s in (0, 1):
                if s == p:
                    hidden_at[s].append(
                        set(ids_of(state.hands[1 - s])) | set(_ids(state.stock[state.stock_pos :]))
                    )
            action: Action = action_from_json(line["action"], state)
            state = apply(state, action)
        elif line["type"] == "event":
            if line["event"] in ("round_start", "misdeal"):
                current = line
                deals.append({s: set(line["hands"][1 - s]) | set(line["stock"]) for s in (0, 1)})
            elif line["event"] == "play" and current is not None:
                deals[-1][2 - line["seat"]].discard(line["card"])  # the seat's opponent saw it
            elif line["event"] == "draw" and current is not None:
                for s in (0, 1):
                    deals[-1][s].discard(line["card"])
    return hidden_at, deals, header["seed"]


def _ids(cards: tuple[int, ...]) -> list[str]:
    from referee.engine import CARD_IDS

    return [CARD_IDS[c] for c in cards]


@pytest.mark.slow
# Seeds of 13 digits, so that finding the seed's digits in the bytes would mean it was sent (a small seed also
# spells a count or a time). The first gives a misdeal and a drawn-card choice, the second an exhausted round,
# the third a hand yaku before any request, the fourth a plain round.
@pytest.mark.parametrize(
    ("preset", "seed"),
    [("koikoi-japan", 7316402915352), ("guide", 7316402915341), ("cardavia", 7316402915461),
     ("cardavia", 7316402915337)],
)  # fmt: skip
def test_no_byte_to_a_seat_holds_a_hidden_card(preset: str, seed: int, tmp_path: Path) -> None:
    spies = [tmp_path / "seat1.txt", tmp_path / "seat2.txt"]
    path = tmp_path / "r.jsonl"
    result = run_match(
        (f"{BROKEN} spy {spies[0]}", f"{BROKEN} spy {spies[1]}"),
        MatchConfig(PRESETS[preset], seed, time=TimeControl(move_ms=5000), replay_path=path),
        limits=Limits(sandbox="none"),  # the spies write to host files
    )
    assert result.forfeit is None
    hidden_at, deals, seed_used = replay_facts(path)
    assert deals
    for s in (0, 1):
        raw = spies[s].read_bytes()
        msgs = [json.loads(x) for x in raw.splitlines()]
        assert not {"seed", "stock", "hands"} & strings(msgs), "a hidden field name reached the bot"
        assert seed_used == seed
        assert str(seed).encode() not in raw, "the seed reached the bot"
        requests = 0
        deal = -1
        seen: set[str] = set()
        segments: list[set[str]] = []
        for m in msgs:
            if m["type"] == "event" and m["event"] in ("round_start", "misdeal"):
                if deal >= 0:
                    segments.append(seen)
                deal += 1
                seen = set()
            seen |= strings(m)
            if m["type"] == "request":
                hidden = hidden_at[s][requests]
                requests += 1
                assert not seen & hidden, (
                    f"seat {s + 1} request {m['id']}: saw hidden {sorted(seen & hidden)}"
                )
                assert set(m["view"]["hand"]) <= seen  # the check does see card ids
        segments.append(seen)
        assert requests == len(hidden_at[s])  # a seat may have none (a hand yaku ends a one-round match)
        assert len(segments) == len(deals)
        for k, (got, never) in enumerate(zip(segments, deals, strict=True)):
            assert not got & never[s], f"seat {s + 1} deal {k + 1}: saw {sorted(got & never[s])}"
