"""Golden playthroughs: the seed -> deal mapping, the rules and the wire format of whole matches are pinned.

After a deliberate change, regenerate with ``python scripts/regen_golden.py`` and review the diff.
"""

from __future__ import annotations

import pytest

from tests.golden_play import MATCHES, dump, golden_path, load, play_golden


@pytest.mark.parametrize(("preset", "seed"), MATCHES)
def test_a_golden_match_plays_the_same_bytes(preset: str, seed: int) -> None:
    path = golden_path(preset, seed)
    want = load(path)
    got = play_golden(preset, seed)
    for key in ("seat1", "seat2", "replay"):
        for i, (w, g) in enumerate(zip(want[key], got[key], strict=False)):
            assert g == w, f"{path.name}: {key} line {i + 1} differs (regenerate with scripts/regen_golden.py)"
        assert len(got[key]) == len(want[key]), f"{path.name}: {key} has {len(got[key])} lines, not {len(want[key])}"
    assert dump(got) == path.read_text(encoding="utf-8")


def test_every_preset_has_golden_matches_that_reach_the_end() -> None:
    for preset in ("guide", "cardavia", "koikoi-japan", "nintendo"):
        files = [golden_path(p, s) for p, s in MATCHES if p == preset]
        assert len(files) >= 3
        for path in files:
            record = load(path)
            assert record["replay"][-1]["type"] == "result"
            assert any('"decision"' in line for line in record["seat1"] + record["seat2"])
            assert record["seat1"][-1] == '{"type":"bye"}'
