"""Golden playthroughs (OpenSpiel's ``playthroughs`` pattern): whole matches recorded byte for byte.

For each preset a few seeded matches are played between two in-process seats that answer every request with a
seeded choice among the legal actions. What is pinned: every line the referee writes to each seat (``hello``,
events, requests, ``bye``), and every line of the replay apart from the ones that vary from run to run (the
header's creation time and program version, decision times, signatures). Every line is stored as a JSON object,
one to a line of the file; a seat line's bytes are its object written compactly in key order (:func:`wire`),
which :func:`dump` checks. A change of the shuffle, of a rule or of the wire format changes these files:
``tests/match/test_golden.py`` diffs them and ``scripts/regen_golden.py`` writes them again after a deliberate
change.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from referee.engine import PRESETS
from referee.match import MatchConfig, TimeControl, play_match
from referee.protocol import hello_answer
from referee.seats.scripted import Answer, Policy, ScriptedSeat
from tests.helpers import TESTS

GOLDEN_DIR = TESTS / "golden"
MATCHES = [(preset, seed) for preset in ("guide", "cardavia", "koikoi-japan", "nintendo") for seed in (1, 2, 3)]
"""(preset, seed) of every golden match; the seats' choices are seeded from the match seed."""

TIME = TimeControl(startup_ms=10_000, move_ms=600_000, bank_ms=600_000)  # no clock ever runs out here
VARYING_HEADER = ("created", "program", "sandbox")
VARYING = ("ms", "mac")


def _seeded_policy(seed: int) -> Policy:
    rng = random.Random(seed)

    def choose(request: dict[str, Any]) -> Answer:
        action: dict[str, Any] = rng.choice(request["legal"])
        return action

    return choose


def _replay_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        drop = VARYING_HEADER if obj.get("type") == "header" else VARYING
        out.append({k: v for k, v in obj.items() if k not in drop})
    return out


def play_golden(preset: str, seed: int) -> dict[str, Any]:
    """Play one golden match and return what is pinned of it."""
    seats = tuple(
        ScriptedSeat(
            name, policy=_seeded_policy(seed * 2 + i), hello=hello_answer(name, "golden"), ms=0.0, command=name
        )
        for i, name in ((1, "golden-a"), (2, "golden-b"))
    )
    with tempfile.TemporaryDirectory(prefix="koikoi-golden-") as tmp:
        replay = Path(tmp) / "golden.replay.jsonl"
        config = MatchConfig(rules=PRESETS[preset], seed=seed, match_id=f"golden-{preset}-{seed}", time=TIME,
                             replay_path=replay)  # fmt: skip

        async def main() -> None:
            await play_match((seats[0], seats[1]), config)
            for s in seats:
                await s.close()

        asyncio.run(main())
        lines = _replay_lines(replay)
    seat_lines = [[line.decode("utf-8").rstrip("\n") for line in s.lines] for s in seats]
    return {"preset": preset, "seed": seed, "seat1": seat_lines[0], "seat2": seat_lines[1], "replay": lines}


def golden_path(preset: str, seed: int) -> Path:
    """The file of one golden match."""
    return GOLDEN_DIR / f"{preset}-{seed}.json"


def wire(message: Any) -> str:
    """A message as the referee writes it on a pipe: compact JSON, keys in their order, UTF-8 as is."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def dump(record: dict[str, Any]) -> str:
    """The file text of a golden record: one JSON object per line of each list, so a diff names the line. A seat
    line is stored as the object it spells (its keys in wire order), which :func:`load` turns back into the very
    same bytes; a line that cannot make that round trip is refused."""
    parts = [f'{{"preset": {json.dumps(record["preset"])}, "seed": {record["seed"]},']
    for key in ("seat1", "seat2", "replay"):
        if key == "replay":
            items = [json.dumps(x, ensure_ascii=False, sort_keys=True) for x in record[key]]
        else:
            messages = [json.loads(line) for line in record[key]]
            for line, message in zip(record[key], messages, strict=True):
                if wire(message) != line:
                    raise ValueError(f"{key}: a line that is not compact JSON in key order: {line[:80]}")
            items = [json.dumps(m, ensure_ascii=False) for m in messages]
        parts.append(f' "{key}": [\n  ' + ",\n  ".join(items) + "\n ]" + ("," if key != "replay" else ""))
    return "\n".join(parts) + "}\n"


def load(path: Path) -> dict[str, Any]:
    """A golden record as :func:`play_golden` returns it: each seat line the exact text the referee wrote."""
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for key in ("seat1", "seat2"):
        record[key] = [wire(message) for message in record[key]]
    return record
