"""A koikoi/1 bot that takes more than its share of the machine, or looks where a bot should not, chosen by MODE,
and says on stderr what it achieved; otherwise it plays the first legal action.

Usage: share_bot.py MODE [--tag=TAG]. The tag marks the command line of the bot and of its processes. Each
finding is one line ``VERDICT {json}`` on stderr, as in ``attack_bot.py``.

thief       32 spinning children, each in a session of its own, run during the opponent's turns and are stopped
            with SIGSTOP during the bot's own; each exits after 0.7 s of CPU and is replaced (no CPU limit of a
            process catches one). The children count their work on a shared clock: the verdict gives the CPU
            they got outside the bot's own turns (``stolen_cpu_s``) against the time outside them (``others_s``)
worker      a victim: about 30 ms of CPU work a decision (calibrated on its own CPU clock at startup); the verdict
            gives its turns on the monotonic clock (``turns``: from a request read to its answer ready)
memfd       memfds filled with posix_fallocate, never mapped (no process's resident set holds them), 64 MiB each
            up to 1 GiB, held for the whole match (``held_mib``)
tmpfs       files in its /tmp and /dev/shm, 16 MiB each up to what they take, held for the whole match
cmdline     every /proc/N/cmdline it can read, for host paths that are not on its own command line nor above
            one (``paths``; ``pid1``: the sandbox's first process, ``binds``: it lists the sandbox's binds)
cwd_peek    at each request, read the files of its working directory (``--bot-cwd``): a replay being written
            there names the opponent's opening hand (``named``); it also leaves a note for the other bot there
            and reads the other bot's
facilities  try the kernel facilities a bot has no use for (ptrace, process_vm_readv, perf_event_open,
            userfaultfd, io_uring_setup, bpf, unshare, keyctl, flock, an OFD lock, inotify, personality) and give
            each one's result: ``ok`` or the errno name
"""

import contextlib
import ctypes
import errno
import fcntl
import json
import mmap
import os
import signal
import statistics
import struct
import sys
import time

MODE = sys.argv[1]
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long


def verdict(**fields: object) -> None:
    """One ``VERDICT`` line on stderr, written at once."""
    os.write(2, b"VERDICT " + json.dumps({"attack": MODE, **fields}, sort_keys=True).encode() + b"\n")


def err_name(code: int) -> str:
    return errno.errorcode.get(code, str(code))


# --- the CPU thief ------------------------------------------------------------------------------------------

BIN_S = 0.01  # the children count their work in bins of 10 ms of the shared monotonic clock
BINS = 18_000  # three minutes
CHUNK_S = 0.0005  # of CPU: one unit of a child's work
MARGIN_S = 0.02  # around the bot's own turns: what the referee does just before and after is not the opponent's


def spin(slot: int, board: mmap.mmap, t0: float, chunk: int) -> None:
    """A child: a session of its own, stopped until the bot lets it run; spins until 0.7 s of CPU (or 120 s of
    wall time, or its parent is gone), counting each unit of work in the bin of the moment it ended."""
    parent = os.getppid()
    os.setsid()
    os.kill(os.getpid(), signal.SIGSTOP)
    started = time.monotonic()
    base = slot * BINS
    while time.process_time() < 0.7 and (now := time.monotonic()) - started < 120 and os.getppid() == parent:
        work(chunk)
        i = base + min(int((now - t0) / BIN_S), BINS - 1)
        board[i] = min(board[i] + 1, 255)
    os._exit(0)


