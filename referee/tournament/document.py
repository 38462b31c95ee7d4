"""``tournament.json`` written and read a schedule entry at a time.

The description lists the whole schedule (one object an entry), which for a large tournament is most of the
file. :func:`write_document` writes it entry by entry, with the bytes ``json.dumps(doc, indent=1)`` gives and the
MAC :meth:`referee.signing.Chain.sign` gives (the canonical form's keys are sorted, so the schedule, its last
field, is fed to the MAC an entry at a time); :func:`read_head` reads it back without holding the schedule: the
fields before and after it, the entries decoded one at a time and fed to the MAC check. A file of another layout
(edited by hand, an older writer) is not read here: the caller reads it whole.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from referee.signing import MAC_FIELD, canonical, key_id

SCHEDULE = "schedule"
_OPEN = '\n "schedule": ['  # the schedule field of the indented layout (a raw newline is never inside a string)
_CLOSE = "\n ]"  # its end (entries close with "\n  }", nested lists are deeper)
_CHUNK = 1 << 20


def _entry_text(entry: dict[str, Any]) -> str:
    """An entry as ``json.dumps(doc, indent=1)`` lays it out inside the schedule (two levels deep)."""
    return "\n".join("  " + line for line in json.dumps(entry, indent=1).split("\n"))


def _compact(entry: dict[str, Any]) -> bytes:
    """An entry as the canonical form of the document holds it."""
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def write_document(f: IO[str], head: dict[str, Any], schedule: Iterable[dict[str, Any]], key: bytes | None) -> None:
    """Write to ``f`` the document ``{**head, "schedule": [...]}`` (with ``key_id`` and ``mac`` when ``key``) as
    ``json.dumps(Chain(key).sign(doc), indent=1) + "\\n"`` writes it, ``schedule`` read once."""
    tail: dict[str, Any] = {} if key is None else {"key_id": key_id(key)}
    text = json.dumps({**head, SCHEDULE: []}, indent=1)
    empty = '"schedule": []\n}'
    f.write(text[: -len(empty)] + '"schedule": [')
    mac = None
    if key is not None:
        base = canonical({**head, **tail, SCHEDULE: []})
        mac = hmac.new(key, b"\n" + base[: -len(b"]}")], hashlib.sha256)
    sep = "\n"
    for entry in schedule:
        f.write(sep + _entry_text(entry))
        if mac is not None:
            mac.update((b"," if sep != "\n" else b"") + _compact(entry))
        sep = ",\n"
    f.write("]" if sep == "\n" else "\n ]")
    if mac is not None:
        mac.update(b"]}")
        tail[MAC_FIELD] = mac.hexdigest()
    f.write(("," + json.dumps(tail, indent=1)[1:] if tail else "\n}") + "\n")


class _Entries:
    """The schedule entries of an open file, decoded one at a time from a buffer refilled in chunks."""

    def __init__(self, f: IO[str], buffer: str) -> None:
        self.f = f
        self.buf = buffer
        self.pos = 0
        self.decoder = json.JSONDecoder()

    def _skip(self) -> str:
        """The next character that is not white space (refilling the buffer), "" at the end of the file."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \n\r\t":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return ""

    def _fill(self) -> bool:
        more = self.f.read(_CHUNK)
        self.buf = self.buf[self.pos :] + more
        self.pos = 0
        return bool(more)

    def entries(self) -> Iterable[Any]:
        """Each entry until the schedule's ``]`` (ValueError for anything else)."""
        first = True
        while True:
            c = self._skip()
            if c == "]":
                self.pos += 1
                return
            if not first:
                if c != ",":
                    raise ValueError("a schedule entry is followed by , or ]")
                self.pos += 1
                self._skip()
            while True:
                try:
                    value, end = self.decoder.raw_decode(self.buf, self.pos)
                except json.JSONDecodeError:
                    if not self._fill():
                        raise
                    continue
                if end == len(self.buf) and self._fill():  # a number cut by the chunk: decode it again
                    continue
                break
            self.pos = end
            first = False
            yield value

    def rest(self) -> str:
        """What follows the schedule, to the end of the file."""
        return self.buf[self.pos :] + self.f.read()


def read_head(path: Path, key: bytes | None) -> dict[str, Any] | None:
    """The fields of ``path`` other than the schedule, each entry decoded once, checked to be an object and fed
    to the MAC check under ``key``; None when the file is not in the layout :func:`write_document` writes, or its
    MAC does not check (the caller then reads it whole and reports what is wrong)."""
    tail = _tail(path)
    if tail is None:
        return None
    with open(path, encoding="utf-8") as f:
        found = _head(f)
        if found is None:
            return None
        head, rest = found
        try:
            doc = {**head, **tail}
            mac = None
            if key is not None:
                body = {k: v for k, v in doc.items() if k != MAC_FIELD}
                mac = hmac.new(key, b"\n" + canonical({**body, SCHEDULE: []})[: -len(b"]}")], hashlib.sha256)
            sep = b""
            for entry in _Entries(f, rest).entries():
                if not isinstance(entry, dict):
                    return None
                if mac is not None:
                    mac.update(sep + _compact(entry))
                    sep = b","
        except (ValueError, RecursionError):
            return None
    if mac is not None:
        mac.update(b"]}")
        got = doc.get(MAC_FIELD)
        if not isinstance(got, str) or not hmac.compare_digest(got, mac.hexdigest()):
            return None
    return doc


def read_fields(path: Path) -> dict[str, Any] | None:
    """The fields of ``path`` other than the schedule, its entries neither decoded nor checked: for a file known
    to be one that :func:`read_head` checked (its bytes unchanged since); None when it is not in the layout
    :func:`write_document` writes."""
    tail = _tail(path)
    if tail is None:
        return None
    with open(path, encoding="utf-8") as f:
        found = _head(f)
    return None if found is None else {**found[0], **tail}


def _head(f: IO[str]) -> tuple[dict[str, Any], str] | None:
    """The fields before the schedule of the open file ``f`` and what was read after the schedule's opening;
    None when the file is not in the layout :func:`write_document` writes."""
    buf = ""
    while (at := buf.find(_OPEN)) < 0:
        more = f.read(_CHUNK)
        if not more or len(buf) > 64 * _CHUNK:
            return None
        buf += more
    before = buf[:at]
    try:
        head = json.loads((before[:-1] if before.endswith(",") else before) + "\n}")
    except (ValueError, RecursionError):
        return None
    if not isinstance(head, dict) or SCHEDULE in head:
        return None
    return head, buf[at + len(_OPEN) :]


def _tail(path: Path) -> dict[str, Any] | None:
    """The fields after the schedule (``key_id``, ``mac``), read from the end of the file."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        f.seek(max(0, size - 4096))
        end = f.read().decode("utf-8", "replace")
    at = end.rfind(_CLOSE)
    after = at + len(_CLOSE)
    if at < 0:
        at = end.rfind('"schedule": []')
        if at < 0:
            return None
        after = at + len('"schedule": []')
    rest = end[after:].strip()
    try:
        tail = json.loads("{" + rest[1:]) if rest.startswith(",") else {} if rest == "}" else None
    except (ValueError, RecursionError):
        return None
    return tail if isinstance(tail, dict) else None
