"""Imports go downward only: engine -> protocol -> seats -> match -> tournament -> cli, read from the source with
``ast`` (imports inside functions and under ``TYPE_CHECKING`` count too).

Beside the order of the layers, two contracts: the engine imports nothing else of the package, and the tournament
and the learning environments use the bot process layer through its package (``referee.seats.process``), never
its modules (``referee.seats.process.pipe`` and the like), which are free to change.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "referee"

ABOVE_ALL = ("referee.cli", "referee.commands", "referee.api")
"""The command line and the public API: nothing under them imports them."""
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "referee.protocol": ("referee.seats", "referee.match", "referee.replay", "referee.tournament", "referee.rl",
                         *ABOVE_ALL),
    "referee.seats": ("referee.match", "referee.replay", "referee.tournament", "referee.rl", *ABOVE_ALL),
    "referee.replay": ("referee.seats", "referee.match", "referee.tournament", "referee.rl", *ABOVE_ALL),
    "referee.match": ("referee.tournament", "referee.rl", *ABOVE_ALL),
    "referee.tournament": ("referee.rl", "referee.seats.process.", *ABOVE_ALL),
    "referee.rl": ("referee.tournament", "referee.seats.process.", *ABOVE_ALL),
}  # fmt: skip
"""For each package (and the modules under it), the modules it must not import. A name ending in a dot forbids
the modules under a package, not the package itself."""


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` in the package whose folder is ``root``."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``; ``from M import N`` counts as importing ``M.N``
    when ``N`` is a module or package under ``root``, else as importing ``M``."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                is_module = _source_of(sub, root) is not None
                out.append((node.lineno, sub if is_module else module))
    return out


def _source_of(module: str, root: Path) -> Path | None:
    """The file or package folder of ``module`` under ``root``, if there is one."""
    parts = module.split(".")
    if parts[0] != root.name:
        return None
    where = root.joinpath(*parts[1:])
    for candidate in (where.with_suffix(".py"), where / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _within(module: str, prefix: str) -> bool:
    """True when ``module`` is ``prefix`` or under it; a ``prefix`` ending in a dot matches only the modules under
    that package."""
    if prefix.endswith("."):
        return module.startswith(prefix)
    return module == prefix or module.startswith(prefix + ".")


def upward_imports(root: Path) -> list[str]:
    """``module:line: import name`` for each import in the package folder ``root`` (a ``referee``) that breaks
    the layering."""
    bad: list[str] = []
    for path in sorted(root.rglob("*.py")):
        here = module_name(path, root)
        forbidden = [p for owner, rule in FORBIDDEN.items() if _within(here, owner) for p in rule]
        for line, module in imported(path, root):
            if _within(here, "referee.engine"):
                wrong = _within(module, "referee") and not _within(module, "referee.engine")
            else:
                wrong = any(_within(module, p) for p in forbidden)
            if wrong:
                bad.append(f"{here}:{line}: import {module}")
    return bad


def test_the_package_imports_only_downward() -> None:
    bad = upward_imports(PACKAGE)
    assert not bad, "\n".join(bad)


def test_every_layer_of_the_table_exists() -> None:
    for owner in FORBIDDEN:
        assert _source_of(owner, PACKAGE) is not None, owner
    assert _source_of("referee.seats.process", PACKAGE) is not None


def _copy(tmp_path: Path, extra: dict[str, str]) -> Path:
    """A copy of the package's modules, all empty, with the given modules written in."""
    root = tmp_path / "referee"
    for path in PACKAGE.rglob("*.py"):
        target = root / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("")
    for name, text in extra.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


@pytest.mark.parametrize(
    ("module", "source", "found"),
    [
        ("tournament/x.py", "from referee.seats.process.pipe import read_line\n",
         "referee.tournament.x:1: import referee.seats.process.pipe"),
        ("tournament/x.py", "from referee.seats.process import pipe\n",
         "referee.tournament.x:1: import referee.seats.process.pipe"),
        ("tournament/x.py", "def f():\n    from ..seats.process import pipe\n",
         "referee.tournament.x:2: import referee.seats.process.pipe"),
        ("rl/x.py", "import referee.seats.process.pipe\n", "referee.rl.x:1: import referee.seats.process.pipe"),
        ("protocol/x.py", "from referee.seats import base\n", "referee.protocol.x:1: import referee.seats.base"),
        ("protocol/x.py", "from referee import match\n", "referee.protocol.x:1: import referee.match"),
        ("engine/x.py", "from referee.errors import RefereeError\n", "referee.engine.x:1: import referee.errors"),
        ("engine/x.py", "from .. import protocol\n", "referee.engine.x:1: import referee.protocol"),
        ("seats/x.py", "from referee.cli import app\n", "referee.seats.x:1: import referee.cli"),
        ("match.py", "from referee.tournament import Store\n", "referee.match:1: import referee.tournament"),
    ],
)  # fmt: skip
def test_the_checker_sees_an_upward_import(tmp_path: Path, module: str, source: str, found: str) -> None:
    assert upward_imports(_copy(tmp_path, {module: source})) == [found]


def test_the_checker_allows_the_downward_imports(tmp_path: Path) -> None:
    allowed = {
        "tournament/x.py": "from referee.seats.process import BotProcess\nfrom referee.seats import process\n"
                           "from referee.match import play_match\nfrom referee.engine import PRESETS\n",
        "protocol/x.py": "from referee.engine import State\nfrom referee import errors, records\n",
        "engine/x.py": "from .cards import CARD_IDS\nimport json\nfrom referee.engine.rules import Rules\n",
        "seats/x.py": "from referee.seats.process.pipe import read_line\nfrom ..protocol import models\n",
        "cli.py": "from referee.tournament import Store\nfrom referee.rl import serve\n",
    }  # fmt: skip
    assert upward_imports(_copy(tmp_path, allowed)) == []
