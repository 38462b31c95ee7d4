"""A commitment to a tournament's secret seed, so contestants can check afterwards that the deals were fixed
before the contest.

At the start a tournament records and prints :func:`commit` of its seed: a slow, salted hash (scrypt), so that
the commitment can be published at once without letting anyone search the seed out of it. The seed itself is
published only once the whole run is complete (never on a shard's pages, whose siblings still play on it).
Anyone holding the seed can then check it against the commitment, and every recorded deal against the seed
(:func:`referee.tournament.verify.verify_folder`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac

SALT = b"koikoi-referee/seed-commitment/1"
"""The scrypt salt: fixed, so that the commitment depends on the seed only."""


@functools.lru_cache(maxsize=64)
def commit(seed: int) -> str:
    """The commitment to ``seed``: ``scrypt1:`` and 64 hex digits (scrypt, N 2**14, r 8, p 1; about 0.1 s, so a
    search over many seeds is slow). Kept once worked out: a run states it when it starts, in its report and on
    its pages."""
    digest = hashlib.scrypt(str(seed).encode(), salt=SALT, n=1 << 14, r=8, p=1, maxmem=64 << 20, dklen=32)
    return "scrypt1:" + digest.hex()


def opens(commitment: str, seed: int) -> bool:
    """Whether ``seed`` is the seed ``commitment`` was made to."""
    return hmac.compare_digest(commit(seed), commitment)