class Thief:
    """thief: the children run from the bot's answer to its next request; the verdict counts the work they did
    outside the bot's own turns (``stolen_cpu_s``) against the time outside them (``others_s``)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.chunk = calibrate(CHUNK_S)
        self.board = mmap.mmap(-1, 64 * BINS)  # shared with the children: one row of bins per slot
        self.children: dict[int, int] = {}  # pid -> slot
        self.free = list(range(64))
        self.own: list[tuple[float, float]] = []  # the bot's own turns
        self.turn = 0.0
        self.replaced = 0
        self.error: str | None = None
        for _ in range(32):
            self.spawn()

    def spawn(self) -> None:
        slot = self.free.pop(0)
        try:
            pid = os.fork()
        except OSError as exc:
            self.error = err_name(exc.errno or 0)
            return
        if pid == 0:
            spin(slot, self.board, self.t0, self.chunk)
        os.waitpid(pid, os.WUNTRACED)  # until it has stopped itself
        self.children[pid] = slot

    def stop(self) -> None:
        """At a request: stop the children, replace those that have ended, say what they got so far (the bot
        may not run again after its last answer)."""
        self.turn = time.monotonic()
        if self.own:
            self.report()
        for pid in list(self.children):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        for pid, slot in list(self.children.items()):
            done, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
            if done and not os.WIFSTOPPED(status):
                del self.children[pid]
                self.free.append(slot)  # its counts stay in the slot's row
                self.spawn()
                self.replaced += 1

    def release(self) -> None:
        """After an answer: let them run."""
        if self.turn:
            self.own.append((self.turn, time.monotonic()))
        for pid in self.children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)

    def end(self) -> None:
        """At the end of the match."""
        for pid in self.children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if self.own:
            self.report()

    def report(self) -> None:
        first, last = int((self.own[0][1] - self.t0) / BIN_S), int((time.monotonic() - self.t0) / BIN_S)
        mine = set()
        for a, b in self.own:
            mine.update(range(int((a - MARGIN_S - self.t0) / BIN_S), int((b + MARGIN_S - self.t0) / BIN_S) + 1))
        others = [i for i in range(first, min(last, BINS)) if i not in mine]
        units = sum(self.board[slot * BINS + i] for slot in range(64) for i in others)
        stolen_s, others_s = units * CHUNK_S, len(others) * BIN_S
        totals = [sum(self.board[slot * BINS + i] for slot in range(64)) for i in range(first, min(last, BINS))]
        bins = [[first + k, n] for k, n in enumerate(totals) if n]
        verdict(stolen_cpu_s=round(stolen_s, 3), others_s=round(others_s, 3), children=len(self.children),
                replaced=self.replaced, error=self.error, cpus=round(stolen_s / max(others_s, 1e-9), 3),
                t0=self.t0, bin_s=BIN_S, chunk_s=CHUNK_S, bins=bins)  # fmt: skip


def calibrate(target_s: float = 0.03) -> int:
    """Iterations of :func:`work` that take ``target_s`` of this process's CPU time."""
    n = 2000
    while True:
        t0 = time.process_time()
        work(n)
        took = time.process_time() - t0
        if took > 0.1:
            return max(1, int(n * target_s / took))
        n *= 2


def work(n: int) -> int:
    acc = 0
    for i in range(n):
        acc = (acc * 31 + i) & 0xFFFFFFFF
    return acc


# --- memory outside the resident set ------------------------------------------------------------------------

HELD: list[int] = []


def memfds(total_mib: int = 1024, each_mib: int = 64) -> None:
    held, error = 0, None
    while held < total_mib:
        try:
            fd = os.memfd_create(f"hold-{len(HELD)}")
            HELD.append(fd)
            os.posix_fallocate(fd, 0, each_mib << 20)
        except OSError as exc:
            error = err_name(exc.errno or 0)
            break
        held += each_mib
    verdict(held_mib=held, error=error, files=len(HELD))


def tmpfs_files(each_mib: int = 16) -> None:
    out = {}
    chunk = b"\x5a" * (1 << 20)
    for folder in ("/tmp", "/dev/shm"):
        held, error = 0, None
        while held < 1024:
            try:
                fd = os.open(os.path.join(folder, f"hold-{os.getpid()}-{held}"), os.O_WRONLY | os.O_CREAT, 0o600)
                HELD.append(fd)
                for _ in range(each_mib):
                    os.write(fd, chunk)
            except OSError as exc:
                error = err_name(exc.errno or 0)
                break
            held += each_mib
        out[folder] = {"held_mib": held, "error": error}
    verdict(held_mib=sum(int(v["held_mib"]) for v in out.values()), folders=out)  # type: ignore[call-overload]


def still_held() -> int:
    """MiB of the files this bot still holds open (their sizes)."""
    total = 0
    for fd in HELD:
        with contextlib.suppress(OSError):
            total += os.fstat(fd).st_blocks * 512
    return total >> 20


# --- looking around -----------------------------------------------------------------------------------------

SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/etc", "/opt", "/proc", "/dev", "/sys")


def known(path: str, own: set[str]) -> bool:
    """A path the bot knows anyway: the system, a word of its own command line or a folder
    above one."""
    path = path.rstrip("/") or "/"
    if path == "/" or any(path == top or path.startswith(top + "/") for top in SYSTEM):
        return True
    return any(word == path or word.startswith(path + "/") for word in own)


