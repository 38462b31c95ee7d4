"""The one strict reader of replay files: each line as a typed record, or a one-line error naming the line.

Types are exact (``true`` is not the seat 1, ``1.0`` is not a round count), every field the writer writes is
required, and lines other than the header may hold no field the format does not define. What the engine decides
(events, legal actions, results) is checked later by re-simulation (:mod:`referee.replay.replayer`); this module
only checks the shape of each line, and the signature chain when it is given the key.

Seats are 0 and 1 in the records, 1 and 2 in the file.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import IO, Any

from referee.engine import Deal, rules_from_dict
from referee.engine.views import DECISIONS
from referee.errors import RefereeError
from referee.records import Forfeit, Termination, TimeControl
from referee.replay.lines import FORMAT
from referee.replay.lines import Decision as Decision
from referee.replay.lines import EventLine as EventLine
from referee.replay.lines import Header as Header
from referee.replay.lines import HeaderBot as HeaderBot
from referee.replay.lines import Hello as Hello
from referee.replay.lines import Line as Line
from referee.replay.lines import Result as Result
from referee.replay.writer import is_compressed
from referee.signing import MAC_FIELD, Chain, SigningError


class ReplayError(RefereeError):
    """A replay file cannot be read at all (missing, unreadable)."""


class LineError(RefereeError):
    """A line that is not a well-formed replay line (or whose signature does not check). ``line``: its number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


class _Bad(Exception):
    """The line is malformed (message without the line number)."""


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def _int(obj: dict[str, Any], key: str, what: str) -> int:
    value = obj.get(key)
    if type(value) is not int:
        raise _Bad(f"{what}: {key} is not a whole number: {_short(value)}")
    return value


