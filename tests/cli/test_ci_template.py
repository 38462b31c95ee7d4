"""The CI template for a bot's own repository (``examples/ci-workflow.yml``), run here: every ``run:`` step of
every job, in the order the jobs need each other, in a folder that holds only a bot (and the base branch's copy
of it, as the template's second checkout puts it), with the referee installed and nothing of its repository.

The GitHub actions (checkout, upload and download of artifacts) are done by hand as the runner would; the install
steps are checked (``apt-get update`` before ``apt-get install``) but not run (no network here); the rules and
pair counts are the template's own variables, set small.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

WORKFLOW = ROOT / "examples" / "ci-workflow.yml"
SMALL = {"RULES": "cardavia", "SPRT_PAIRS": "3", "GAUNTLET_PAIRS": "2"}


REPEATABLE = {  # a drawn seed and an unseeded random bot would make the gates' verdict a matter of luck here
    "secrets.randbits(52)": "20261201",
    '"random=$(koikoi-referee bots --path random)"': '"random=$(koikoi-referee bots --path random) --seed 1"',
}


def _expand(text: str, temp: Path, shard: int | None) -> str:
    for drawn, fixed in REPEATABLE.items():
        text = text.replace(drawn, fixed)
    text = text.replace("${{ runner.temp }}", str(temp))
    if shard is not None:
        text = text.replace("${{ matrix.shard }}", str(shard))
    assert "${{" not in text, text  # every expression the runner fills in is one of the above
    return text


def _run_job(job: dict[str, Any], repo: Path, env: dict[str, str], temp: Path, shard: int | None = None) -> None:
    for step in job["steps"]:
        uses = step.get("uses", "")
        if uses.startswith("actions/upload-artifact") and step["with"]["name"] == "gauntlet-secrets":
            shutil.copytree(repo / "secrets", temp / "artifact-secrets", dirs_exist_ok=True)
        elif uses.startswith("actions/download-artifact") and step["with"].get("name") == "gauntlet-secrets":
            target = Path(_expand(step["with"]["path"], temp, shard))
            shutil.copytree(temp / "artifact-secrets", target, dirs_exist_ok=True)
        if "run" not in step:
            continue  # checkout, setup-python, other artifacts: the folder is already as they leave it
        script = _expand(step["run"], temp, shard)
        if "pip install" in script:
            lines = [line.strip() for line in script.splitlines()]
            installs = [k for k, line in enumerate(lines) if "apt-get install" in line]
            updates = [k for k, line in enumerate(lines) if "apt-get update" in line]
            assert all(updates and min(updates) < k for k in installs), script
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
        assert proc.returncode == 0, f"{step.get('name', script)}:\n{proc.stdout}\n{proc.stderr}"


def test_the_ci_template_runs_in_a_folder_that_holds_only_a_bot(tmp_path: Path) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    text = WORKFLOW.read_text()
    assert "examples/" not in text and "bots/" not in text  # nothing of the referee's repository is named
    repo, temp = tmp_path / "my-bot", tmp_path / "runner-temp"
    repo.mkdir()
    temp.mkdir()
    shutil.copy(ROOT / "bots" / "greedy_bot.py", repo / "bot.py")  # the bot of this repository
    (repo / "baseline").mkdir()
    shutil.copy(ROOT / "bots" / "greedy_bot.py", repo / "baseline" / "bot.py")  # its base branch, checked out
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"), "RUNNER_TEMP": str(temp),
        **{k: str(v) for k, v in workflow["env"].items()}, **SMALL,
    }  # fmt: skip
    jobs = workflow["jobs"]
    _run_job(jobs["sprt"], repo, env, temp)
    sprt = json.loads((repo / "sprt-standings.json").read_text())
    assert {r["name"] for r in sprt["standings"]} == {"candidate", "baseline"} and sprt["sprt"] is not None
    _run_job(jobs["gauntlet-secrets"], repo, env, temp)
    for shard in jobs["gauntlet"]["strategy"]["matrix"]["shard"]:
        _run_job(jobs["gauntlet"], repo, env, temp, shard)
    _run_job(jobs["gauntlet-result"], repo, env, temp)
    merged = json.loads((repo / "gauntlet-results" / "standings.json").read_text())
    assert merged["complete"] is True and {r["name"] for r in merged["standings"]} == {"candidate", "greedy", "random"}
    assert all("candidate" in (p["first"], p["second"]) for p in merged["pairings"])
    assert merged["matches"] == 2 * 2 * int(SMALL["GAUNTLET_PAIRS"])  # two pairings of whole pairs, none lost
    assert re.fullmatch(r"\d+", merged["seed"])  # the merged, complete run publishes its seed
