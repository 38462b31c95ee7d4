"""The Ray backend on a real two-node Ray cluster started by the test, inside a network namespace of its own.

The cluster (a head and a second node, one CPU each, each with a custom resource of its own) runs in a new
network namespace with only loopback up, so no traffic leaves loopback, and a new PID namespace, so that
killing its first process ends every Ray process of the test. The tournament driver runs in the same
namespaces (``nsenter``).

The bots play the first, the last or the middle legal action, so a match's result depends only on its deal.
While the file ``HOLD`` exists, a bot process waits before answering its first request of a match of the second
deal pair its worker slot plays (the slot's pairs are kept in a file named by the slot's process id, the bots'
parent): each worker slot then plays exactly one work unit (two matches) and stops inside its second unit, which
makes "both nodes played" and "the second node was lost in the middle of a match" certain, not a matter of timing.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.tournament import ray_backend
from referee.tournament.config import TournamentError
from tests.helpers import ROOT, cli, referee, standings

pytestmark = pytest.mark.slow  # real processes: left out by make test-fast

BIN = Path(sys.executable).parent
PORT = 6391

HOLD_BOT = r"""
import os, sys, time
from referee.bot import run
mode, hold = sys.argv[1], sys.argv[2]
print(f"started from {os.path.abspath(sys.argv[0])}", file=sys.stderr, flush=True)
state = {"second": False, "held": False}
slot = f"{hold}.slot-{os.getppid()}"  # the worker slot that started this process: its pairs so far
def observe(msg):
    if msg["type"] in ("hello", "new_match") and "-" in str(msg["match"]["id"]):
        pair = str(msg["match"]["id"])[:-1]
        with open(slot, "a") as f:
            f.write(pair + "\n")
        with open(slot) as f:
            seen = list(dict.fromkeys(f.read().split()))
        state.update(second=seen.index(pair) >= 1, held=False)
