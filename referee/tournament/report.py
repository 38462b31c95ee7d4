"""The tournament report: a standings table for the terminal, and the same as JSON and CSV files.

``standings.json`` holds everything (bots, head-to-head pairings with pentanomial counts, every pair, the
SPRT); ``standings.csv`` one row per bot, ``pairs.csv`` one row per deal pair, ``matches.csv`` one row per
match. The rows' JSON and CSV forms are those of :mod:`referee.tournament.records`.
"""

from __future__ import annotations

import csv
import io
import json
import json.encoder
import math
import os
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from referee.seats.process import expected_isolation
from referee.text import plural
from referee.tournament.asymmetry import ALPHA, EXACT_MAX, METHOD
from referee.tournament.columns import LEADERBOARD_HEAD, STATS_HEAD, leaderboard_cells, stats_cells
from referee.tournament.commitment import commit
from referee.tournament.config import TournamentConfig
from referee.tournament.folder import FORMAT, atomic_text, write_atomic
from referee.tournament.ledger import GAMES, Ledger, put, slots
from referee.tournament.ratings import MIN_GAMES, PRIOR_DRAWS
from referee.tournament.records import MATCH_FIELDS, PAIR_FIELDS, Column, PairRow, Record
from referee.tournament.standings import Standings

COLUMN_TITLES = {Column.CRASHES: "crash", Column.TIMEOUTS: "timeout", Column.INVALID: "invalid",
                 Column.ILLEGAL: "illegal"}  # fmt: skip
"""The terminal table's heading of each forfeit column."""


def report_meta(
    config: TournamentConfig, shard: tuple[int, int], scheduled: int, complete: bool,
    st: Standings | None = None, sprt_stop: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """What ``standings.json`` says of the folder before the standings: the commitment to the seed, and the seed
    itself (as a string: JavaScript readers round integers above 2**53) only once the whole tournament is
    complete; how many matches count (whole pairs only), how many pairs were left open, when the SPRT stopped."""
    whole = complete and tuple(shard) == (1, 1)
    meta: dict[str, Any] = {
        "format": FORMAT,
        "fingerprint": config.fingerprint(),
        "seed": str(config.seed) if whole else None,
        "seed_commitment": commit(config.seed),
        "sandbox": config.sandbox,
        # How the bots are held where this report is written: cgroup limits, freezer, syscall filter.
        "isolation": {**expected_isolation(config.sandbox, config.ponder), "ponder": config.ponder},
        "shard": list(shard),
        "scheduled": scheduled,
        "complete": complete,
    }
    if config.ladder:  # each step's seed, committed when the step is made and published with the tournament's
        meta["ladder"] = [
            {"added": list(s.added), "retired": list(s.retired), "commitment": commit(s.seed(config.seed)),
             "salt": str(s.salt) if whole and s.salt is not None else None}
            for s in config.ladder
        ]  # fmt: skip
    if config.event is not None:
        meta["event"] = {"name": config.event, "description": config.event_description}
    if st is not None:
        meta["counted_matches"] = st.counted
        meta["open_pairs"] = st.open_pairs
    if sprt_stop is not None:
        meta["sprt_stopped_after_pairs"] = sprt_stop
    return meta


RATING_MODEL = {
    "model": "Bradley-Terry maximum likelihood over all pairings, a draw is half a win (Elo scale, mean 0)",
    "prior_draws_per_pairing": PRIOR_DRAWS,
    "min_games": MIN_GAMES,
    "interval": "95%, from the Fisher information",
}
"""What ``standings.json`` says of how its ratings are computed (see :mod:`referee.tournament.ratings`)."""

ASYMMETRY_TEST = {"method": METHOD, "alpha": ALPHA, "exact_up_to": EXACT_MAX}
"""What ``standings.json`` says of the asymmetry test behind each bot's ``asymmetry_*`` fields (see
:mod:`referee.tournament.asymmetry`)."""


def to_json(st: Standings, meta: dict[str, Any]) -> dict[str, Any]:
    """The whole report as one JSON document; ``meta`` (fingerprint, seed, complete, ...) goes first."""
    return {
        **meta,
        "matches": st.matches,
        "standings": [{"rank": rank_of(st, i), **b.to_json()} for i, b in enumerate(st.bots)],
        "pairings": [p.to_json() for p in st.pairings],
        "sprt": st.sprt.to_json() if st.sprt else None,
        "ratings": RATING_MODEL,
        "asymmetry": ASYMMETRY_TEST,
        "pairs": [p.to_json() for p in st.pairs],
    }


def rank_of(st: Standings, i: int) -> int:
    """The rank of ``st.bots[i]`` (bots that share a rank have the same)."""
    return st.ranks[i] if i < len(st.ranks) else i + 1


def _grid(head: list[str], rows: list[list[str]], left: set[int]) -> str:
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(widths[c]) if c in left else cell.rjust(widths[c]) for c, cell in enumerate(r)).rstrip()
        for r in [head, *rows]
    )