def cmdlines() -> None:
    own = set()
    with open("/proc/self/cmdline", "rb") as f:
        own.update(f.read().decode(errors="replace").split("\0"))
    paths: set[str] = set()
    pid1 = ""
    for entry in sorted(os.listdir("/proc")):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                words = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if entry == "1":
            pid1 = " ".join(words)[:400]
        for word in words:
            for part in word.split("="):
                if part.startswith("/") and part.strip("/").count("/") >= 1 and not known(part, own):
                    paths.add(part)  # a folder's layout (a name at the root, like a launcher's, says nothing)
    binds = "--ro-bind" in pid1 or "--bind" in pid1
    verdict(won=bool(paths) or binds, paths=sorted(paths)[:20], pid1=pid1, binds=binds)


class Peek:
    """cwd_peek: the replay in the working directory, and notes between the two bots."""

    def __init__(self) -> None:
        self.note = f"note-{os.getpid()}-{time.monotonic_ns()}"
        self.field: list[str] = []
        self.named = False
        self.noted = False
        try:
            with open(self.note, "w") as f:
                f.write("hello from the other bot\n")
            verdict(wrote=self.note)
        except OSError as exc:
            verdict(wrote=None, error=err_name(exc.errno or 0))

    def request(self) -> None:
        for name in sorted(os.listdir(".")):
            if name.startswith("note-") and name != self.note and not self.noted:
                self.noted = True
                verdict(won=True, note=name)
            if self.named or not os.path.isfile(name) or name.startswith("note-"):
                continue
            with contextlib.suppress(OSError, ValueError), open(name, "rb") as f:
                for line in f.read(1 << 22).splitlines():
                    obj = json.loads(line)
                    if obj.get("event") == "round_start" and sorted(obj.get("field", [])) == sorted(self.field):
                        hands = obj["hands"]
                        self.named = True
                        verdict(won=True, file=name, named=sorted(hands[0] + hands[1]), field=sorted(self.field))


# --- facilities a bot has no use for ------------------------------------------------------------------------


def call(number: int, *args: object) -> str:
    ret = LIBC.syscall(ctypes.c_long(number), *args)
    if ret < 0:
        return err_name(ctypes.get_errno())
    with contextlib.suppress(OSError):
        if number in (298, 323, 425, 321):  # a descriptor
            os.close(ret)
    return "ok"


def in_child(number: int, *args: object) -> str:
    """A system call made in a child (it may change the caller), its result passed back as the exit status."""
    pid = os.fork()
    if pid == 0:
        ret = LIBC.syscall(ctypes.c_long(number), *args)
        os._exit(0 if ret >= 0 else min(ctypes.get_errno(), 255))
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    code = os.WEXITSTATUS(status)
    return "ok" if code == 0 else err_name(code)


def aio_context() -> str:
    """io_setup(2): a kernel AIO context, counted in the machine-wide /proc/sys/fs/aio-nr."""
    ctx = ctypes.c_ulong(0)
    ret = LIBC.syscall(ctypes.c_long(206), 1, ctypes.byref(ctx))
    if ret < 0:
        return err_name(ctypes.get_errno())
    LIBC.syscall(ctypes.c_long(207), ctx)  # io_destroy
    return "ok"


def pseudo_terminal() -> str:
    """A pseudo-terminal from /dev/ptmx, counted in the machine-wide /proc/sys/kernel/pty/nr."""
    try:
        os.close(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
    except OSError as exc:
        return err_name(exc.errno or 0)
    return "ok"


def page_cache() -> dict[str, str]:
    """The calls that ask or clear which pages of a shared file are cached: cachestat(2), posix_fadvise
    DONTNEED, madvise MADV_PAGEOUT, a read with RWF_NOWAIT."""
    out: dict[str, str] = {}
    fd = os.open("/usr/bin/env", os.O_RDONLY)
    try:
        rng, stat = (ctypes.c_ulonglong * 2)(0, 4096), (ctypes.c_ulonglong * 5)()
        out["cachestat"] = call(451, fd, ctypes.byref(rng), ctypes.byref(stat), 0)
        out["fadvise_dontneed"] = call(221, fd, ctypes.c_long(0), ctypes.c_long(0), 4)
        out["madvise_pageout"] = madvise_pageout(fd)
        try:
            os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)
            out["rwf_nowait"] = "ok"
        except OSError as exc:
            out["rwf_nowait"] = err_name(exc.errno or 0)
    finally:
        os.close(fd)
    return out


