"""A signed checkpoint of what opening a tournament folder works out, so that a folder opens in time proportional to
what changed since: the results appended after it, a description rewritten.

Opening a folder checks every ``results.jsonl`` line (its JSON, its place in the MAC chain, its match in the
schedule) and every ``tournament.json`` schedule entry, and gathers the report's running state as it goes
(:class:`~referee.tournament.collected.Collected`): some 200 µs a result. A store that closes cleanly writes what
that work gave into ``.checkpoint``, beside them:

- the SHA-256 of ``tournament.json`` as the store read or wrote it (hashed then, not when the checkpoint is
  written: a description edited while the store was open does not pass for the one its state came from) and of
  the first ``results`` bytes of ``results.jsonl`` (so many complete lines), and the MAC chain's value after them;
- the schedule's state (:meth:`Ledger.state <referee.tournament.ledger.Ledger.state>`: the pairs added and dealt
  afresh, the offset of each recorded result), the pairs added, the warnings of those lines;
- the report's running state, its scratch rows (``matches.csv``'s and the pair list's) included;

all of it under one HMAC-SHA256 of the folder's signing key. The next open of the folder under the same key, by
the same version of the referee, finds the description's and the results' bytes unchanged (hashed at disk speed,
about a millisecond a megabyte), takes the state from the checkpoint and checks only the lines after it, one by
one as before. Anything that does not fit (no key, another key or version, a rewritten or edited file, a damaged
or forged checkpoint) leaves the checkpoint unused: the folder is read in full, as without one. A checkpoint is
an accelerator, never an authority: what it holds is what the checked lines gave, and it is used only for the
exact bytes it was made from.

The state is a pickle, loaded only after its MAC checks, by an unpickler that makes only the referee's own classes
and a few plain containers (:class:`_Unpickler`); the folder, its config, its schedule and the scratch files are
not in it but named (``persistent_id``), and given back by the store that opens the folder, wherever it now is.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import io
import json
import os
import pickle
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from referee import __version__
from referee.signing import key_id

CHECKPOINT = ".checkpoint"
"""The checkpoint's file in the tournament folder."""
FORMAT = "koikoi-checkpoint/1"
_DOMAIN = b"koikoi-referee checkpoint\n"  # the MAC's domain: no other signed text of the referee has this MAC
_CHUNK = 1 << 20
_PLAIN = {
    ("builtins", name)
    for name in ("bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list", "set", "slice",
                 "str", "tuple")
} | {("collections", "deque"), ("collections", "OrderedDict"), ("collections", "defaultdict"),
     ("collections", "Counter"), ("array", "array"), ("array", "_array_reconstructor"),
     ("copyreg", "_reconstructor"), ("builtins", "object")}  # fmt: skip


@functools.cache
def build() -> str:
    """This build of the state's classes: the referee's version and a digest of the sources of the modules
    whose objects a state holds (the tournament package and the records), so that a checkpoint is never loaded
    into classes laid out otherwise."""
    h = hashlib.sha256(__version__.encode())
    here = Path(__file__).resolve().parent
    for path in sorted([*here.glob("*.py"), here.parent / "records.py"]):
        h.update(path.name.encode() + b"\0")
        with contextlib.suppress(OSError):
            h.update(path.read_bytes())
    return f"{__version__}+{h.hexdigest()[:16]}"