UNFROZEN = "the bots could ponder (--ponder): each could think, and use the CPU, on its opponent's time"
NO_CGROUPS = "the bots ran without cgroups: memory and CPU were limited per process only, no CPU share enforced"
UNSANDBOXED = "the bots ran without a sandbox (--sandbox none): they could read and signal anything the referee can"


def table(st: Standings, sandbox: str = "bwrap", ponder: bool = False) -> str:
    """The standings as plain text: the leaderboard (one bot a line, best first, forfeits by column last), the
    head-to-head lines, the SPRT, a line for each bot the asymmetry test flags, the per-bot statistics, and a
    last line for each defence the bots went without (the sandbox, cgroups, the freezer: ``ponder``)."""
    head = [*LEADERBOARD_HEAD, *COLUMN_TITLES.values()]
    rows = [[*leaderboard_cells(st.rank_text(i), b), *(str(b.failures[c]) for c in COLUMN_TITLES)]
            for i, b in enumerate(st.bots)]  # fmt: skip
    out = _grid(head, rows, {0, 1})  # a shared rank (2=) reads left-aligned
    for p in st.pairings:
        if p.games:
            ptn = " ".join(str(c) for c in p.pentanomial)
            out += f"\n{p.first} vs {p.second}: +{p.wins} ={p.draws} -{p.losses}  pairs {p.pairs}, pentanomial [{ptn}]"
    if st.sprt:
        s = st.sprt
        bounds = f"({s.lower:.2f}, {s.upper:.2f})"
        test = f"[{s.elo0:g}, {s.elo1:g}]"
        out += f"\nSPRT {test}: LLR {s.llr:.2f} {bounds} after {plural(s.pairs, 'pair')}: {s.verdict}"
    for b in st.flagged:
        assert b.asymmetry is not None
        out += "\n" + b.asymmetry.text(b.name)
    if st.open_pairs:
        verb = "is" if st.open_pairs == 1 else "are"
        out += f"\n{plural(st.open_pairs, 'pair')} with one game played {verb} left out of every count"
    out += "\n\n" + _grid(STATS_HEAD, [stats_cells(b) for b in st.bots], {0, 7})
    if sandbox == "none":
        out += f"\n{UNSANDBOXED}"
    if expected_isolation(sandbox, ponder)["limits"] == "rlimit":
        out += f"\n{NO_CGROUPS}"
    if ponder:
        out += f"\n{UNFROZEN}"
    return out