def madvise_pageout(fd: int) -> str:
    """madvise(MADV_PAGEOUT) on a shared read-only mapping of the file."""
    LIBC.mmap.restype = ctypes.c_void_p
    LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    address = LIBC.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    try:
        return call(28, ctypes.c_void_p(address), 4096, 21)
    finally:
        LIBC.munmap(address, 4096)


def facilities() -> None:
    buf = ctypes.create_string_buffer(64)
    dst = ctypes.create_string_buffer(64)
    local = struct.pack("PN", ctypes.addressof(dst), 64)
    remote = struct.pack("PN", ctypes.addressof(buf), 64)
    perf = bytearray(128)
    struct.pack_into("IIQ", perf, 0, 1, 128, 0)  # PERF_TYPE_SOFTWARE, size, PERF_COUNT_SW_CPU_CLOCK
    struct.pack_into("Q", perf, 40, 0x60)  # exclude_kernel, exclude_hv
    params = ctypes.create_string_buffer(120)
    bpf_attr = ctypes.create_string_buffer(struct.pack("IIII", 2, 4, 4, 1), 128)  # an array map of one entry
    probes = {
        "ptrace": in_child(101, 0, 0, 0, 0),  # PTRACE_TRACEME
        "process_vm_readv": call(310, os.getpid(), local, 1, remote, 1, 0),
        "perf_event_open": call(298, bytes(perf), 0, -1, -1, 0),
        "userfaultfd": call(323, 1),  # UFFD_USER_MODE_ONLY
        "io_uring_setup": call(425, 1, params),
        "bpf": call(321, 0, bpf_attr, 128),  # BPF_MAP_CREATE
        "unshare": in_child(272, 0x10000000),  # CLONE_NEWUSER
        "keyctl": call(250, 0, -4, 0),  # KEYCTL_GET_KEYRING_ID of the user keyring
        "personality": in_child(135, 0x0040000),  # ADDR_NO_RANDOMIZE
        "inotify_init1": call(294, 0),
        "io_setup": aio_context(),
        "ptmx": pseudo_terminal(),
        **page_cache(),
    }
    fd = os.open(sys.argv[0], os.O_RDONLY)
    try:
        lock = struct.pack("hhqqi4x", 0, 0, 0, 1, 0)  # a read lock on byte 0
        for name, how in (("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                          ("ofd_lock", lambda: fcntl.fcntl(fd, 37, lock))):  # fmt: skip
            try:
                how()
                probes[name] = "ok"
            except OSError as exc:
                probes[name] = err_name(exc.errno or 0)
    finally:
        os.close(fd)
    usable = sorted(k for k, v in probes.items() if v == "ok")
    verdict(won=bool(usable), probes=probes, usable=usable)


# --- the game -----------------------------------------------------------------------------------------------


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    if MODE == "memfd":
        memfds()
    if MODE == "tmpfs":
        tmpfs_files()
    thief = Thief() if MODE == "thief" else None
    iterations = calibrate() if MODE == "worker" else 0
    peek = Peek() if MODE == "cwd_peek" else None
    requests = 0
    spent: list[float] = []
    turns: list[list[float]] = []
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "bye":
            break
        if kind == "hello":
            send({"type": "hello", "name": f"share-{MODE}"})
            continue
        if kind == "event" and msg["event"] == "round_start" and peek is not None:
            peek.field, peek.named = msg["field"], False
        if kind != "request":
            continue
        requests += 1
        if thief is not None:
            thief.stop()
        if peek is not None:
            peek.request()
        if requests == 1 and MODE == "cmdline":
            cmdlines()
        if requests == 1 and MODE == "facilities":
            facilities()
        if requests == 5 and HELD:
            verdict(still_held_mib=still_held(), at_request=5)
        if iterations:
            t0, began = time.process_time(), time.monotonic()
            work(iterations)
            spent.append(time.process_time() - t0)
        if iterations:
            turns.append([began, time.monotonic()])  # before the answer: the bot may be frozen once it is read
            # the figures so far, at every turn: a bot closed soon after its bye may not get to write them at the end
            verdict(work_cpu_ms=round(statistics.median(spent) * 1000, 1), decisions=len(spent), turns=turns)
        send({"type": "action", "id": msg["id"], "action": msg["legal"][0]})
        if thief is not None:
            thief.release()
    if thief is not None:
        thief.end()
    if spent:
        verdict(work_cpu_ms=round(statistics.median(spent) * 1000, 1), decisions=len(spent), turns=turns)


main()