def file_digest(path: Path, size: int | None = None) -> str | None:
    """The SHA-256 (hex) of the first ``size`` bytes of ``path`` (all of it when None); None when the file cannot
    be read or is shorter."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            left = size
            while left is None or left > 0:
                chunk = f.read(_CHUNK if left is None else min(_CHUNK, left))
                if not chunk:
                    break
                h.update(chunk)
                if left is not None:
                    left -= len(chunk)
    except OSError:
        return None
    if left:
        return None
    return h.hexdigest()


class _Pickler(pickle.Pickler):
    """Pickles the state with the objects of ``named`` (by identity) and the folder ``root`` (by value) named, not
    written."""

    def __init__(self, f: IO[bytes], named: dict[int, str], root: Path) -> None:
        super().__init__(f, protocol=pickle.HIGHEST_PROTOCOL)
        self._named = named
        self._root = root

    def persistent_id(self, obj: Any) -> str | None:
        name = self._named.get(id(obj))
        if name is None and isinstance(obj, Path) and obj == self._root:
            return "root"
        return name


class _Unpickler(pickle.Unpickler):
    """Loads a checkpoint's state: classes of the referee's own modules and a few plain containers only, the named
    objects given by ``named``."""

    def __init__(self, f: IO[bytes], named: dict[str, Any]) -> None:
        super().__init__(f)
        self._named = named

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _PLAIN:
            return super().find_class(module, name)
        if module.startswith("referee."):
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a checkpoint")

    def persistent_load(self, pid: Any) -> Any:
        try:
            return self._named[pid]
        except (KeyError, TypeError):
            raise pickle.UnpicklingError(f"no object named {pid!r}") from None


class _Signed(io.RawIOBase):
    """A file open for writing whose bytes also go to a MAC: what the pickler writes the state through."""

    def __init__(self, out: IO[bytes], mac: hmac.HMAC) -> None:
        super().__init__()
        self._out = out
        self._mac = mac

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._mac.update(data)
        return self._out.write(data)


def _copy(src: IO[bytes], n: int | None, mac: hmac.HMAC, *outs: IO[bytes]) -> None:
    """Copy ``n`` bytes (None: to the end) of ``src`` to ``outs``, each byte fed to ``mac``; ``ValueError`` when
    ``src`` ends first."""
    left = n
    while left is None or left > 0:
        chunk = src.read(_CHUNK if left is None else min(_CHUNK, left))
        if not chunk:
            if left is None:
                return
            raise ValueError("cut short")
        mac.update(chunk)
        for out in outs:
            out.write(chunk)
        if left is not None:
            left -= len(chunk)


@dataclass
class Saved:
    """A checkpoint read from a folder, its MAC checked; :meth:`state` loads its state (once its files fit).

    ``header``: the sizes and digests it was made for; ``pickled``: a private temporary copy of its state's
    pickle, the bytes the MAC checked; ``scratch``: the scratch files it carried, by name, each a temporary file
    of the folder holding their bytes (given to the state as it loads; :meth:`discard` closes what no state
    took)."""

    header: dict[str, Any]
    pickled: IO[bytes]
    scratch: dict[str, IO[bytes]] = field(default_factory=dict)
    tables: dict[str, list[array[int]]] = field(default_factory=dict)

    @property
    def results(self) -> int:
        """How many bytes of ``results.jsonl`` it covers (complete lines)."""
        return int(self.header["results"])

    @property
    def lines(self) -> int:
        """How many lines of ``results.jsonl`` it covers."""
        return int(self.header["lines"])

    def fits_description(self, path: Path) -> bool:
        """True when ``tournament.json`` at ``path`` is byte for byte the one the checkpoint was made with."""
        return file_digest(path) == str(self.header["description"])

    def state(self, named: dict[str, Any]) -> object:
        """The saved state, the objects of ``named`` and the scratch files put back where they were named.
        :class:`pickle.UnpicklingError` (or another error of a damaged pickle) when it does not load."""
        self.pickled.seek(0)
        state: object = _Unpickler(self.pickled, {**named, **self.scratch, **self.tables}).load()
        self.scratch = {}
        self.discard()
        return state

    def discard(self) -> None:
        """Close the state's copy and the scratch files no state took."""
        for f in (self.pickled, *self.scratch.values()):
            with contextlib.suppress(OSError):
                f.close()
        self.scratch = {}


