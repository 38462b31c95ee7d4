"""Write the golden playthroughs in tests/golden/ again (after a deliberate change of rules, shuffle or wire)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for the tests package

from tests.golden_play import GOLDEN_DIR, MATCHES, dump, golden_path, play_golden


def main() -> None:
    """Play every golden match and write its file."""
    GOLDEN_DIR.mkdir(exist_ok=True)
    for preset, seed in MATCHES:
        path = golden_path(preset, seed)
        path.write_text(dump(play_golden(preset, seed)), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
