"""The replay writer: a ``koikoi-replay/1`` file written line by line as the match goes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from referee import __version__

FORMAT = "koikoi-replay/1"
"""The format name in a replay's header."""
PROTOCOL = "koikoi/1"

_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


class ReplayWriter:
    """Writes one replay, line by line."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] | None = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()

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
    ) -> None:
        """Write the header line (``first_dealer`` 1/2 or None)."""
        self.write({
            "type": "header", "format": FORMAT, "program": f"koikoi-referee {__version__}",
            "protocol": PROTOCOL,
            "match_id": match_id, "created": datetime.now(UTC).isoformat(timespec="seconds"), "rules": rules,
            "seed": seed, "deals": deals, "first_dealer": first_dealer, "bots": bots, "time": time,
        })  # fmt: skip
        self.flush()

    def write(self, obj: dict[str, Any]) -> None:
        """Write one line (flushed at the latest by the next :meth:`flush` or :meth:`close`)."""
        if self._file is not None:
            self._file.write(_dumps(obj) + "\n")

    def write_line(self, line: str) -> None:
        """Write one already-encoded JSON line (without its newline)."""
        if self._file is not None:
            self._file.write(line + "\n")

    def flush(self) -> None:
        """Push the lines written so far to the file."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush and close. Idempotent."""
        if self._file is not None:
            self._file.close()
            self._file = None
