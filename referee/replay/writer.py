"""The replay writer: a ``koikoi-replay/1`` file written line by line as the match goes.

Every line reaches the file whole as soon as it is written (the file is line-buffered), so a referee killed
mid-match leaves a valid prefix. With a key, every line carries a ``"mac"`` field chained to the line before
(:meth:`referee.signing.Chain.sign_line`), so an edited, dropped, reordered or appended line is detected by
:func:`referee.replay.verify` under the same key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from referee import __version__
from referee.signing import Chain

FORMAT = "koikoi-replay/1"
"""The format name in a replay's header."""
PROTOCOL = "koikoi/1"
"""The bot protocol a replay's match was played with."""

_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


class ReplayWriter:
    """Writes one replay, line by line; with ``key``, signs every line (no key: unsigned, as before)."""

    def __init__(self, path: Path, *, key: bytes | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._chain = Chain(key)
        self._file: IO[str] | None = open(path, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 - close()

    @property
    def signed(self) -> bool:
        """True when the lines carry a MAC."""
        return self._chain.key is not None

    def header(
        self,
        *,
        match_id: str,
        rules: dict[str, Any],
        seed: int,
        deals: list[dict[str, Any]],
        first_dealer: int | None,
        bots: list[dict[str, Any]],
        time: dict[str, int],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Write the header line (``first_dealer`` 1/2 or None). ``extra``: further header fields (for example
        how the bots were sandboxed); readers keep fields they do not know in :attr:`Header.extra`."""
        line: dict[str, Any] = dict(extra or {})
        line.update({
            "type": "header", "format": FORMAT, "program": f"koikoi-referee {__version__}",
            "protocol": PROTOCOL,
            "match_id": match_id, "created": datetime.now(UTC).isoformat(timespec="seconds"), "rules": rules,
            "seed": seed, "deals": deals, "first_dealer": first_dealer, "bots": bots, "time": time,
        })  # fmt: skip
        self.write(line)

    def write(self, obj: dict[str, Any]) -> None:
        """Write one line (a JSON object); it reaches the file at once."""
        self.write_line(_dumps(obj))

    def write_line(self, line: str) -> None:
        """Write one already-encoded JSON object line (without its newline)."""
        if self._file is not None:
            self._file.write(self._chain.sign_line(line) + "\n")

    def flush(self) -> None:
        """Push the lines written so far to the file (each line already is; kept for callers)."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush and close. Idempotent."""
        if self._file is not None:
            self._file.close()
            self._file = None
