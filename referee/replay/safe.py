"""Text from a replay file made safe for a terminal: no escape sequence, control or bidi character gets through."""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]"
)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every C0/C1 control character (ESC, so CSI and OSC sequences, BEL, newlines), DEL, bidi
    override or isolate, zero-width and line-separator character replaced by a visible ``\\xNN`` / ``\\uNNNN``."""
    return _UNSAFE.sub(_escape, text)
