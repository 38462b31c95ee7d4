"""The engine imports the standard library and itself, nothing else (no I/O frameworks, no pydantic)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import referee.engine

ENGINE_DIR = Path(referee.engine.__file__).parent


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a module of the engine package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside the engine package by construction
                out.append((node.lineno, "referee.engine"))
            else:
                out.append((node.lineno, node.module or ""))
    return out


def test_engine_modules_exist() -> None:
    names = {p.stem for p in ENGINE_DIR.glob("*.py")}
    assert {"__init__", "cards", "rules", "yaku", "state", "views"} <= names


def foreign_imports(root: Path) -> list[str]:
    """``file:line: import module`` for each import under ``root`` from outside the stdlib and the engine."""
    bad: list[str] = []
    for path in sorted(root.rglob("*.py")):
        for line, module in _imports(path):
            if module == "referee.engine" or module.startswith("referee.engine."):
                continue
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            bad.append(f"{path.name}:{line}: import {module}")
    return bad


def test_the_engine_imports_only_the_standard_library() -> None:
    bad = foreign_imports(ENGINE_DIR)
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_foreign_import(tmp_path: Path) -> None:
    (tmp_path / "sample.py").write_text(
        "import os, json\nfrom pydantic import BaseModel\nfrom referee.match import x\n"
        "from . import cards\nimport referee.engine.cards\nfrom referee import errors\n"
    )
    assert foreign_imports(tmp_path) == [
        "sample.py:2: import pydantic",
        "sample.py:3: import referee.match",
        "sample.py:6: import referee",
    ]


def test_the_engine_builds_no_wire_messages() -> None:
    """The engine decides what a seat may see and returns typed values (seats 0/1); ``referee.protocol`` alone
    spells the wire (seats 1/2, card ids, message dicts)."""
    from referee.engine import (
        PRESETS,
        Action,
        RoundStart,
        SeatRoundStart,
        View,
        new_match,
        observe,
        visible_event,
    )

    assert not hasattr(View, "to_json") and not hasattr(Action, "to_json")
    for name in ("action_from_json", "full_event", "public_event"):
        assert not hasattr(referee.engine, name), name
    state = new_match(PRESETS["guide"], 1)
    deal = next(e for e in state.events if isinstance(e, RoundStart))
    seen = visible_event(deal, 1)
    assert isinstance(seen, SeatRoundStart) and seen.hand == deal.hands[1] and seen.dealer == deal.dealer
    assert isinstance(observe(state, 0), View)
    for path in sorted(ENGINE_DIR.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert '"type"' not in text and '"event"' not in text and '"seat"' not in text, f"{path.name} spells wire"
