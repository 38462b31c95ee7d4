"""``tournament verify DIR``: a contestant's check that the deals were fixed before the contest.

The tournament published a commitment to its secret seed at the start (:mod:`referee.tournament.commitment`)
and the seed once it was complete. This check opens the commitment with the seed, derives every deal pair's
seed, first dealer and suite deals from it, and re-simulates every replay: a replay whose header or dealt
cards differ from what the committed seed deals fails, naming the match. Every recorded result must be the one
its replay ends with, and no finished game may be missing from the results: a replay that ends with a result
but has no line in ``results.jsonl`` (lines cut off its end), and a game dealt afresh after it had finished (its
kept ``*.interrupted-N`` replay ends with a result) each fail. The published report of a complete folder
(``standings.json``, ``standings.csv``, ``matches.csv``, the leaderboard of ``index.html``) must be the one its
results give. The signatures are checked under the key given, or the default key where there is one.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.replay.lines import Result
from referee.replay.reader import LineError, ReplayError
from referee.replay.replayer import Simulation, replayed_result
from referee.replay.verify import report_of
from referee.tournament.commitment import commit, opens
from referee.tournament.config import SignatureError, TournamentError
from referee.tournament.folder import NO_KEY, existing_replay, kept_replays
from referee.tournament.schedule import redealt
from referee.tournament.store import Store


@dataclass
class FolderReport:
    """What :func:`verify_folder` found: matches checked, and one line per problem (empty: all good)."""

    commitment: str
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    signed: bool = False  # the signatures were checked (under a key)
    versions: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # bot -> fingerprint -> its matches

    def to_json(self, root: Path) -> dict[str, Any]:
        """The findings as ``tournament verify --json`` prints them."""
        return {"folder": str(root), "ok": self.ok, "problems": list(self.problems), "checked": self.checked,
                "commitment": self.commitment, "signed": self.signed, "versions": self.versions}  # fmt: skip

    def version_notes(self) -> list[str]:
        """A line for each bot whose replays name more than one version of its files (their ``files``
        fingerprint): which matches each played."""
        out = []
        for name, seen in sorted(self.versions.items()):
            if len(seen) > 1:
                parts = [f"{fp} in {len(mids)} match(es) from {mids[0]}" for fp, mids in seen.items()]
                out.append(f"note: {name} played with {len(seen)} versions of its files: " + "; ".join(parts))
        return out

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
    try:
        store = Store.open_readonly(root, key)
    except SignatureError as exc:  # a file that does not check: a finding, not a folder that cannot be read
        report = FolderReport(commitment or published_commitment(root) or "not read", signed=True)
        report.problems.append(str(exc))
        return report
    config = store.config
    seed = config.seed if seed is None else seed
    commitment = commitment or published_commitment(root) or commit(config.seed)
    report = FolderReport(commitment, signed=key is not None)
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
        if sim.result != Result.of(rec.result):  # the line the referee wrote for this result
            report.problems.append(f"{mid}: its recorded result is not the one its replay ends with ({path})")
            continue
        report.checked += 1
        for name, bot in zip(spec.seats, header.bots, strict=True):
            if isinstance(files := bot.extra.get("files"), str):
                report.versions.setdefault(name, {}).setdefault(files, []).append(mid)
    for _, _, mid in store.schedule.pending_ids():
        path = existing_replay(root, mid)
        if path is not None and finished(path, key):
            report.problems.append(
                f"{mid}: its replay ends with a result that results.jsonl does not hold (lines cut off the results,"
                " or a run stopped as the game ended: --resume records it from the replay)"
            )  # fmt: skip
    report.problems += published_report(root, store)
    kept: dict[tuple[int, int, int], list[tuple[Path, bool]]] = {}
    for path, mid, deal in kept_replays(root):
        kept_spec = store.schedule.get(mid)
        if kept_spec is None:
            report.problems.append(f"{path}: not a game of this tournament")
            continue
        kept.setdefault((kept_spec.pairing, kept_spec.pair, deal), []).append((path, finished(path, key)))
    for games in kept.values():
        if all(ended for _, ended in games):  # an interruption leaves a replay without its result
            names = ", ".join(path.name for path, _ in games)
            report.problems.append(f"{names}: dealt afresh though no game of the pair had been interrupted (each "
                                   "kept replay ends with its result)")  # fmt: skip
    return report


COUNTS = ("rank", "games", "wins", "draws", "losses", "points")
"""What :func:`published_report` compares of each bot's line in the standings files."""
MATCH_FIELDS = ("seat1", "seat2", "winner", "score1", "score2", "rounds", "reason", "forfeit_bot", "forfeit_reason")
"""What it compares of each ``matches.csv`` row."""


