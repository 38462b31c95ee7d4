"""A run's work units dealt one at a time: the units of the pending matches are those of the whole pending list
(:func:`work_units`), whatever is recorded, the shard or the number of workers; a unit never holds more than
:data:`UNIT_PAIRS` pairs; and the worker processes are fed a few units at a time, never the whole run."""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import pytest

from referee.engine import PRESETS
from referee.records import MatchResult
from referee.tournament import BotSpec, RunOptions, TournamentConfig, start
from referee.tournament.ledger import Ledger
from referee.tournament.runner import QUEUED, ParallelRun
from referee.tournament.schedule import UNIT_PAIRS, MatchSpec, unit_pairs, work_units
from referee.tournament.units import Units
from tests.helpers import ROOT, make_config


def _ids(units: object) -> list[list[str]]:
    return [[m.match_id for m in unit] for unit in units]  # type: ignore[attr-defined]


@pytest.mark.parametrize("shard", [(1, 1), (2, 3)])
@pytest.mark.parametrize("jobs", [1, 2, 5])
def test_the_pending_units_are_the_units_of_the_pending_list(shard: tuple[int, int], jobs: int) -> None:
    config = make_config(5, pairs=9)
    ledger = Ledger(config, shard)
    rng = random.Random(f"{shard}{jobs}")
    for offset, spec in enumerate(list(ledger.values())):
        if rng.random() < 0.4:  # some pairs whole, some half, some not played
            ledger.mark(spec, offset)
    ledger.redeal(2, 3, 1) if ledger.in_shard(ledger.index_of(2, 3)) else None
    pending = list(ledger.pending())
    units = Units.pending(ledger, jobs)
    want = work_units(pending, jobs)
    assert _ids(units) == _ids(want) and len(units) == len(want) and units.matches == len(pending)
    assert _ids(units) == _ids(units)  # dealt afresh, the same, each time


def test_a_unit_holds_at_most_UNIT_PAIRS_pairs() -> None:
    assert unit_pairs(10, 1) == 5 and unit_pairs(10_000, 1) == UNIT_PAIRS
    assert unit_pairs(160, 2) == 5 and unit_pairs(2_000_000, 8) == UNIT_PAIRS
    config = make_config(2, pairs=UNIT_PAIRS + 20)
    units = Units.pending(Ledger(config, (1, 1)), 1)
    assert [len(u) for u in units] == [2 * UNIT_PAIRS, 40] and len(units) == 2
    assert all(len({m.pairing for m in u}) == 1 for u in units)


def test_units_of_a_list_are_its_work_units() -> None:
    specs = list(Ledger(make_config(3, pairs=4), (1, 1)).values())[3:]
    units = Units.of(specs, 2)
    assert _ids(units) == _ids(work_units(specs, 2)) and units.matches == len(specs)


@pytest.mark.slow  # real bots
def test_the_workers_are_fed_a_few_units_at_a_time(tmp_path: Path) -> None:
    bots = tuple(BotSpec(name, f"{sys.executable} {ROOT / 'bots' / 'minimal_bot.py'}") for name in ("a", "b", "c"))
    config = TournamentConfig(bots=bots, rules=PRESETS["cardavia"], pairs=24, seed=5, sandbox="none")
    store = start(config, RunOptions(jobs=2), tmp_path / "t")
    units = Units.pending(store.schedule, 2)
    biggest = max(len(u) for u in units)
    held: list[int] = []
    seen: list[str] = []
    try:
        with ParallelRun(config, dataclasses.replace(store.output()), units, 2) as run:

            def emit(spec: MatchSpec, result: MatchResult, played: object) -> None:
                held.append(len(run.inflight) + 1)  # with the match just taken out
                seen.append(spec.match_id)

            run.run(emit, lambda: False)  # type: ignore[arg-type]
    finally:
        store.close()
    assert len(units) > 2 * QUEUED * 2  # more units than are ever queued at once
    assert sorted(seen) == sorted(m.match_id for m in store.schedule.values())
    assert max(held) <= QUEUED * 2 * biggest < len(seen)


def test_the_pending_ids_are_those_of_the_pending_entries() -> None:
    ledger = Ledger(make_config(4, pairs=5), (2, 2))
    for offset, spec in enumerate(list(ledger.values())[::3]):
        ledger.mark(spec, offset)
    assert [(pg, pair, mid) for pg, pair, mid in ledger.pending_ids()] == [
        (m.pairing, m.pair, m.match_id) for m in ledger.pending()
    ]
