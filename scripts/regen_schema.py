"""Regenerate the golden JSON Schema of the protocol: ``python scripts/regen_schema.py``."""

from __future__ import annotations

from pathlib import Path

from referee.protocol import schema_text

GOLDEN = Path(__file__).resolve().parent.parent / "referee" / "koikoi-1.schema.json"


def main() -> None:
    """Write the schema the code describes over the golden copy."""
    text = schema_text()
    old = GOLDEN.read_text(encoding="utf-8") if GOLDEN.exists() else None
    GOLDEN.write_text(text, encoding="utf-8")
    print(f"{GOLDEN}: {'unchanged' if old == text else 'written'}")


if __name__ == "__main__":
    main()
