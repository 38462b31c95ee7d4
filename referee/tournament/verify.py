"""``tournament verify DIR``: a contestant's check that the deals were fixed before the contest.

The tournament published a commitment to its secret seed at the start (:mod:`referee.tournament.commitment`)
and the seed once it was complete. This check opens the commitment with the seed, derives every deal pair's
seed, first dealer and suite deals from it, and re-simulates every replay: a replay whose header or dealt
cards differ from what the committed seed deals fails, naming the match.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.replay.reader import LineError, ReplayError
from referee.replay.replayer import Simulation
from referee.replay.verify import report_of
from referee.tournament.commitment import commit, opens
from referee.tournament.config import TournamentError
from referee.tournament.folder import existing_replay
from referee.tournament.schedule import redealt
from referee.tournament.store import Store


@dataclass
class FolderReport:
    """What :func:`verify_folder` found: matches checked, and one line per problem (empty: all good)."""

    commitment: str
    checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems


def _standings(root: Path) -> dict[str, Any]:
    try:
        doc = json.loads((root / "standings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def published_commitment(root: Path) -> str | None:
    """The seed commitment the folder's ``standings.json`` published, if any."""
    value = _standings(root).get("seed_commitment")
    return value if isinstance(value, str) else None


def published_steps(root: Path) -> list[str | None]:
    """The commitments to the ladder steps' seeds that the folder's ``standings.json`` published, in order."""
    steps = _standings(root).get("ladder")
    if not isinstance(steps, list):
        return []
    out: list[str | None] = []
    for step in steps:
        value = step.get("commitment") if isinstance(step, dict) else None
        out.append(value if isinstance(value, str) else None)
    return out


def verify_folder(
    root: Path, seed: int | None = None, commitment: str | None = None, key: bytes | None = None
) -> FolderReport:
    """Check the folder ``root`` against ``seed`` (default: the one in its description) and ``commitment``
    (default: the one its ``standings.json`` published): the seed opens the commitment, and every recorded
    match's deal (its seed, first dealer, suite deals and every dealt card) is the one the seed gives.
    :class:`TournamentError` for a folder that cannot be read."""
    store = Store.open_readonly(root, key)
    config = store.config
    seed = config.seed if seed is None else seed
    commitment = commitment or published_commitment(root) or commit(config.seed)
    report = FolderReport(commitment)
    if not opens(commitment, seed):
        report.problems.append(f"seed {seed} does not open the commitment {commitment}")
        return report
    if seed != config.seed:
        report.problems.append(f"the folder's deals were made from seed {config.seed}, not the committed {seed}")
        return report
    for n, (stage, step) in enumerate(zip(config.ladder, published_steps(root), strict=False), 1):
        if step is not None and stage.salt is not None and not opens(step, stage.seed(seed)):
            report.problems.append(f"ladder step {n}: its seed does not open the published commitment {step}")
    for rec in store.iter_records():
        spec = rec.spec
        due = redealt(config, spec, spec.deal)
        mid = spec.match_id
        suite = config.suite[spec.suite] if spec.suite is not None else ()
        if (rec.result.seed, spec.first_dealer) != (due.seed, due.first_dealer):
            report.problems.append(f"{mid}: its deal is not the one the committed seed gives")
            continue
        path = existing_replay(root, mid)
        if path is None:
            report.problems.append(f"{mid}: no replay to check")
            continue
        sim = Simulation(path, key)
        try:
            for _ in sim.steps():
                pass
            error: LineError | ReplayError | None = None
        except (LineError, ReplayError) as exc:
            error = exc
        checked = report_of(sim, error, key is not None)
        header = sim.header
        if header is None or not checked.ok:
            report.problems.append(checked.summary())
            continue
        if header.seed != due.seed or tuple(header.deals) != tuple(suite) or header.first_dealer != due.first_dealer:
            report.problems.append(f"{path}: the replay's deal is not the one the committed seed gives")
            continue
        report.checked += 1
    return report


def verify_text(report: FolderReport, root: Path) -> str:
    """The report as lines: each problem, then a summary."""
    lines = list(report.problems)
    verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
    lines.append(f"{root}: {verdict}: {report.checked} match(es) dealt as the seed committed to ({report.commitment})")
    return "\n".join(lines)


__all__ = ["FolderReport", "TournamentError", "published_commitment", "verify_folder", "verify_text"]
