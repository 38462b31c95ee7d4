"""docs/api.md and docs/rl.md: every ```python block runs, in order, from the repository's root, and the public
API (``referee.api.__all__``) is exactly what docs/api.md documents."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

import referee.api
from tests.helpers import ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def blocks(name: str) -> list[str]:
    """The Python examples of a page, in order."""
    return BLOCK.findall((ROOT / "docs" / name).read_text(encoding="utf-8"))


def run_page(name: str) -> dict[str, object]:
    """Execute a page's examples in one namespace from the repository's root."""
    namespace: dict[str, object] = {"__name__": f"docs_{name.split('.')[0]}"}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for k, code in enumerate(blocks(name), 1):
            exec(compile(code, f"docs/{name} example {k}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    return namespace


@pytest.mark.slow
def test_the_api_page_examples_run() -> None:
    assert len(blocks("api.md")) >= 5
    namespace = run_page("api.md")
    assert namespace["result"].forfeit is None  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("numpy", "gymnasium", "pettingzoo")),
    reason="the rl extra is not installed: pip install 'koikoi-referee[rl]'",
)
def test_the_rl_page_examples_run() -> None:
    assert len(blocks("rl.md")) >= 3
    run_page("rl.md")


def test_every_public_name_is_documented_and_nothing_else_is_exported() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for name in referee.api.__all__:
        assert f"`{name}" in text, f"referee.api.{name} is exported but not in docs/api.md"
    public = {n for n in vars(referee.api) if not n.startswith("_")}
    assert public == set(referee.api.__all__), public ^ set(referee.api.__all__)


def test_the_bot_example_plays_as_a_program(tmp_path: Path) -> None:
    (code,) = [b for b in blocks("api.md") if "from referee.bot import run" in b]
    bot = tmp_path / "my_bot.py"
    bot.write_text(code, encoding="utf-8")
    from referee.api import PRESETS, Limits, MatchConfig, TimeControl, run_match

    config = MatchConfig(PRESETS["cardavia"], seed=4, time=TimeControl(60_000, 30_000, 120_000))
    # No sandbox: the example lives in the test's folder.
    result = run_match((f"{sys.executable} {bot}", str(ROOT / "bots" / "greedy_bot.py")), config,
                       limits=Limits(sandbox="none"))  # fmt: skip
    assert result.forfeit is None and result.names[0] == "first-capture"


@pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason="the rl extra is not installed")
def test_the_observation_table_of_docs_rl_is_the_codes() -> None:
    from referee.rl.observation import FIELDS

    text = (ROOT / "docs" / "rl.md").read_text(encoding="utf-8")
    section = text[text.index("## The observation") : text.index("## One seat against")]
    spans = []
    for first, last in re.findall(r"^\| (\d+)(?:\.\.(\d+))? \|", section, re.M):
        spans.append((int(first), int(last or first) + 1))
    assert spans == [(start, stop) for _, start, stop in FIELDS]
