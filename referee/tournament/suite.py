"""Deal suites: fixed deal sequences a tournament plays in order, like an openings book.

A suite file is JSON lines; each line is one deal sequence, a JSON array of deals in the form of ``play --deals``
(``{"hands": [[8 ids], [8 ids]], "field": [8 ids], "stock": [24 ids]}``), or a single deal object (a sequence
of one). Deal pair ``k`` of every pairing plays sequence ``k`` modulo the suite's length: both of its games
open with that sequence's deals, one per round (a misdeal takes the next), then the pair's shuffle goes on.

:func:`generate` writes a suite from a seed (secret unless given), each deal a uniform shuffle.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path

from referee.engine import Deal, DealError, shuffled_deal
from referee.errors import UsageError

MAX_SEQUENCES = 100_000
"""The most deal sequences a suite may hold."""
MAX_LENGTH = 64
"""The most deals one sequence may hold."""

Suite = tuple[tuple[Deal, ...], ...]
"""Deal sequences, each a tuple of deals."""


class SuiteError(UsageError):
    """A deal suite that cannot be read or is malformed."""


def parse_suite(lines: list[str], source: str) -> Suite:
    """The deal sequences of ``lines`` (blank lines skipped); :class:`SuiteError` naming the bad line."""
    out: list[tuple[Deal, ...]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            raise SuiteError(f"{source}: line {n}: not a JSON line") from None
        items = data if isinstance(data, list) else [data]
        if not items or len(items) > MAX_LENGTH or not all(isinstance(d, dict) for d in items):
            raise SuiteError(f"{source}: line {n}: expected a deal object or an array of 1 to {MAX_LENGTH} deals")
        try:
            seq = tuple(Deal.from_json(d) for d in items)
        except DealError as exc:
            raise SuiteError(f"{source}: line {n}: {exc}") from None
        if len(set(seq)) != len(seq):
            raise SuiteError(f"{source}: line {n}: a deal repeats within the sequence: a bot would see it twice")
        out.append(seq)
        if len(out) > MAX_SEQUENCES:
            raise SuiteError(f"{source}: more than {MAX_SEQUENCES} deal sequences")
    if not out:
        raise SuiteError(f"{source}: no deal sequence in the file")
    return tuple(out)


def load_suite(path: Path) -> Suite:
    """The suite in the file ``path``; :class:`SuiteError` (about the setting ``deals``) if it cannot be read or
    is malformed."""
    try:
        text = path.read_text(encoding="utf-8")
        return parse_suite(text.splitlines(), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise SuiteError.about("deals", f"{{}} {path}: cannot read: {why}") from None
    except SuiteError as exc:
        raise SuiteError.about("deals", f"{{}} {exc}") from None


def sequence_seed(seed: int, index: int) -> int:
    """The shuffle seed of sequence ``index`` of a suite generated from ``seed``: 63 bits of SHA-256."""
    digest = hashlib.sha256(f"koikoi-suite/{seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def generate(count: int, length: int, seed: int | None = None) -> tuple[Suite, bool]:
    """``count`` sequences of ``length`` shuffled deals from ``seed`` (drawn at random when None); returns the
    suite and whether the seed was drawn."""
    if not 1 <= count <= MAX_SEQUENCES:
        raise SuiteError.about("count", f"{{}} {count}: choose 1 to {MAX_SEQUENCES}")
    if not 1 <= length <= MAX_LENGTH:
        raise SuiteError.about("length", f"{{}} {length}: choose 1 to {MAX_LENGTH}")
    drawn = seed is None
    base = secrets.randbits(64) if seed is None else seed
    return tuple(tuple(shuffled_deal(sequence_seed(base, k), j) for j in range(length)) for k in range(count)), drawn


def suite_lines(suite: Suite) -> str:
    """The file form of ``suite``: one JSON array of deals per line."""
    return "".join(json.dumps([d.to_json() for d in seq], separators=(",", ":")) + "\n" for seq in suite)