def choose(request):
    if state["second"] and not state["held"]:
        state["held"] = True
        while os.path.exists(hold):
            time.sleep(0.05)
    legal = request["legal"]
    return legal[{"first": 0, "last": len(legal) - 1, "middle": len(legal) // 2}[mode]]
sys.exit(run(choose, name=mode, observe=observe))
"""

RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
"""No usage report; no token written to the home folder (where it would turn on authentication for every cluster
started on this machine afterwards)."""
PAIRS = 4  # 3 pairings x 4 pairs x 2 games = 24 matches; with -j 2, 12 units of one deal pair each
MATCHES = 24


def _ns_probe() -> str | None:
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter") or not shutil.which("ip"):
        return "needs root, unshare, nsenter and ip to run the cluster in a network namespace of its own"
    probe = subprocess.run(["unshare", "--net", "--pid", "--fork", "--mount-proc", "true"], capture_output=True)
    return None if probe.returncode == 0 else f"cannot create namespaces: {probe.stderr.decode().strip()}"


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _tree(pid: int) -> list[int]:
    out = [pid]
    for child in _children(pid):
        out += _tree(child)
    return out


class Cluster:
    """A head and a second node in namespaces of their own; :meth:`referee` runs the CLI inside them."""

    def __init__(self, base: Path) -> None:
        self.temp = base / "ray"
        self.temp.mkdir()
        self.env = {**os.environ, **RAY_ENV}
        # the nodes' temporary files (a bot's working folder among them) in the test's folder: a node killed
        # mid-match, as a lost node, cannot remove its own
        (base / "tmp").mkdir()
        self.env["TMPDIR"] = str(base / "tmp")
        # the head notices a lost node within a few seconds (Ray's default waits longer)
        self.env.update(RAY_health_check_period_ms="500", RAY_health_check_failure_threshold="4",
                        RAY_health_check_timeout_ms="1000", RAY_health_check_initial_delay_ms="1000")  # fmt: skip
        self.ns = subprocess.Popen(
            ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
             "sh", "-c", "ip link set lo up && exec sleep 3600"],
            start_new_session=True,
        )  # fmt: skip
        try:
            self._start_nodes()
        except BaseException:
            self.close()
            raise

    def _start_nodes(self) -> None:
        deadline = time.monotonic() + 30
        while not (kids := _children(self.ns.pid)):
            assert time.monotonic() < deadline, "the namespace did not start"
            time.sleep(0.05)
        self.init = kids[0]
        while "sleep" not in _cmdline(self.init):
            assert time.monotonic() < deadline, "the namespace did not come up"
            time.sleep(0.05)
        common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--object-store-memory", "100000000",
                  "--temp-dir", str(self.temp), "--disable-usage-stats"]  # fmt: skip
        self.inside(BIN / "ray", "start", "--head", "--port", str(PORT), "--include-dashboard=false",
                    "--resources", '{"head_node": 1}', *common)  # fmt: skip
        self.inside(BIN / "ray", "start", "--address", f"127.0.0.1:{PORT}", "--resources",
                    '{"second_node": 1}', *common)  # fmt: skip

    @property
    def address(self) -> str:
        """The head's address, inside the namespace."""
        return f"127.0.0.1:{PORT}"

    def command(self, *args: str | Path) -> list[str]:
        """``args`` run inside the cluster's namespaces."""
        return ["nsenter", "-t", str(self.init), "--net", "--pid", "--mount", *map(str, args)]

    def inside(self, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run ``args`` inside the namespaces; assert it succeeds."""
        proc = subprocess.run(self.command(*args), capture_output=True, text=True, env=self.env, timeout=timeout)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    def raylets(self) -> dict[str, int]:
        """The raylet processes of this cluster: custom resource of the node -> host pid."""
        found: dict[str, int] = {}
        for pid in _tree(self.init):
            line = _cmdline(pid)
            if "raylet/raylet" in line and str(self.temp) in line:
                found["second_node" if "second_node" in line else "head_node"] = pid
        return found

    def node_id(self, resource: str) -> str:
        """The Ray node id of the node with ``resource``."""
        line = _cmdline(self.raylets()[resource])
        return line.split("--node_id=")[1].split()[0]

    def kill_second(self) -> None:
        """Lose the second node: SIGKILL its raylet and everything it started (its worker slot and bots)."""
        for pid in reversed(_tree(self.raylets()["second_node"])):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def referee(self, *args: str | Path, check: int | None = 0) -> subprocess.CompletedProcess[str]:
        """The CLI inside the namespaces, in the project folder."""
        proc = subprocess.run(
            self.command(BIN / "koikoi-referee", *args), cwd=ROOT, capture_output=True, text=True,
            env=self.env, timeout=240,
        )  # fmt: skip
        if check is not None:
            assert proc.returncode == check, proc.stdout + proc.stderr
        return proc

    def close(self) -> None:
        """End the namespaces and every process in them; check that no raylet of the cluster is left."""
        self.ns.kill()  # unshare --kill-child: SIGKILL to the namespace's first process, which ends them all
        self.ns.wait(timeout=30)
        deadline = time.monotonic() + 30
        while True:
            left = [p for p in map(int, filter(str.isdigit, os.listdir("/proc"))) if str(self.temp) in _cmdline(p)]
            if not left:
                break
            assert time.monotonic() < deadline, f"Ray processes left: {left}"
            time.sleep(0.2)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A two-node Ray cluster on loopback, shared by the tests of this module (the last one, last in this file,
    loses a node)."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'koikoi-referee[ray]'")
    reason = _ns_probe()
    if reason is not None:
        pytest.skip(reason)
    # a short folder of its own: Ray's unix sockets live below it, and their paths may not pass 107 bytes
    # (a pytest temporary folder under a parallel worker's name can)
    root = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    c = Cluster(root)
    try:
        yield c
    finally:
        c.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def bots(tmp_path: Path) -> list[str]:
    """Three ``--bot`` options of the holding bot, and the HOLD file's path last."""
    script = tmp_path / "hold_bot.py"
    script.write_text(HOLD_BOT)
    hold = tmp_path / "HOLD"
    out = []
    for name, mode in (("first", "first"), ("last", "last"), ("middle", "middle")):
        out += ["--bot", f"{name}={sys.executable} {script} {mode} {hold}"]
    return [*out, str(hold)]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tournament's folder as the local backend writes it (no HOLD file: nothing waits), once per module."""
    base = tmp_path_factory.mktemp("local")
    script = base / "hold_bot.py"
    script.write_text(HOLD_BOT)
    options = []
    for name in ("first", "last", "middle"):
        options += ["--bot", f"{name}={sys.executable} {script} {name} {base / 'HOLD'}"]
    referee("tournament", *tournament_args([*options, ""], base / "out"))
    return base / "out"


def tournament_args(bots: list[str], out: Path) -> list[str]:
    """A 24-match tournament on fixed deals, with time limits no busy machine reaches."""
    return [*bots[:-1], "--rules", "cardavia", "--pairs", str(PAIRS), "--seed", "11", "-j", "2", "-o", str(out),
            "--startup-ms", "60000", "--move-ms", "600000", "--bank-ms", "600000", "--sandbox", "none",
            "--no-html", "--json"]  # fmt: skip


def results(folder: Path) -> list[dict[str, object]]:
    """The result lines of a tournament folder."""
    lines = (folder / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def outcomes(folder: Path) -> dict[str, tuple[object, ...]]:
    """Each match's outcome, by match id (what the deal and the bots decide, not the timings)."""
    return {
        row["match_id"]: tuple(v for k, v in sorted(row.items()) if "ms" not in k and "time" not in k)
        for row in csv.DictReader((folder / "matches.csv").open())
    }


def nodes(folder: Path) -> list[str]:
    """The node of each recorded match, in order (``logs/nodes.csv``)."""
    return [row["node_id"] for row in csv.DictReader((folder / "logs" / "nodes.csv").open())]


def wait_lines(path: Path, n: int, proc: subprocess.Popen[str]) -> None:
    """Until ``path`` has ``n`` lines (the driver must still be running)."""
    deadline = time.monotonic() + 120
    while not path.exists() or len(path.read_text().splitlines()) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path}: fewer than {n} lines"
        time.sleep(0.1)


def start_held(cluster: Cluster, bots: list[str], out: Path) -> subprocess.Popen[str]:
    """A tournament on the cluster with HOLD in place, once each worker slot has played its one unit."""
    Path(bots[-1]).touch()
    args = [BIN / "koikoi-referee", "tournament", *tournament_args(bots, out), "--backend", "ray",
            "--ray-address", cluster.address]  # fmt: skip
    proc = subprocess.Popen(
        cluster.command(*args), cwd=ROOT, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_lines(out / "results.jsonl", 4, proc)
    return proc


def test_both_nodes_play_and_results_equal_the_local_backend(
    cluster: Cluster, bots: list[str], tmp_path: Path, local: Path
) -> None:
    proc = start_held(cluster, bots, tmp_path / "ray")
    time.sleep(1.0)
    assert len(results(tmp_path / "ray")) == 4  # both slots wait inside their second unit
    Path(bots[-1]).unlink()
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, out + err
    ray_dir = tmp_path / "ray"
    assert json.loads(out)["complete"] is True
    assert outcomes(ray_dir) == outcomes(local)
    assert len(outcomes(ray_dir)) == MATCHES
    assert standings(ray_dir) == standings(local)
    assert sorted(p.name for p in (ray_dir / "replays").iterdir()) == sorted(
        p.name for p in (local / "replays").iterdir()
    )
    placed = nodes(ray_dir)
    assert sorted(placed[:4]) == sorted([cluster.node_id("head_node")] * 2 + [cluster.node_id("second_node")] * 2)
    # a resumed tournament may use the other backend: a finished folder has nothing left to play
    again = referee("tournament", "--resume", ray_dir, "--json", "--no-html")
    assert json.loads(again.stdout)["complete"] is True
    assert len(results(ray_dir)) == MATCHES


def test_a_bot_that_fails_on_the_nodes_stops_the_run_before_any_match(
    cluster: Cluster, bots: list[str], tmp_path: Path
) -> None:
    broken = ROOT / "tests" / "bots" / "broken_bot.py"
    ok = bots[1].split("=", 1)[1]
    proc = cluster.referee(
        "tournament", "--backend", "ray", "--ray-address", cluster.address, "--bot", f"ok={ok}",
        "--bot", f"broken={broken} crash_hello", "--rules", "cardavia", "--pairs", "1", "--seed", "3",
        "-o", tmp_path / "out", "--no-html", check=2,
    )  # fmt: skip
    error = [line for line in proc.stderr.splitlines() if line.startswith("koikoi-referee: error:")]
    assert len(error) == 1, proc.stderr
    assert error[0].startswith("koikoi-referee: error: node 127.0.0.1 (")
    assert "bot 'broken'" in error[0]
    assert (tmp_path / "out" / "results.jsonl").read_text() == ""


def test_backend_options_are_checked(tmp_path: Path) -> None:
    _, err = cli("tournament", "--bot", "a=x.py", "--bot", "b=y.py", "--backend", "spark", check=2)
    assert "--backend 'spark': choose local or ray" in err
    _, err = cli("tournament", "--bot", "a=x.py", "--bot", "b=y.py", "--ray-address", "127.0.0.1:1", check=2)
    assert "--ray-address and --ray-working-dir need --backend ray" in err


def test_an_address_where_no_ray_head_answers_is_an_error_at_once(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'koikoi-referee[ray]'")
    greedy = ROOT / "bots" / "greedy_bot.py"
    _, err = cli("tournament", "--bot", f"a={greedy}", "--bot", f"b={greedy}", "--backend", "ray",
                 "--ray-address", "127.0.0.1:1", "--seed", "1", "-o", tmp_path / "out", check=2)  # fmt: skip
    assert "--ray-address 127.0.0.1:1: no Ray head answers there" in err


def test_without_ray_the_backend_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as where it is not installed
    with pytest.raises(TournamentError, match=r"pip install 'koikoi-referee\[ray\]'"):
        ray_backend.connect(None, 1)


def test_an_interrupted_ray_run_is_resumed_with_the_local_backend(
    cluster: Cluster, bots: list[str], tmp_path: Path, local: Path
) -> None:
    ray_dir = tmp_path / "ray"
    proc = start_held(cluster, bots, ray_dir)
    driver = _children(proc.pid)[0]  # nsenter's child: the referee inside the namespaces
    os.kill(driver, signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert f"--resume {ray_dir}" in err
    Path(bots[-1]).unlink()
    again = referee("tournament", "--resume", ray_dir, "--backend", "local", "-j", "2", "--json", "--no-html")
    assert json.loads(again.stdout)["complete"] is True
    ids = [line["match_id"] for line in results(ray_dir)]
    assert len(ids) == MATCHES and len(set(ids)) == MATCHES
    assert outcomes(ray_dir) == outcomes(local)


def test_without_an_address_ray_runs_here_and_ships_the_working_dir(tmp_path: Path, local: Path) -> None:
    """No --ray-address: a Ray runtime of the run's own; the bot script reaches the node as a copy of
    --ray-working-dir (the bots are started from the copy, not from the folder the referee runs in)."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'koikoi-referee[ray]'")
    reason = _ns_probe()
    if reason is not None:
        pytest.skip(reason)
    ray_dir = tmp_path / "ray"
    ray_tmp = tempfile.mkdtemp(prefix="kr-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    env = {**os.environ, **RAY_ENV, "RAY_TMPDIR": ray_tmp}
    contest = tmp_path / "contest"
    contest.mkdir()
    (contest / "hold_bot.py").write_text(HOLD_BOT)
    relative = []
    for name in ("first", "last", "middle"):
        relative += ["--bot", f"{name}={sys.executable} hold_bot.py {name} {tmp_path / 'no-hold'}"]
    cmd = [str(BIN / "koikoi-referee"), "tournament", *tournament_args([*relative, ""], ray_dir),
           "--backend", "ray", "--ray-working-dir", "."]  # fmt: skip
    proc = subprocess.run(
        ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c",
         'ip link set lo up && exec "$@"', "sh", *cmd],
        cwd=contest, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    started = {line for log in (ray_dir / "logs").glob("*.log") for line in log.read_text().splitlines()}
    shutil.rmtree(ray_tmp, ignore_errors=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["complete"] is True
    assert outcomes(ray_dir) == outcomes(local)
    assert len(set(nodes(ray_dir))) == 1
    assert started and all(line.startswith(f"started from {ray_tmp}/") for line in started), started


def test_losing_the_second_node_mid_run_plays_every_match_exactly_once(
    cluster: Cluster, bots: list[str], tmp_path: Path, local: Path
) -> None:
    ray_dir = tmp_path / "ray"
    second = cluster.node_id("second_node")
    proc = start_held(cluster, bots, ray_dir)
    assert nodes(ray_dir).count(second) == 2  # the second node's slot is now inside a match of its second unit
    cluster.kill_second()
    Path(bots[-1]).unlink()
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, out + err
    ids = [line["match_id"] for line in results(ray_dir)]
    assert len(ids) == MATCHES and len(set(ids)) == MATCHES  # every match once, none twice
    assert nodes(ray_dir).count(second) == 2  # the rest, the lost unit included, ran on the head
    assert outcomes(ray_dir) == outcomes(local)  # the lost matches were played again on their own deals
    assert json.loads(out)["complete"] is True
