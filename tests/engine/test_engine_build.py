"""The engine's two builds: mypyc-compiled when a C compiler works, pure Python otherwise or on request.

These tests hold for either install: the compiled one (``make test``'s set-up on a machine with a compiler) and the
pure one. Tests that need a compiled build skip without one; the Makefile prints which engine the suite ran on.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import referee.engine
from referee import __version__
from referee.engine import _build
from tests.helpers import ROOT

ENGINE_DIR = Path(referee.engine.__file__).parent
COMPILED_BUILD = (ENGINE_DIR / _build.STAMP).is_file()
SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)

PROBE = """
import json, sys
import referee.engine
from referee.build_info import engine_build
files = {n: getattr(m, "__file__", "") for n, m in sys.modules.items() if n.startswith("referee.engine.")}
print(json.dumps({"build": engine_build(), "files": files}))
"""

DIGEST = """
import hashlib, random
from referee.engine import PRESETS, apply, legal_actions, new_match
from referee.protocol import full_event_json as full_event
from referee.engine.simulate import random_playout
h = hashlib.sha256()
for name in sorted(PRESETS):
    for seed in range(12):
        state, rng = new_match(PRESETS[name], seed), random.Random(seed)
        while not state.is_over:
            state = apply(state, rng.choice(legal_actions(state)))
            h.update(repr([full_event(e) for e in state.events]).encode())
        h.update(repr((state.scores, state.winner, state.history)).encode())
        end, steps = random_playout(new_match(PRESETS[name], seed), random.Random(seed))
        h.update(repr((end.scores, end.winner, end.history, steps)).encode())
print(h.hexdigest())
"""


def run_python(code: str, *, pure: bool) -> str:
    """Run ``code`` in a fresh interpreter with the pure engine forced or not; its stdout."""
    env = {k: v for k, v in os.environ.items() if k != _build.PURE_ENV}
    if pure:
        env[_build.PURE_ENV] = "1"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def probe(*, pure: bool) -> dict[str, object]:
    """Which build a fresh interpreter runs, and the file of each engine module it imported."""
    result: dict[str, object] = json.loads(run_python(PROBE, pure=pure))
    return result


def test_the_pure_switch_loads_every_engine_module_from_its_source() -> None:
    seen = probe(pure=True)
    assert seen["build"] == _build.PURE
    files = seen["files"]
    assert isinstance(files, dict) and {"referee.engine.state", "referee.engine.yaku"} <= set(files)
    for name, file in files.items():
        assert str(file).endswith(".py"), f"{name} came from {file}"


@pytest.mark.skipif(not COMPILED_BUILD, reason="no compiled build installed (KOIKOI_PURE_BUILD or no C compiler)")
def test_a_compiled_build_is_the_engine_imported() -> None:
    assert not _build.stale_sources(), "compiled engine older than its sources: pip install -e ."
    seen = probe(pure=False)
    assert seen["build"] == _build.COMPILED
    files = seen["files"]
    assert isinstance(files, dict)
    for name in ("cards", "rules", "yaku", "actions", "deal", "state", "views", "events", "errors"):
        assert str(files[f"referee.engine.{name}"]).endswith(SUFFIXES), files


@pytest.mark.slow
def test_both_builds_play_the_same_matches() -> None:
    """Random matches of every preset, event by event: the compiled engine (if built) equals the pure one."""
    assert run_python(DIGEST, pure=False) == run_python(DIGEST, pure=True)


@pytest.mark.slow
@pytest.mark.parametrize("pure", [False, True])
def test_version_says_which_engine_runs(pure: bool) -> None:
    exe = Path(sys.executable).with_name("koikoi-referee")
    env = {k: v for k, v in os.environ.items() if k != _build.PURE_ENV} | ({_build.PURE_ENV: "1"} if pure else {})
    out = subprocess.run([str(exe), "--version"], env=env, capture_output=True, text=True, check=True).stdout
    if pure:
        assert out == f"koikoi-referee {__version__} (engine: pure Python; KOIKOI_PURE_ENGINE is set)\n"
    else:
        build = _build.COMPILED if COMPILED_BUILD else _build.PURE
        assert out == f"koikoi-referee {__version__} (engine: {build})\n"


def test_a_stale_stamp_names_the_changed_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "same.py").write_text("x = 1\n")
    (tmp_path / "edited.py").write_text("x = 2\n")
    digest = hashlib.sha256(b"x = 1\n").hexdigest()
    stamp = {"sources": {"same.py": digest, "edited.py": digest, "gone.py": digest}, "docstrings": {}}
    (tmp_path / _build.STAMP).write_text(json.dumps(stamp))
    monkeypatch.setattr(_build, "_FOLDER", str(tmp_path))
    assert _build.stale_sources() == ["edited.py", "gone.py"]
    (tmp_path / _build.STAMP).unlink()
    assert _build.stale_sources() == []  # no compiled build: nothing to be stale


def _setup_module() -> ModuleType:
    pytest.importorskip("setuptools")  # in the virtual environment of Python 3.11; not in every newer one
    spec = importlib.util.spec_from_file_location("koikoi_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines the build's functions, builds nothing
    return module


def test_the_build_chooses_pure_without_a_compiler_or_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _setup_module()
    monkeypatch.delenv("KOIKOI_PURE_BUILD", raising=False)
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert not setup.compiler_works()
    assert setup.engine_extensions() == []
    monkeypatch.delenv("CC")
    monkeypatch.setenv("KOIKOI_PURE_BUILD", "1")
    assert setup.engine_extensions() == []
    names = [p.name for p in setup.engine_sources()]
    assert "state.py" in names and "__init__.py" not in names and "_build.py" not in names


@pytest.mark.skipif(not os.environ.get("CI"), reason="in CI only: a developer may install the pure build on purpose")
def test_ci_tests_the_compiled_engine_where_a_compiler_works() -> None:
    setup = _setup_module()
    if setup.pure_forced():
        pytest.skip("KOIKOI_PURE_BUILD is set")
    assert COMPILED_BUILD or not setup.compiler_works(), "a C compiler works but the engine was not compiled"


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_build_sees_a_working_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CC", raising=False)
    assert _setup_module().compiler_works()


@pytest.mark.slow
def test_a_build_without_a_compiler_succeeds_pure(tmp_path: Path) -> None:
    """``setup.py build`` with a compiler that does not exist: exit 0, a note, the sources and no extension."""
    pytest.importorskip("setuptools")
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "referee", tmp_path / "referee", ignore=shutil.ignore_patterns("*.so", "_compiled.json"))
    env = {k: v for k, v in os.environ.items() if k != "KOIKOI_PURE_BUILD"} | {"CC": "/nonexistent/cc"}
    proc = subprocess.run(
        [sys.executable, "setup.py", "-q", "build", "--build-base", str(tmp_path / "b")],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "no working C compiler" in proc.stderr and "pure-Python engine" in proc.stderr
    built = tmp_path / "b" / "lib" / "referee" / "engine"
    assert (built / "state.py").is_file()
    assert not [p for p in (tmp_path / "b").rglob("*") if p.suffix in (".so", ".pyd")]


PICKLE = """
import copy, json, pickle, random
from referee.engine import PRESETS, apply, legal_actions, new_match, observe, score, shuffled_deal
state, rng = new_match(PRESETS["koikoi-japan"], 5), random.Random(5)
while len(state.history) < 2:
    state = apply(state, rng.choice(legal_actions(state)))
