"""Build script: the rules engine compiled with mypyc from its own sources when a C compiler works, else pure Python.

Everything else about the package is in ``pyproject.toml``; this file only decides on the engine's extension
modules (the compiled build also builds ``referee/engine/_rollout.c``, the round loop of the search's rollouts in C).
``pip install .``, ``pip install -e .`` and ``pip wheel .`` all come through here:

- ``KOIKOI_PURE_BUILD=1`` at install time forces the pure build;
- without a working C compiler (or Python headers) the build is pure, with a note on stderr and no error;
- a compiled build that fails part-way leaves nothing compiled behind and installs the pure build.

A compiled build also writes ``referee/engine/_compiled.json``: the SHA-256 of each compiled source, so that an
editable install whose sources have changed since the build runs those sources, not stale compiled code, and the
docstrings of the classes that mypyc drops (see :mod:`referee.engine._build`). Compiling takes 15-40 s.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
ENGINE = Path("referee", "engine")
GROUP = "referee.engine._compiled"  # the shared library: referee/engine/_compiled__mypyc.*.so
STAMP = "_compiled.json"
NOT_COMPILED = ("__init__.py", "_build.py")  # the package entry and the build chooser stay Python


def _note(message: str) -> None:
    print(f"koikoi-referee build: {message}", file=sys.stderr)


def engine_sources(root: Path = ROOT) -> list[Path]:
    """The engine modules to compile, relative to ``root``."""
    return sorted(p.relative_to(root) for p in (root / ENGINE).glob("*.py") if p.name not in NOT_COMPILED)


ROLLOUT_C = ENGINE / "_rollout.c"  # the round loop of policies.play_round in C, built with the compiled engine


def source_hashes(root: Path = ROOT) -> dict[str, str]:
    """``{file name: sha256}`` of the engine modules to compile and of the C round loop (what the stamp records)."""
    return {p.name: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in [*engine_sources(root), ROLLOUT_C]}


def class_docstrings(root: Path = ROOT) -> dict[str, str]:
    """``{"module.Class": docstring}`` of the top-level classes of the engine modules to compile."""
    docs: dict[str, str] = {}
    for path in engine_sources(root):
        module = ".".join(path.with_suffix("").parts)
        for node in ast.parse((root / path).read_text(encoding="utf-8")).body:
            doc = ast.get_docstring(node, clean=False) if isinstance(node, ast.ClassDef) else None
            if isinstance(node, ast.ClassDef) and doc is not None:
                docs[f"{module}.{node.name}"] = doc
    return docs


def compiler_works() -> bool:
    """Whether the C compiler that setuptools would use (``CC`` and friends) builds a file that includes Python.h."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler, get_python_inc

    compiler: Any = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text('#include <Python.h>\nint koikoi_probe(void) { return Py_IsInitialized(); }\n')
        try:
            compiler.compile([str(src)], output_dir=tmp, include_dirs=[get_python_inc()])
        except Exception as exc:  # distutils errors come from one of two module copies: catch them all
            _note(f"no working C compiler ({str(exc).strip()[:200]})")
            return False
    return True


def pure_forced() -> bool:
    """Whether ``KOIKOI_PURE_BUILD`` asks for the pure build."""
    return os.environ.get("KOIKOI_PURE_BUILD", "").strip().lower() not in ("", "0", "false", "no")


def engine_extensions() -> list[Extension]:
    """The mypyc extension modules of the engine, or none when the build is pure."""
    if pure_forced():
        _note("KOIKOI_PURE_BUILD is set: pure-Python engine")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _note("mypyc is not installed: pure-Python engine")
        return []
    if not compiler_works():
        _note("pure-Python engine")
        return []
    paths = [str(p) for p in engine_sources()]
    try:
        exts: list[Extension] = mypycify(paths, opt_level="3", group_name=GROUP)
    except (Exception, SystemExit) as exc:  # mypyc reports type errors with SystemExit
        _note(f"mypyc could not compile the engine ({exc!r}): pure-Python engine")
        return []
    return [*exts, Extension("referee.engine._rollout", [str(ROLLOUT_C)], extra_compile_args=["-O2"])]


def remove_inplace_outputs(root: Path = ROOT) -> None:
    """Delete compiled engine modules and the stamp from a source tree (left there by an editable install)."""
    folder = root / ENGINE
    for path in [*folder.glob("*.so"), *folder.glob("*.pyd"), folder / STAMP]:
        path.unlink(missing_ok=True)


class BuildEngine(build_ext):
    """``build_ext`` that writes the stamp, and falls back to the pure engine when compiling fails."""

    def run(self) -> None:
        """Build; on failure drop whatever was built so that the install is the pure engine, whole."""
        try:
            super().run()
        except Exception as exc:  # whatever went wrong, the pure engine installs whole
            _note(f"compiling the engine failed ({exc}): pure-Python engine")
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            if self.inplace:
                remove_inplace_outputs()
            return
        stamp = json.dumps({"sources": source_hashes(), "docstrings": class_docstrings()}, indent=1) + "\n"
        targets = [Path(self.build_lib, ENGINE, STAMP)]
        if self.inplace:  # editable installs import from the source tree
            targets.append(ROOT / ENGINE / STAMP)
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(stamp, encoding="ascii")


class BuildSources(build_py):
    """``build_py`` that, for a pure editable install, removes the compiled modules of an earlier editable build."""

    def run(self) -> None:
        """Copy the sources; an editable pure build must not leave stale compiled modules shadowing them."""
        super().run()
        if getattr(self, "editable_mode", False) and not self.distribution.ext_modules:
            remove_inplace_outputs()
        if not getattr(self, "editable_mode", False):
            copy_house_bots(Path(self.build_lib) / "referee" / "house_bots")


def copy_house_bots(target: Path) -> None:
    """Copy the house bots (``bots/``) into the built package as ``referee/house_bots``, keeping their modes (a
    wheel carries the executable bit); see :mod:`referee.house_bots`. A tree without ``bots/`` builds without."""
    import shutil

    if not (ROOT / "bots").is_dir():
        _note("no bots/ folder: the package ships without the house bots")
        return
    shutil.copytree(ROOT / "bots", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True)

if __name__ == "__main__":
    setup(ext_modules=engine_extensions(), cmdclass={"build_ext": BuildEngine, "build_py": BuildSources})
