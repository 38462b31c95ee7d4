"""Which build of koikoi-referee is running: the version and whether the rules engine is compiled.

``koikoi-referee --version`` prints :func:`version_line`; a replay header can record :func:`build_info`.
"""

from __future__ import annotations

from referee import __version__
from referee.engine import _build


def engine_build() -> str:
    """``"compiled mypyc"`` or ``"pure Python"``: how the rules engine running in this process was built."""
    return _build.engine_build()


def build_info() -> dict[str, str]:
    """``{"version": "0.1.0", "engine": "compiled mypyc"}``: what a replay header records about the referee."""
    return {"version": __version__, "engine": engine_build()}


def version_line() -> str:
    """``koikoi-referee 0.1.0 (engine: compiled mypyc)``, and why the sources run when a compiled build is set aside."""
    why = f"; {_build.PURE_REASON}" if _build.PURE_REASON else ""
    return f"koikoi-referee {__version__} (engine: {engine_build()}{why})"