things = [PRESETS["guide"], shuffled_deal(3, 1), state, state.history[0], state.events[0],
          score(state.captured[0] | state.captured[1], PRESETS["guide"], 1), observe(state, 0), observe(state, 1)]
kinds = {}  # one event of every kind random matches make, under every preset
for rules in PRESETS.values():
    for seed in range(12):
        s = new_match(rules, seed)
        while True:
            for e in s.events:
                kinds.setdefault(type(e).__name__, e)
            if s.is_over:
                break
            s = apply(s, rng.choice(legal_actions(s)))
things += [kinds[k] for k in sorted(kinds)]
out = []
for thing in things:
    for clone in (pickle.loads(pickle.dumps(thing)), copy.copy(thing), copy.deepcopy(thing)):
        out.append(repr(clone) == repr(thing) and type(clone) is type(thing))
back = pickle.loads(pickle.dumps(state))
out.append(legal_actions(back) == legal_actions(state) and back.hands == state.hands and back.rules == state.rules)
print(json.dumps({"kinds": sorted(kinds), "out": out}))
"""


@pytest.mark.parametrize("pure", [False, True])
def test_engine_values_pickle_and_copy_in_either_build(pure: bool) -> None:
    """Rules, deals, states, round results, views, events of every kind and scores survive pickle, copy and
    deepcopy (a compiled build cannot restore a record field by field: the records say how to rebuild
    themselves)."""
    results = json.loads(run_python(PICKLE, pure=pure))
    kinds = set(results["kinds"])
    assert {"Play", "Draw", "DrawCapture", "YakuMade", "KoikoiDecision", "RoundEnd", "MatchEnd"} <= kinds
    out = results["out"]
    assert len(out) == 3 * (8 + len(results["kinds"])) + 1 and all(out), out


SEEDS = """
import json
import numpy as np
from referee.engine import PRESETS, new_match
rules = PRESETS["guide"]
out = [new_match(rules, np.int64(5)).hands == new_match(rules, 5).hands,
       new_match(rules, True).hands == new_match(rules, 1).hands]
for bad in (None, "5", 1.5):
    try:
        new_match(rules, bad)
        out.append(False)
    except TypeError:
        out.append(True)
print(json.dumps(out))
"""


@pytest.mark.parametrize("pure", [False, True])
def test_a_seed_is_any_integer_and_nothing_else_in_either_build(pure: bool) -> None:
    pytest.importorskip("numpy", reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'")
    assert json.loads(run_python(SEEDS, pure=pure)) == [True] * 5
