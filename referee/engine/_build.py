"""Which engine runs: the mypyc-compiled modules or their Python sources. Always Python, never compiled.

A compiled build (see ``setup.py``) puts an extension module beside each engine source (``state.cpython-311-….so``
beside ``state.py``), and Python's import system prefers the extension module. Importing this module, which the
package's ``__init__`` does before it imports any other engine module, decides: when the pure engine is wanted it puts
a finder first on ``sys.meta_path`` that loads each ``referee.engine.<module>`` from its ``.py`` source. The pure
engine is wanted when

- ``KOIKOI_PURE_ENGINE=1`` is set (to test both builds, or to compare them in ``benchmarks/engine.py``), or
- the compiled build is stale: a source differs from what was compiled, according to the stamp ``_compiled.txt``
  written by the build (an editable install after an edit or a checkout). Reinstalling compiles again.

mypyc drops class docstrings; :func:`restore_docstrings` puts back those of the Python classes (enums, named tuples)
from the stamp, so that help and the protocol's JSON Schema read the same in both builds.

Both builds behave the same; only their speed differs. :func:`engine_build` says which one is running.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from types import ModuleType

PURE_ENV = "KOIKOI_PURE_ENGINE"
"""Environment variable: set to 1 to run the engine from its Python sources even when a compiled build exists."""

COMPILED = "compiled mypyc"
PURE = "pure Python"
STAMP = "_compiled.json"

_FOLDER = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = __name__.rpartition(".")[0]


class SourceFinder(importlib.abc.MetaPathFinder):
    """Finds each engine module as its ``.py`` source, passing over any compiled module beside it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The source spec of ``referee.engine.<name>``; None for every other module."""
        package, _, name = fullname.rpartition(".")
        source = os.path.join(_FOLDER, name + ".py")
        if package != _PACKAGE or not os.path.isfile(source):
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def pure_forced() -> bool:
    """Whether ``KOIKOI_PURE_ENGINE`` asks for the pure engine."""
    return os.environ.get(PURE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _stamp() -> dict[str, dict[str, str]]:
    """What the compiled build recorded: ``sources`` (file: sha256) and ``docstrings``; empty without one."""
    try:
        with open(os.path.join(_FOLDER, STAMP), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stale_sources() -> list[str]:
    """The compiled sources that changed since the build (none when there is no compiled build)."""
    stale: list[str] = []
    for name, digest in _stamp().get("sources", {}).items():
        try:
            with open(os.path.join(_FOLDER, name), "rb") as f:
                same = hashlib.sha256(f.read()).hexdigest() == digest
        except OSError:
            same = False
        if not same:
            stale.append(name)
    return stale


def _choose() -> str:
    """Install the source finder when the pure engine is wanted; why, or "" when the compiled build may run."""
    if pure_forced():
        reason = f"{PURE_ENV} is set"
    else:
        stale = stale_sources()
        if not stale:
            return ""
        reason = f"the compiled build is out of date ({', '.join(stale)} changed): reinstall to compile again"
    if not any(isinstance(f, SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, SourceFinder())
    return reason


PURE_REASON = _choose()
"""Why the sources run although a compiled build may exist ("" when nothing stood in its way)."""


def restore_docstrings() -> None:
    """Give the compiled engine's Python classes back the docstrings that mypyc replaced (no-op when pure)."""
    if engine_build() == PURE:
        return
    for qualname, doc in _stamp().get("docstrings", {}).items():
        module_name, _, name = qualname.rpartition(".")
        cls = getattr(sys.modules.get(module_name), name, None)
        if isinstance(cls, type) and cls.__doc__ == "mypyc filler docstring":
            cls.__doc__ = doc


def engine_build() -> str:
    """``"compiled mypyc"`` when the engine modules imported are compiled, ``"pure Python"`` when none is."""
    loaded = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith(_PACKAGE + ".") and name.count(".") == _PACKAGE.count(".") + 1 and name != __name__
    ]
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    compiled = [m for m in loaded if str(getattr(m, "__file__", "") or "").endswith(suffixes)]
    if not compiled:
        return PURE
    return COMPILED if len(compiled) == len(loaded) else f"partly {COMPILED}"