def published_report(root: Path, store: Store) -> list[str]:
    """The published report files of a complete folder that do not hold what its results give: each bot's rank
    and counts in ``standings.json`` and ``standings.csv``, each pairing's in ``standings.json``, each row of
    ``matches.csv``, and the leaderboard of ``index.html``, worked out afresh from ``results.jsonl`` (a folder
    still running, or with no report, has none to check)."""
    try:
        doc = json.loads((root / "standings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(doc, dict) or doc.get("running") or doc.get("complete") is not True:
        return []
    from referee.tournament.pages import leaderboard_html
    from referee.tournament.report import rank_of
    from referee.tournament.standings import tally_of

    st = tally_of(store.config, store.records_in_order()).standings(store.options.sprt)
    wanted = {b.name: {k: {"rank": rank_of(st, i), **b.to_json()}[k] for k in COUNTS} for i, b in enumerate(st.bots)}
    out: list[str] = []
    given = {str(b.get("name")): {k: b.get(k) for k in COUNTS} for b in doc.get("standings", [])
             if isinstance(b, dict)}  # fmt: skip
    if given != wanted:
        out.append("standings.json: its standings are not those of results.jsonl")
    pairings = [(p.first, p.second, p.wins, p.draws, p.losses) for p in st.pairings]
    if [(p.get("first"), p.get("second"), p.get("wins"), p.get("draws"), p.get("losses"))
            for p in doc.get("pairings", []) if isinstance(p, dict)] != pairings:  # fmt: skip
        out.append("standings.json: its pairings are not those of results.jsonl")
    try:
        with open(root / "standings.csv", encoding="utf-8", newline="") as f:
            rows = {r.get("name", ""): {k: r.get(k) for k in COUNTS} for r in csv.DictReader(f)}
        if rows != {n: {k: str(v) for k, v in counts.items()} for n, counts in wanted.items()}:
            out.append("standings.csv: its standings are not those of results.jsonl")
    except OSError:
        pass
    try:
        with open(root / "matches.csv", encoding="utf-8", newline="") as f:
            published = {r.get("match_id", ""): [r.get(k) for k in MATCH_FIELDS] for r in csv.DictReader(f)}
        for rec in store.iter_records():
            row = rec.csv_row()
            mid = rec.spec.match_id
            if published.get(mid) != [str(row[k]) if row[k] is not None else "" for k in MATCH_FIELDS]:
                out.append(f"matches.csv: the row of {mid} is not its recorded result")
                break
    except OSError:
        pass
    try:
        home = (root / "index.html").read_text(encoding="utf-8")
        if leaderboard_html(st) not in home:
            out.append("index.html: its leaderboard is not the one of results.jsonl")
    except OSError:
        pass
    return out


def finished(path: Path, key: bytes | None) -> bool:
    """Whether the replay ``path`` re-simulates to its result line (under ``key``'s signatures, when given)."""
    return replayed_result(path, key) is not None


def verify_text(report: FolderReport, root: Path) -> str:
    """The report as lines: each problem, then a summary."""
    lines = [*report.problems, *report.version_notes()]
    verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
    lines.append(f"{root}: {verdict}: {report.checked} match(es) dealt as the seed committed to ({report.commitment})")
    if not report.signed:
        lines.append(f"{NO_KEY} (--key FILE, or the default key of the machine that ran it)")
    return "\n".join(lines)


__all__ = ["FolderReport", "TournamentError", "published_commitment", "verify_folder", "verify_text"]