def _str(obj: dict[str, Any], key: str, what: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise _Bad(f"{what}: {key} is not a string: {_short(value)}")
    return value


def _seat(value: Any, what: str) -> int:
    if type(value) is not int or value not in (1, 2):
        raise _Bad(f"{what}: seat must be 1 or 2, got {_short(value)}")
    return value - 1


def _only(obj: dict[str, Any], keys: set[str], what: str) -> None:
    missing = sorted(keys - obj.keys())
    if missing:
        raise _Bad(f"{what}: missing field {missing[0]!r}")
    extra = sorted(obj.keys() - keys)
    if extra:
        raise _Bad(f"{what}: unexpected field {extra[0]!r}")


def parse_seed(value: Any) -> int:
    """A seed as written: a whole number, or its decimal digits as a string (what JavaScript readers need)."""
    if type(value) is int:
        return value
    if isinstance(value, str) and 0 < len(value) <= 40 and value.isascii() and value.lstrip("-").isdigit():
        return int(value)
    raise ValueError(f"the seed is not a whole number: {_short(value)}")


_HEADER_KEYS = {"type", "format", "program", "protocol", "match_id", "created", "rules", "seed", "deals",
                "first_dealer", "bots", "time"}  # fmt: skip


def _header(h: dict[str, Any]) -> Header:
    if h.get("format") != FORMAT:
        raise _Bad(f"header: format is {_short(h.get('format'))}, expected {FORMAT!r}")
    try:
        seed = parse_seed(h.get("seed"))
    except ValueError as exc:
        raise _Bad(f"header: {exc}") from None
    raw_rules = h.get("rules")
    if not isinstance(raw_rules, dict):
        raise _Bad("header: rules is not an object")
    try:
        rules = rules_from_dict(dict(raw_rules), source="header rules")
    except Exception as exc:  # the engine's RulesError, or anything odd in the data
        raise _Bad(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    missing = sorted(_HEADER_KEYS - h.keys())
    if missing:
        raise _Bad(f"header: missing field {missing[0]!r}")
    deals_raw = h["deals"]
    if not isinstance(deals_raw, list) or not all(isinstance(d, dict) for d in deals_raw):
        raise _Bad("header: deals is not a list of deal objects")
    try:
        deals = tuple(Deal.from_json(d) for d in deals_raw)
    except Exception as exc:
        raise _Bad(f"header: deals: {exc}") from None
    fd = h["first_dealer"]
    if fd is not None and (type(fd) is not int or fd not in (1, 2)):
        raise _Bad(f"header: first_dealer must be 1, 2 or null, got {_short(fd)}")
    bots = _header_bots(h["bots"])
    time = _time(h["time"], "header")
    return Header(
        match_id=_str(h, "match_id", "header"), created=_str(h, "created", "header"),
        program=_str(h, "program", "header"), protocol=_str(h, "protocol", "header"), rules=rules, seed=seed,
        deals=deals, first_dealer=None if fd is None else fd - 1, bots=bots, time=time,
        extra={k: v for k, v in h.items() if k not in _HEADER_KEYS},
    )  # fmt: skip


def _time(value: Any, where: str) -> TimeControl:
    """A time control object of the header (``where``: the header or a seat's entry)."""
    if not isinstance(value, dict):
        raise _Bad(f"{where}: time is not an object")
    try:
        return TimeControl.from_json(value)
    except ValueError as exc:
        raise _Bad(f"{where}: time: {exc}") from None


def _header_bots(bots: Any) -> tuple[HeaderBot, HeaderBot]:
    """The header's two seat entries: each seat's command, its own time control if it has one, the rest kept."""
    commands = _per_seat(bots, "command", "header")
    out: list[HeaderBot] = [HeaderBot(""), HeaderBot("")]
    for b in bots:
        seat = b["seat"] - 1
        time = _time(b["time"], "header: bots") if "time" in b else None
        extra = {k: v for k, v in b.items() if k not in ("seat", "command", "time")}
        out[seat] = HeaderBot(commands[seat], time, extra)
    return out[0], out[1]


def _per_seat(bots: Any, key: str, where: str, *, only: bool = False) -> list[str]:
    """The string ``key`` of each seat's entry in a ``bots`` list of two objects (with ``only``: and no other
    field)."""
    if not isinstance(bots, list) or len(bots) != 2 or not all(isinstance(b, dict) for b in bots):
        raise _Bad(f"{where}: bots is not a list of two objects")
    out = ["", ""]
    for b in bots:
        if only:
            _only(b, {"seat", key}, f"{where}: bots")
        out[_seat(b.get("seat"), f"{where}: bots")] = _str(b, key, f"{where}: bots")
    return out


def _hello(h: dict[str, Any]) -> Hello:
    _only(h, {"type", "seat", "name", "version"}, "hello")
    version = h["version"]
    if version is not None and not isinstance(version, str):
        raise _Bad(f"hello: version is not a string or null: {_short(version)}")
    return Hello(_seat(h["seat"], "hello"), _str(h, "name", "hello"), version)


def _event(e: dict[str, Any]) -> EventLine:
    name = e.get("event")
    if not isinstance(name, str):
        raise _Bad(f"event: event is not a string: {_short(name)}")
    return EventLine(name, {k: v for k, v in e.items() if k != "type"})


_DECISION_NAMES = frozenset(DECISIONS.values())


def _decision(d: dict[str, Any]) -> Decision:
    _only(d, {"type", "seat", "id", "decision", "legal", "action", "ms"}, "decision")
    seat = _seat(d["seat"], "decision")
    if not isinstance(d["decision"], str) or d["decision"] not in _DECISION_NAMES:
        raise _Bad(f"decision: unknown decision {_short(d['decision'])}")
    if not isinstance(d["legal"], list):
        raise _Bad("decision: legal is not a list")
    ms = d["ms"]
    if type(ms) not in (int, float) or not math.isfinite(ms) or ms < 0:
        raise _Bad(f"decision: ms is not a time in milliseconds: {_short(ms)}")
    return Decision(seat, _int(d, "id", "decision"), d["decision"], tuple(d["legal"]), d["action"], float(ms))


def _result(r: dict[str, Any]) -> Result:
    _only(r, {"type", "winner", "scores", "rounds", "reason", "forfeit", "bots"}, "result")
    winner = r["winner"]
    scores = r["scores"]
    if not (isinstance(scores, list) and len(scores) == 2 and all(type(s) is int for s in scores)):
        raise _Bad(f"result: scores are not two whole numbers: {_short(scores)}")
    try:
        reason = Termination(r["reason"]) if isinstance(r["reason"], str) else None
    except ValueError:
        reason = None
    if reason is None:
        raise _Bad(f"result: unknown reason {_short(r['reason'])}")
    raw = r["forfeit"]
    forfeit = None
    if raw is not None:
        if not isinstance(raw, dict) or set(raw) != {"seat", "reason", "detail"}:
            raise _Bad(f"result: bad forfeit {_short(raw)}")
        try:
            forfeit = Forfeit.from_json(raw)
        except ValueError as exc:
            raise _Bad(f"result: bad forfeit: {exc}") from None
    if (forfeit is None) != (reason is not Termination.FORFEIT):
        raise _Bad(f"result: reason {reason.value} with forfeit {_short(raw)}")
    names = _per_seat(r["bots"], "name", "result", only=True)
    return Result(
        winner=None if winner is None else _seat(winner, "result: winner"), scores=(scores[0], scores[1]),
        rounds=_int(r, "rounds", "result"), reason=reason, forfeit=forfeit, names=(names[0], names[1]),
    )  # fmt: skip


_PARSERS: dict[str, Callable[[dict[str, Any]], Line]] = {
    "hello": _hello,
    "event": _event,
    "decision": _decision,
    "result": _result,
}


def parse_line(obj: Any, first: bool) -> Line:
    """One line's JSON value as a record; ``first``: it is the file's first line (the header).
    :class:`ValueError` with a one-line message for anything malformed."""
    if not isinstance(obj, dict):
        raise ValueError(f"not a JSON object: {_short(obj)}")
    obj = {k: v for k, v in obj.items() if k != MAC_FIELD}
    kind = obj.get("type")
    try:
        if first:
            if kind != "header":
                raise _Bad(f"expected the header line, got type {_short(kind)}")
            return _header(obj)
        parser = _PARSERS.get(kind) if isinstance(kind, str) else None
        if parser is None:
            raise _Bad(f"unknown line type {_short(kind)}")
        return parser(obj)
    except _Bad as exc:
        raise ValueError(str(exc)) from None


class ReplayReader:
    """Reads a replay file as ``(line number, record)`` pairs.

    Raises :class:`ReplayError` when the file cannot be read and :class:`LineError` at the first malformed
    line. A last line cut short (no newline, not JSON: the writer was stopped mid-line) ends the file and sets
    :attr:`cut_short`. With ``key``, each line's MAC is checked once its consumer asks for the next line (so a
    line the re-simulation rejects is reported for what is wrong in it, and an edit it accepts for the
    signature); the chain then also covers the last line before iteration stops.
    """

    def __init__(self, path: Path | str, key: bytes | None = None) -> None:
        self.path = Path(path)
        self.key = key
        self.cut_short = False
        self.lines = 0  # lines read and checked so far

    def __iter__(self) -> Iterator[tuple[int, Line]]:
        chain = Chain(self.key)
        lines = open_replay(self.path)
        try:
            n = 0
            while True:
                try:
                    raw = next(lines)
                except StopIteration:
                    return
                except _Undecodable as exc:
                    raise LineError(n + 1, str(exc)) from None
                n += 1
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError) as exc:
                    if not raw.endswith(b"\n"):
                        self.cut_short = True
                        return
                    if not raw.strip():
                        raise LineError(n, "a blank line (a replay is one JSON object a line)") from None
                    raise LineError(n, f"not a JSON line: {exc}") from None
                try:
                    record = parse_line(obj, n == 1)
                except ValueError as exc:
                    raise LineError(n, str(exc)) from None
                except Exception as exc:  # a shape no check above foresaw: still one line, never a stack trace
                    raise LineError(n, f"cannot read this line: {type(exc).__name__}: {exc}") from None
                yield n, record
                try:
                    chain.check_line(raw.removesuffix(b"\n").removesuffix(b"\r"), f"line {n}")  # LF or CRLF
                except SigningError as exc:
                    raise LineError(n, str(exc).removeprefix(f"line {n}: ")) from None
                self.lines = n
        finally:
            lines.close()


class _Undecodable(Exception):
    """The compressed data cannot be decompressed past this point (message without the line number)."""


_CHUNK = 1 << 12  # compressed bytes per step: a corrupt block costs the lines after the last good step only


def open_replay(path: Path | str) -> Generator[bytes, None, None]:
    """The lines of a replay file as bytes (each with its newline; the last may lack it: a cut-short line), the
    one place that opens replays: a plain ``.jsonl`` file, or a gzip-compressed one (a name ending in ``.gz``).

    A compressed file cut short (a killed referee, a partial copy) yields the lines of its prefix, as a plain
    file does. :class:`ReplayError` when the file cannot be read; the generator's ``close`` closes the file.
    Corrupt compressed data raises a private error that :class:`ReplayReader` reports as a :class:`LineError`
    on the line it would have been.
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, also when the consumer stops early
    except OSError as exc:
        raise ReplayError(f"cannot read: {exc.strerror or exc}") from None
    try:
        if not is_compressed(path):
            yield from f
            return
        rest = b""
        for data in _decompressed(f):
            rest += data
            start = 0
            while (nl := rest.find(b"\n", start)) >= 0:
                yield rest[start : nl + 1]
                start = nl + 1
            rest = rest[start:]
        if rest:
            yield rest
    except OSError as exc:
        raise ReplayError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        f.close()


def first_line(path: Path | str) -> bytes:
    """The first line of a replay file, plain or compressed (b"" when it cannot be read)."""
    lines = open_replay(path)
    try:
        return next(lines, b"")
    except (ReplayError, _Undecodable):
        return b""
    finally:
        lines.close()


def _decompressed(f: IO[bytes]) -> Iterator[bytes]:
    """The decompressed bytes of a gzip file, member after member, as far as they go (a cut-short file ends
    where its data ends)."""
    unzip = zlib.decompressobj(wbits=31)
    while chunk := f.read(_CHUNK):
        while chunk:
            try:
                yield unzip.decompress(chunk)
            except zlib.error as exc:
                raise _Undecodable(f"cannot decompress the replay: {exc}") from None
            chunk = unzip.unused_data if unzip.eof else b""
            if unzip.eof:
                unzip = zlib.decompressobj(wbits=31)  # another gzip member follows (concatenated files)
    try:
        yield unzip.flush()
    except zlib.error as exc:
        raise _Undecodable(f"cannot decompress the replay: {exc}") from None


def read_replay(path: Path | str, key: bytes | None = None) -> list[tuple[int, Line]]:
    """Every record of a replay file, checked for shape (and signature with ``key``), not re-simulated: for
    callers that only need what the file says (a tournament resuming). Raises :class:`ReplayError` or
    :class:`LineError`."""
    return list(ReplayReader(path, key))
