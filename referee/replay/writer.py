"""The replay writer: a ``koikoi-replay/1`` file written line by line as the match goes, plain or gzip-compressed.

The file is created at the first :meth:`ReplayWriter.flush`. Lines are buffered and reach the file whole at each
flush: the match flushes once per decision, while the bot thinks about its request (the header, the hellos and the
first deal go out with the first request), so a referee killed mid-match leaves a valid prefix. A line is encoded
and signed when it is flushed, not when it is written: that work too is off the referee's hot path.

A path ending in ``.gz`` is written compressed (:func:`is_compressed`): each flush ends with a zlib sync flush, so
the compressed prefix on disk decompresses to every line flushed so far, and the readers of
:mod:`referee.replay.reader` read it as they read a plain file's prefix. With a key, every line carries a ``"mac"``
field chained to the line before (:meth:`referee.signing.Chain.sign_line`), so an edited, dropped, reordered or
appended line is detected by :func:`referee.replay.verify` under the same key.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from referee.replay.lines import FORMAT as FORMAT
from referee.replay.lines import Header, Hello, Result
from referee.signing import Chain

GZ_SUFFIX = ".gz"
"""The ending of a compressed replay's file name (``ID.jsonl.gz``)."""
GZ_LEVEL = 6
"""The zlib level of compressed replays."""

_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def is_compressed(path: Path | str) -> bool:
    """True when ``path`` names a gzip-compressed replay (its name ends in ``.gz``)."""
    return str(path).endswith(GZ_SUFFIX)


def plain_name(path: Path) -> Path:
    """``path`` without a compressed replay's ``.gz`` ending (``m.jsonl.gz`` -> ``m.jsonl``), to derive other
    names from (its viewer page, the files of a series)."""
    return path.with_name(path.name.removesuffix(GZ_SUFFIX)) if is_compressed(path) else path


_Decision = tuple[int, int, str, str, str, float]
"""A decision line's parts, as given to :meth:`ReplayWriter.decision`."""


_Pending = str | dict[str, Any] | _Decision | Callable[[], dict[str, Any]]
"""A line written and not yet flushed: its text, its object, a decision's parts, or what makes its object."""


def _text(item: _Pending) -> str:
    """The JSON text of a pending line."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        return _dumps(item)
    if callable(item):
        return _dumps(item())
    seat, request_id, decision, legal, action, ms = item
    return (
        f'{{"type":"decision","seat":{seat},"id":{request_id},"decision":"{decision}",'
        f'"legal":{legal},"action":{action},"ms":{round(ms, 3)!r}}}'
    )


_halted = [False]


def halt_all() -> None:
    """No replay of this process gets another line: its run was cut off (a tournament worker whose referee died
    stops its matches by killing their bots), so what happens to its matches from now on is not play, and no
    replay may end with a result for it: each stays a prefix, an interrupted match."""
    _halted[0] = True


class ReplayWriter:
    """Writes one replay, line by line; with ``key``, signs every line (no key: unsigned). A path ending in
    ``.gz`` is written gzip-compressed. Nothing more is written once :func:`halt_all` was called."""

    def __init__(self, path: Path, *, key: bytes | None = None) -> None:
        if not path.parent.is_dir():  # a tournament's replays go to one folder: one look, not a failed mkdir
            path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._chain = Chain(key)
        self._pending: list[_Pending] = []  # encoded and signed at flush
        self._zip = zlib.compressobj(GZ_LEVEL, zlib.DEFLATED, 31) if is_compressed(path) else None
        self._file: IO[bytes] | None = None  # created at the first flush (the match's: while a bot thinks)
        self._closed = False

    @property
    def signed(self) -> bool:
        """True when the lines carry a MAC."""
        return self._chain.key is not None

    def write(self, obj: dict[str, Any]) -> None:
        """Write one line (a JSON object, encoded at the next :meth:`flush`: not to be changed until then); it
        reaches the file at the next :meth:`flush`."""
        if not self._closed:
            self._pending.append(obj)

    def record(self, line: Header | Hello | Result) -> None:
        """Write the header, a bot's handshake or the result: the line its ``to_json`` gives (the header's
        :attr:`~referee.replay.lines.Header.extra` fields, for example the seats' names, are kept by readers)."""
        self.write(line.to_json())

    def write_later(self, make: Callable[[], dict[str, Any]]) -> None:
        """Write one line, the object ``make()`` returns at the next :meth:`flush` (work done off the hot path,
        which must give the object the line would have had now)."""
        if not self._closed:
            self._pending.append(make)

    def decision(self, seat: int, request_id: int, decision: str, legal: str, action: str, ms: float) -> None:
        """Write a decision line from its parts: ``seat`` 1/2, the ``decision`` name, the request's ``legal``
        list and the ``action`` taken as JSON text (:func:`referee.protocol.legal_text`), ``ms`` rounded to a
        microsecond. ``decision`` is one of the engine's decision names (plain ASCII words). The same line as
        :meth:`write` of its dict, without encoding the legal list again."""
        if not self._closed:
            self._pending.append((seat, request_id, decision, legal, action, ms))

    def write_line(self, line: str) -> None:
        """Write one already-encoded JSON object line (without its newline); it reaches the file at the next
        :meth:`flush`."""
        if not self._closed:
            self._pending.append(line)

    def write_lines(self, lines: Sequence[str | Callable[[], dict[str, Any]]]) -> None:
        """Write lines each given as :meth:`write_line` or :meth:`write_later` takes them (what
        :func:`referee.protocol.encode_events` gives for the replay)."""
        if not self._closed:
            self._pending.extend(lines)

    def flush(self) -> None:
        """Push the lines written so far to the file, whole (a compressed file: decompressible up to them)."""
        if self._closed or not self._pending or _halted[0]:
            return
        out = self._file if self._file is not None else self._create()
        sign = self._chain.sign_line
        data = ("\n".join([sign(_text(item)) for item in self._pending]) + "\n").encode()
        self._pending.clear()
        if self._zip is not None:
            data = self._zip.compress(data) + self._zip.flush(zlib.Z_SYNC_FLUSH)
        out.write(data)
        out.flush()

    def _create(self) -> IO[bytes]:
        try:
            self._file = open(self.path, "wb")  # noqa: SIM115 - close()
        except OSError:
            self._closed = True  # nothing more is written, and close() does not try again
            self._pending.clear()
            raise
        return self._file

    def close(self) -> None:
        """Flush and close (a compressed file gets its gzip trailer; a replay with no line is an empty file).
        Idempotent."""
        if self._closed:
            return
        if _halted[0]:
            self._closed = True
            if self._file is not None:
                self._file.close()
            return
        try:
            self.flush()
            out = self._file if self._file is not None else self._create()
            if self._zip is not None:
                out.write(self._zip.flush(zlib.Z_FINISH))
        finally:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None
