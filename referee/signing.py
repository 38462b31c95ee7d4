"""Tamper evidence: a MAC (HMAC-SHA256) on every replay and results line, under a key the bots cannot reach.

The key is 32 random bytes, made on first use with mode 0600 at ``$XDG_DATA_HOME/koikoi-referee/key`` (by default
``~/.local/share/koikoi-referee/key``), or read from a file given with ``--key FILE``. A sandboxed bot never sees
that directory. A signed line is the JSON object with one more field, ``"mac"``: the hex MAC of the line without
that field, chained to the MAC of the line before it in the same file (so lines can be neither edited, dropped,
reordered nor appended without the key). A file's first line chains to the empty string.

Two forms of "the line without that field": :meth:`Chain.sign` / :meth:`Chain.check` MAC the object's canonical
encoding (keys sorted), for lines that are built and read as objects (``results.jsonl``); :meth:`Chain.sign_line` /
:meth:`Chain.check_line` MAC the exact bytes written, with ``"mac"`` as the last field, so a writer that already has
the encoded line (the replay writer) neither re-encodes nor sorts it. A file uses one form throughout.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import RefereeError

MAC_FIELD = "mac"
KEY_BYTES = 32


class SigningError(RefereeError):
    """A key cannot be made or read, or a line's MAC does not check."""


def default_key_path() -> Path:
    """Where the key lives unless ``--key`` names another file."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "koikoi-referee" / "key"


def load_key(path: Path | None = None, *, create: bool = True) -> bytes | None:
    """The key at ``path`` (default :func:`default_key_path`), made there with mode 0600 when missing and
    ``create``; None when missing and not ``create``. :class:`SigningError` for a key that cannot be read or made."""
    path = path or default_key_path()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if not create:
            return None
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            key = secrets.token_bytes(KEY_BYTES)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(key.hex().encode() + b"\n")
        except FileExistsError:
            return load_key(path, create=False)
        except OSError as exc:
            raise SigningError(f"cannot make the signing key {path}: {exc.strerror or exc}") from None
        return key
    except OSError as exc:
        raise SigningError(f"cannot read the signing key {path}: {exc.strerror or exc}") from None
    try:
        key = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise SigningError(f"{path} is not a signing key (64 hex digits expected)") from None
    if len(key) < 16:
        raise SigningError(f"{path}: a signing key has at least 16 bytes")
    return key


KEY_ID_DIGITS = 16
"""Hex digits of a :func:`key_id`."""


def key_id(key: bytes) -> str:
    """A public name for ``key``: the first :data:`KEY_ID_DIGITS` hex digits of a SHA-256 of it (which tells
    nothing of the key). A signed file that records it says which key signed it, so a check under another key
    can say "signed with a different key" rather than "edited or forged"."""
    return hashlib.sha256(b"koikoi-referee key id\n" + key).hexdigest()[:KEY_ID_DIGITS]


_SIGNED_LINE = re.compile(rb'(?:,|(?<=^\{))"mac":"([0-9a-f]{64})"\}\Z')


def canonical(obj: dict[str, Any]) -> bytes:
    """The bytes a MAC covers: the object without its ``mac`` field, keys sorted, compact, UTF-8."""
    body = {k: v for k, v in obj.items() if k != MAC_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def mac_of(key: bytes, obj: dict[str, Any], previous: str) -> str:
    """The MAC of ``obj`` chained to ``previous`` (the MAC of the line before, "" for a first line)."""
    return hmac.new(key, previous.encode("ascii") + b"\n" + canonical(obj), hashlib.sha256).hexdigest()


def line_mac(key: bytes, body: bytes, previous: str) -> str:
    """The MAC of an encoded JSON object ``body`` (exact bytes) chained to ``previous``."""
    return hmac.new(key, previous.encode("ascii") + b"\n" + body, hashlib.sha256).hexdigest()


def split_signed(line: bytes) -> tuple[bytes, str] | None:
    """A line signed by :meth:`Chain.sign_line` (without its newline) as (the bytes that were signed, the MAC);
    None when the line does not end with a ``"mac"`` field in that form."""
    m = _SIGNED_LINE.search(line)
    if m is None:
        return None
    return line[: m.start()] + b"}", m.group(1).decode("ascii")


@dataclass
class Chain:
    """Signs or checks the lines of one file in order. ``key`` None: nothing is signed or checked."""

    key: bytes | None
    previous: str = ""

    def sign(self, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj`` with its ``mac`` field added (the same object when there is no key)."""
        if self.key is None:
            return obj
        mac = mac_of(self.key, obj, self.previous)
        self.previous = mac
        return {**obj, MAC_FIELD: mac}

    def check(self, obj: dict[str, Any], where: str) -> None:
        """:class:`SigningError` unless ``obj`` carries the MAC that follows the lines checked before it."""
        if self.key is None:
            return
        got = obj.get(MAC_FIELD)
        if not isinstance(got, str):
            raise SigningError(f"{where}: the line is not signed")
        want = mac_of(self.key, obj, self.previous)
        if not hmac.compare_digest(got, want):
            raise SigningError(f"{where}: the signature does not match (edited, moved or forged)")
        self.previous = got

    def sign_line(self, body: str) -> str:
        """The encoded JSON object ``body`` (no newline) with ``"mac"`` added as its last field (``body`` itself
        when there is no key)."""
        if self.key is None:
            return body
        mac = line_mac(self.key, body.encode("utf-8"), self.previous)
        self.previous = mac
        sep = "" if body == "{}" else ","
        return f'{body[:-1]}{sep}"mac":"{mac}"}}'

    def check_line(self, line: bytes, where: str) -> None:
        """:class:`SigningError` unless ``line`` (without its newline), signed by :meth:`sign_line`, carries the
        MAC that follows the lines checked before it."""
        if self.key is None:
            return
        parts = split_signed(line)
        if parts is None:
            raise SigningError(f"{where}: the line is not signed")
        body, got = parts
        if not hmac.compare_digest(got, line_mac(self.key, body, self.previous)):
            raise SigningError(f"{where}: the signature does not match (edited, moved or forged)")
        self.previous = got