def write(
    root: Path,
    key: bytes,
    description: str,
    results: tuple[int, int, str],
    state: object,
    named: dict[int, str],
    scratch: dict[str, tuple[IO[bytes], int]],
    tables: dict[str, list[array[int]]],
) -> None:
    """Write ``root``'s checkpoint atomically: ``description`` is the SHA-256 of ``tournament.json`` as the state's
    store read or wrote it (kept from then: a description edited since does not pass for the state's);
    ``results`` is (bytes, lines, SHA-256) of the ``results.jsonl`` prefix that ``state`` was worked out from;
    ``named``: the objects of the state not to write but to name
    (``id(obj)`` -> name); ``scratch``: the scratch files to carry, by name, each with how many of its first
    bytes count; ``tables``: the lists of arrays of the state to write as they are in memory, by name (the
    offsets of every match: through a pickle, each would be held twice as it loads). The file: the header line,
    the scratch bytes, the tables, the state's pickle (streamed, never held whole), the MAC of all of it. Errors
    (``OSError``, a state that does not pickle) are the caller's; no half file is left."""
    size, lines, digest = results
    header = {"format": FORMAT, "build": build(), "key_id": key_id(key), "description": description,
              "results": size, "lines": lines, "results_sha256": digest,
              "scratch": [[name, n] for name, (_, n) in scratch.items()], "tables": list(tables)}  # fmt: skip
    path = root / CHECKPOINT
    tmp = path.with_name(path.name + ".tmp")
    mac = hmac.new(key, _DOMAIN, hashlib.sha256)
    try:
        with open(tmp, "wb") as out:
            first = (json.dumps(header, sort_keys=True) + "\n").encode("ascii")
            mac.update(first)
            out.write(first)
            for f, n in scratch.values():
                f.flush()
                f.seek(0)
                _copy(f, n, mac, out)
            signed = io.BufferedWriter(_Signed(out, mac), _CHUNK)
            for table in tables.values():
                signed.write(len(table).to_bytes(4, "little"))
                for arr in table:
                    signed.write(arr.typecode.encode("ascii") + len(arr).to_bytes(8, "little"))
                    arr.tofile(signed)
            named = {**named, **{id(f): name for name, (f, _) in scratch.items()}}
            _Pickler(signed, {**named, **{id(t): name for name, t in tables.items()}}, root).dump(state)
            signed.flush()
            out.write(mac.hexdigest().encode("ascii") + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


_MAC_LINE = 65
"""The MAC's line at the end of a checkpoint: 64 hex digits and a newline."""


def read(root: Path, key: bytes | None, scratch: Callable[[Path], IO[bytes]]) -> Saved | None:
    """The checkpoint of ``root`` when there is one made under ``key`` by this build of the referee and its MAC
    checks; None otherwise (no key: no checkpoint is used). ``scratch(folder)`` makes each temporary file that
    the carried bytes are copied into (the scratch rows, and the state's pickle, loaded from that private copy
    of what the MAC checked, never from the folder's file)."""
    if key is None:
        return None
    made: list[IO[bytes]] = []
    try:
        with open(root / CHECKPOINT, "rb") as f:
            first = f.readline(1 << 16)
            header = json.loads(first)
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                return None
            if header.get("build") != build() or header.get("key_id") != key_id(key):
                return None
            mac = hmac.new(key, _DOMAIN + first, hashlib.sha256)
            files: dict[str, IO[bytes]] = {}
            for name, n in header["scratch"]:
                made.append(out := scratch(root))
                _copy(f, int(n), mac, out)
                files[str(name)] = out
            tables = {str(name): _table(f, mac) for name in header["tables"]}
            made.append(pickled := scratch(root))
            _copy(f, os.fstat(f.fileno()).st_size - f.tell() - _MAC_LINE, mac, pickled)
            want = f.read(_MAC_LINE)
            if f.read(1) or not hmac.compare_digest(want, mac.hexdigest().encode("ascii") + b"\n"):
                raise ValueError("the MAC does not match")
            for name in ("description", "results_sha256"):
                if not isinstance(header.get(name), str):
                    raise ValueError(f"no {name}")
            int(header["results"]), int(header["lines"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        for out in made:
            with contextlib.suppress(OSError):
                out.close()
        return None
    return Saved(header, pickled, files, tables)


def _table(f: IO[bytes], mac: hmac.HMAC) -> list[array[int]]:
    """A list of arrays as :func:`write` writes it, each byte fed to ``mac``; ``ValueError`` when cut short."""

    def take(n: int) -> bytes:
        data = f.read(n)
        if len(data) != n:
            raise ValueError("cut short")
        mac.update(data)
        return data

    out: list[array[int]] = []
    for _ in range(int.from_bytes(take(4), "little")):
        head = take(9)
        arr = array(head[:1].decode("ascii"))
        if arr.typecode not in ("i", "q"):
            raise ValueError("not a table of offsets")
        arr.frombytes(take(int.from_bytes(head[1:], "little") * arr.itemsize))
        out.append(arr)
    return out