def _csv(rows: list[dict[str, Any]], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fields, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def write_report(root: Path, st: Standings, records: Iterable[Record], meta: dict[str, Any]) -> None:
    """Write standings.json, standings.csv, pairs.csv and matches.csv into ``root`` from records held in
    memory (the home page and match pages are :func:`referee.tournament.pages.write_site`'s; a folder's report
    streams its records: :func:`write_standings` and :func:`write_matches`)."""
    write_standings(root, st, meta, st.pairs)
    write_matches(root, sorted(records, key=lambda r: r.spec.index))


def pair_texts(p: PairRow) -> tuple[str, str]:
    """The ``pairs.csv`` line of ``p`` and its entry in ``standings.json``'s pair list (as laid out there)."""
    buf = io.StringIO()
    row = p.csv_row()
    csv.writer(buf, lineterminator="\n").writerow([row[k] for k in PAIR_FIELDS])
    return buf.getvalue(), pair_entry(p.to_json())


_GAME = (
    '\n    {}: {{\n     "match_id": {},\n     "seats": [\n      {},\n      {}\n     ],\n     "winner": {},'
    '\n     "scores": [\n      {},\n      {}\n     ],\n     "reason": {},\n     "order": {}\n    }}'
)
_GAME_KEYS = ("match_id", "seats", "winner", "scores", "reason", "order")


def pair_entry(entry: dict[str, Any]) -> str:
    """``"  " + indented(entry, 2)`` for a pair list entry (:meth:`PairRow.to_json`), its fixed layout written
    out directly; any other shape through :func:`indented`."""
    games = entry.get("games")
    scalars = [(k, v) for k, v in entry.items() if k != "games"]
    if (
        type(games) is not dict
        or not games
        or list(entry)[-1] != "games"
        or any(type(v) in (dict, list, tuple) for _, v in scalars)
        or not all(
            type(g) is dict
            and tuple(g) == _GAME_KEYS
            and type(g["seats"]) is list
            and len(g["seats"]) == 2
            and type(g["scores"]) is list
            and len(g["scores"]) == 2
            and all(type(g[k]) not in (dict, list, tuple) for k in ("match_id", "winner", "reason", "order"))
            and all(type(x) not in (dict, list, tuple) for x in (*g["seats"], *g["scores"]))
            for g in games.values()
        )
    ):
        return "  " + indented(entry, 2)
    head = "".join(f"\n   {_string(k)}: {indented(v)}," for k, v in scalars)
    parts = [
        _GAME.format(_string(name), indented(g["match_id"]), indented(g["seats"][0]), indented(g["seats"][1]),
                     indented(g["winner"]), indented(g["scores"][0]), indented(g["scores"][1]),
                     indented(g["reason"]), indented(g["order"]))
        for name, g in games.items()
    ]
    return "  {" + head + '\n   "games": {' + ",".join(parts) + "\n   }\n  }"


def indented(value: Any, depth: int = 0) -> str:
    """``json.dumps(value, indent=1)`` as it reads nested ``depth`` levels deep (each line after the first
    indented ``depth`` spaces more): the same text, the scalars written by the C encoder (``json.dumps`` with an
    indent encodes in Python, several times slower)."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    if value is None or kind is bool:
        return _CONSTANTS[value]
    if kind is dict and value and all(type(k) is str for k in value):
        inner = "\n" + " " * (depth + 1)
        items = [inner + _string(k) + ": " + indented(v, depth + 1) for k, v in value.items()]
        return "{" + ",".join(items) + "\n" + " " * depth + "}"
    if (kind is list or kind is tuple) and value:
        inner = "\n" + " " * (depth + 1)
        return "[" + ",".join([inner + indented(v, depth + 1) for v in value]) + "\n" + " " * depth + "]"
    if isinstance(value, dict | list | tuple):
        return "\n".join((" " * depth if k else "") + line for k, line in enumerate(json.dumps(value, indent=1)
                                                                                     .split("\n")))  # fmt: skip
    return json.dumps(value)


_string = json.encoder.encode_basestring_ascii
_CONSTANTS = {None: "null", True: "true", False: "false"}


def write_standings(root: Path, st: Standings, meta: dict[str, Any], pairs: Iterable[PairRow]) -> None:
    """Write standings.json, standings.csv and pairs.csv into ``root``, the pair list read once, a pair at a
    time, into both ``standings.json`` (its last field, ``pairs``) and ``pairs.csv``."""
    write_standings_texts(root, st, meta, (pair_texts(p) for p in pairs))


def write_standings_texts(root: Path, st: Standings, meta: dict[str, Any], pairs: Iterable[tuple[str, str]]) -> None:
    """:func:`write_standings` with the pair list given as :func:`pair_texts` (a pair at a time)."""
    doc = to_json(st, meta)
    doc["pairs"] = []
    head = json.dumps(doc, indent=1)
    empty = '"pairs": []\n}'
    assert head.endswith(empty)  # "pairs" is the document's last field
    rows = [{"rank": rank_of(st, i), **b.csv_row()} for i, b in enumerate(st.bots)]
    write_atomic(root / "standings.csv", _csv(rows, list(rows[0]) if rows else ["rank", "name"]))
    with atomic_text(root / "standings.json") as js, atomic_text(root / "pairs.csv") as pc:
        csv.DictWriter(pc, PAIR_FIELDS, lineterminator="\n").writeheader()
        js.write(head[: -len(empty)] + '"pairs": [')
        sep = "\n"
        for line, entry in pairs:
            pc.write(line)
            js.write(sep + entry)
            sep = ",\n"
        js.write("]\n}\n" if sep == "\n" else "\n ]\n}\n")


def scratch(folder: Path | None) -> IO[bytes]:
    """An unnamed temporary file in ``folder`` (the system's temporary folder when None or not writable): it
    goes when closed, or with the process."""
    if folder is not None:
        try:
            return tempfile.TemporaryFile(dir=folder)
        except OSError:
            pass
    return tempfile.TemporaryFile()


class PairList:
    """The pair list's texts (:func:`pair_texts`) kept in a temporary file while the records pass in any order,
    then given back by pairing and pair (:meth:`texts`): four bytes a pair in memory. ``pairs_of[k]``: how many
    pairs pairing ``k`` has (more may come: pairs and pairings added later are taken too). A pair given again
    (its row once its twin came) replaces its row. The file is made in ``folder`` (None: the system's temporary
    folder), unnamed: it goes when closed, or with the process."""

    def __init__(self, pairs_of: list[int], folder: Path | None = None) -> None:
        self._file = scratch(folder)
        self._at = [slots(n) for n in pairs_of]
        self._size = 0

    def add(self, p: PairRow, pairing: int) -> None:
        """The row of pair ``p`` (of pairing number ``pairing``)."""
        line, entry = (text.encode("utf-8") for text in pair_texts(p))
        self._file.seek(self._size)
        self._file.write(len(line).to_bytes(4, "little") + len(entry).to_bytes(4, "little") + line + entry)
        put(self._at, pairing, p.pair, self._size)
        self._size += 8 + len(line) + len(entry)

    def scratch(self) -> tuple[tuple[IO[bytes], int], list[array[int]]]:
        """What a checkpoint carries: the temporary file with how many of its first bytes hold the rows, and
        where each row is in it."""
        return (self._file, self._size), self._at

    def texts(self) -> Iterator[tuple[str, str]]:
        """The texts, by pairing then pair (each once); the list stays open (:meth:`close`)."""
        f = self._file
        for arr in self._at:
            for offset in arr:
                if offset >= 0:
                    f.seek(offset)
                    head = f.read(8)
                    line = f.read(int.from_bytes(head[:4], "little")).decode("utf-8")
                    yield line, f.read(int.from_bytes(head[4:], "little")).decode("utf-8")

    def close(self) -> None:
        """Remove the temporary file."""
        self._file.close()


class MatchRows:
    """The rows of ``matches.csv`` kept in a temporary file while the records of ``ledger``'s schedule pass in
    any order (the order they finished), then written in schedule order (:meth:`write`): four bytes a match in
    memory. The file is made in ``folder`` (None: the system's temporary folder), unnamed."""

    def __init__(self, ledger: Ledger, folder: Path | None = None) -> None:
        self._ledger = ledger
        self._file = scratch(folder)
        self._at = [slots(2 * ledger.pairs_of(k)) for k in range(len(ledger.plist))]
        self._size = 0
        self._row = io.StringIO()
        self._csv = csv.writer(self._row, lineterminator="\n")

    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_row", "_csv")}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._row = io.StringIO()
        self._csv = csv.writer(self._row, lineterminator="\n")

    def scratch(self) -> tuple[tuple[IO[bytes], int], list[array[int]]]:
        """What a checkpoint carries: the temporary file with how many of its first bytes hold the rows, and
        where each row is in it."""
        return (self._file, self._size), self._at

    def add(self, rec: Record) -> None:
        """The rows of ``rec``: as its pair complete, then as a half pair (nothing of the deal), one after the
        other."""
        data = b""
        for twin_played in (True, False):
            self._row.seek(0)
            self._row.truncate()
            row = rec.csv_row(twin_played)
            self._csv.writerow([row.get(k, "") for k in MATCH_FIELDS])
            text = self._row.getvalue().encode("utf-8")
            data += len(text).to_bytes(4, "little") + text
        self._file.seek(self._size)
        self._file.write(data)
        put(self._at, rec.spec.pairing, 2 * rec.spec.pair + GAMES.index(rec.spec.game), self._size)
        self._size += len(data)

    def write(self, root: Path) -> None:
        """Write ``matches.csv`` into ``root``, the rows in the ledger's schedule order, one at a time."""
        f = self._file
        with atomic_text(root / "matches.csv") as out:
            csv.DictWriter(out, MATCH_FIELDS, lineterminator="\n").writeheader()
            for _, pairing, pair in self._ledger.pair_keys():
                arr = self._at[pairing] if pairing < len(self._at) else slots(0)
                offsets = [arr[slot] if slot < len(arr) else -1 for slot in (2 * pair, 2 * pair + 1)]
                half = min(offsets) < 0  # its twin still to be played on its deal: the row without the deal
                for offset in offsets:
                    if offset >= 0:
                        f.seek(offset)
                        size = int.from_bytes(f.read(4), "little")
                        if half:
                            f.seek(size, os.SEEK_CUR)
                            size = int.from_bytes(f.read(4), "little")
                        out.write(f.read(size).decode("utf-8"))

    def close(self) -> None:
        """Remove the temporary file."""
        self._file.close()


def write_matches(root: Path, records: Iterable[Record]) -> None:
    """Write ``matches.csv``, a row a record, in the order given (schedule order); a game whose twin is not among
    them is written without its deal (:meth:`~referee.tournament.records.Record.csv_row`)."""
    held = list(records)
    games: dict[tuple[int, int], int] = {}
    for r in held:
        games[(r.spec.pairing, r.spec.pair)] = games.get((r.spec.pairing, r.spec.pair), 0) + 1
    with atomic_text(root / "matches.csv") as f:
        w = csv.DictWriter(f, MATCH_FIELDS, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for r in held:
            w.writerow(r.csv_row(games[(r.spec.pairing, r.spec.pair)] > 1))


