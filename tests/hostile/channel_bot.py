"""A koikoi/1 bot that tries to carry information between sandboxes through a kernel facility, chosen by MODE,
and says on stderr what it achieved; otherwise it plays the first legal action.

Usage: channel_bot.py MODE [--tag=TAG]. The tag marks the command line of the bot and of its processes (a test
finds them from outside) and, for the modes that name something shared, makes that name unique to the test run.
Each finding is one line ``VERDICT {json}`` on stderr, as in ``attack_bot.py``; a facility that refuses says so
with its errno (``"error": "EPERM"``) and the bot plays on.

A bot's own processes across the two games of a duplicate pair (the deal is the same, the seats swapped: what
one process holds in game a is what its opponent holds in game b). At each round start the bot publishes its
hand under a key made of the field, and at each request it looks for a hand published by another process under
the same key; a hand found is named in a verdict (``named``, with ``field`` and its own ``hand``, so a test can
check it against the replays):

lock_ofd        open-file-description read locks (F_OFD_SETLK) on bytes of its own program file, read back with
                F_OFD_GETLK (a read-only descriptor is enough)
lock_posix      the same with classic POSIX record locks (F_SETLK, F_GETLK)
lock_flock      flock(2) shared locks on read-only system files (three files a card), probed with LOCK_EX|LOCK_NB

Across games of one deal with the same user id (``play --deals F --games N``):

keyring         the per-uid user keyring (add_key, keyctl through syscall(2)): the stock order drawn and the
                opponent's cards played, kept under a key named by the tag and the field; a later game with the
                same deal reads them back at its round start (``stock``: the draws in order)

Whether a bot's processes that saw one deal are alive together (judged from outside, not a channel itself):

twin            at hello and each new_match the process names itself (its comm, which the host's /proc shows)
                ``kt`` + four characters of the tag + the match's pair number and game letter, and it takes
                30 ms a decision, so that a test polling the host sees which processes of a pair live at once

Between two contestants of one match (seat 1 sends at each of its requests, seat 2 receives at each of its own):

collude_tx, collude_rx            an OFD read lock on byte N of /etc/passwd (which every sandbox sees) at request N
inotify_tx, inotify_rx            the sender opens a read-only system file; the receiver counts IN_OPEN events
sysv_tx, sysv_rx                  a System V shared memory segment with a key made from the tag
abstract_tx, abstract_rx          a datagram to an abstract unix socket named by the tag
"""

import contextlib
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import socket
import struct
import sys
import time

MODE = sys.argv[1]
TAG = next((a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--tag=")), "untagged")
CARDS = [
    f"{month}-{kind}" for month, kinds in (
        ("pine", "crane ribbon chaff-1 chaff-2"), ("plum", "warbler ribbon chaff-1 chaff-2"),
        ("cherry", "curtain ribbon chaff-1 chaff-2"), ("wisteria", "cuckoo ribbon chaff-1 chaff-2"),
        ("iris", "bridge ribbon chaff-1 chaff-2"), ("peony", "butterfly ribbon chaff-1 chaff-2"),
        ("clover", "boar ribbon chaff-1 chaff-2"), ("pampas", "moon geese chaff-1 chaff-2"),
        ("chrysanthemum", "sake ribbon chaff-1 chaff-2"), ("maple", "deer ribbon chaff-1 chaff-2"),
        ("willow", "rainman swallow ribbon lightning"), ("paulownia", "phoenix chaff-1 chaff-2 chaff-3"),
    ) for kind in kinds.split()
]  # fmt: skip
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long


def verdict(**fields: object) -> None:
    """One ``VERDICT`` line on stderr, written at once."""
    os.write(2, b"VERDICT " + json.dumps({"attack": MODE, **fields}, sort_keys=True).encode() + b"\n")


def err_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))


def syscall(number: int, *args: object) -> int:
    """A raw system call; OSError with its errno when it fails."""
    ret = LIBC.syscall(ctypes.c_long(number), *args)
    if ret < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(ret)


def key_of(field: list[str]) -> int:
    """A number that names a deal: the round's opening field, as a 48-bit card mask."""
    return sum(1 << CARDS.index(c) for c in field)


# --- locks: a board of slots (publish one, ask whether another process holds one) -------------------------

F_RDLCK, F_WRLCK, F_UNLCK = 0, 1, 2
F_OFD_GETLK, F_OFD_SETLK = 36, 37
FLOCK = "hhqqi4x"  # struct flock on x86_64: type, whence, start, len, pid


class Board:
    """Slots a process can hold and others can see: byte ``N`` of a file (fcntl locks) or a set of files
    (flock). A process never sees its own slots as held by another (except through flock, see probe)."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.fd = os.open(sys.argv[0] if how != "collude" else "/etc/passwd", os.O_RDONLY)
        # the slots' bytes, far past the end of the file, named by the tag: runs at once keep to their own bytes
        self.base = (1 << 20) + int.from_bytes(hashlib.sha256(TAG.encode()).digest()[:3], "big") % (1 << 20) * 64
        self.pool: list[str] = []
        self.held: dict[int, list[int]] = {}
        if how == "flock":
            for top, dirs, files in os.walk("/usr/lib/python3.11"):
                dirs.sort()
                self.pool += [os.path.join(top, f) for f in sorted(files)]

    def _fcntl(self, kind: int, start: int, *, get: bool) -> int:
        cmd = {("ofd", False): F_OFD_SETLK, ("ofd", True): F_OFD_GETLK, ("posix", False): fcntl.F_SETLK,
               ("posix", True): fcntl.F_GETLK}[("posix" if self.how == "posix" else "ofd", get)]  # fmt: skip
        out = fcntl.fcntl(self.fd, cmd, struct.pack(FLOCK, kind, os.SEEK_SET, self.base + start, 1, 0))
        return int(struct.unpack(FLOCK, out)[0])

    def _files(self, slot: int) -> list[str]:
        digest = hashlib.sha256(str(slot).encode()).digest()
        return [self.pool[int.from_bytes(digest[4 * i : 4 * i + 4], "big") % len(self.pool)] for i in range(3)]

    def publish(self, slot: int) -> None:
        """Hold ``slot`` (until the process ends)."""
        if self.how != "flock":
            self._fcntl(F_RDLCK, slot, get=False)
            return
        fds = []
        for path in self._files(slot):
            fd = os.open(path, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_SH)  # waits out another process's probe
            fds.append(fd)
        self.held[slot] = fds

    def probe(self, slot: int) -> bool:
        """Whether another process holds ``slot``. Through flock a slot this process holds also counts: the caller
        leaves out its own."""
        if self.how != "flock":
            return self._fcntl(F_WRLCK, slot, get=True) != F_UNLCK
        for path in self._files(slot):
            fd = os.open(path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            finally:
                os.close(fd)  # closing drops the lock it took
            return False
        return True


SPAN = 64  # slots per deal key


class HandLocks:
    """lock_*: publish the opening hand under the field's key, look for another process's hand under it."""

    def __init__(self, how: str) -> None:
        self.board: Board | None = None
        try:
            self.board = Board(how)
        except OSError as exc:
            verdict(won=False, error=err_name(exc), step="open")
        self.field: list[str] = []
        self.hand: list[str] = []
        self.named = False

    def base(self) -> int:
        return (key_of(self.field) % 1_000_000_007) * SPAN

    def round_start(self, hand: list[str], field: list[str]) -> None:
        self.field, self.hand, self.named = field, hand, False
        if self.board is None:
            return
        try:
            for card in hand:
                self.board.publish(self.base() + CARDS.index(card))
        except OSError as exc:
            verdict(won=False, error=err_name(exc), step="publish")
            self.board = None

    def request(self) -> None:
        if self.board is None or self.named or not self.field:
            return
        unseen = [c for c in CARDS if c not in self.hand and c not in self.field]
        try:
            found = [c for c in unseen if self.board.probe(self.base() + CARDS.index(c))]
        except OSError as exc:
            verdict(won=False, error=err_name(exc), step="probe")
            self.board = None
            return
        if len(found) >= len(self.hand):
            self.named = True
            verdict(won=True, named=sorted(found), hand=sorted(self.hand), field=sorted(self.field))


# --- the user keyring ---------------------------------------------------------------------------------------

SYS_ADD_KEY, SYS_KEYCTL = 248, 250
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SET_TIMEOUT, KEYCTL_SEARCH, KEYCTL_READ = 15, 10, 11


class Keyring:
    """keyring: what a round showed (the draws in order, the opponent's plays), kept under a key per deal."""

    def __init__(self) -> None:
        self.field: list[str] = []
        self.hand: list[str] = []
        self.draws: list[str] = []
        self.broken = False

    def desc(self) -> bytes:
        return f"koikoi-{TAG}-{key_of(self.field):x}".encode()

    def round_start(self, hand: list[str], field: list[str]) -> None:
        self.save()
        self.field, self.hand, self.draws = field, hand, []
        if self.broken:
            return
        try:
            key = syscall(SYS_KEYCTL, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", self.desc(), 0)
            buf = ctypes.create_string_buffer(4096)
            size = syscall(SYS_KEYCTL, KEYCTL_READ, key, buf, 4096)
        except OSError as exc:
            if exc.errno != errno.ENOKEY:
                verdict(won=False, error=err_name(exc), step="search")
            else:
                verdict(won=False, found=False, uid=os.getuid(), field=sorted(field))
            return
        kept = json.loads(buf.raw[:size])
        verdict(won=True, uid=os.getuid(), stock=kept["draws"], field=sorted(field), hand=sorted(hand))

    def event(self, msg: dict[str, object]) -> None:
        if msg.get("event") == "draw":
            self.draws.append(str(msg["card"]))

    def save(self) -> None:
        """Keep this round's draws under its key (an add_key with the same name replaces the payload)."""
        if self.broken or not self.field or not self.draws:
            return
        payload = json.dumps({"draws": self.draws}).encode()
        try:
            key = syscall(SYS_ADD_KEY, b"user", self.desc(), payload, len(payload), KEY_SPEC_USER_KEYRING)
            syscall(SYS_KEYCTL, KEYCTL_SET_TIMEOUT, key, 300)  # the kernel drops it by itself later
        except OSError as exc:
            verdict(won=False, error=err_name(exc), step="add_key")
            self.broken = True


# --- collusion between two contestants ----------------------------------------------------------------------

IN_OPEN = 0x20
SIGNAL_FILE = "/usr/share/zoneinfo/Antarctica/Troll"  # a system file nothing else on the machine opens


class Colluder:
    """*_tx sends one signal at each of its requests; *_rx counts, at each of its own, the signals received."""

    def __init__(self, how: str, sender: bool) -> None:
        self.how, self.sender = how, sender
        self.sent = 0
        self.seen: list[int] = []
        self.error: str | None = None
        self.inotify = -1
        self.sock: socket.socket | None = None
        self.shm: int | None = None
        try:
            self._open()
        except OSError as exc:
            self.error = err_name(exc)
            if not (self.how == "sysv" and not self.sender):
                verdict(won=False, error=self.error, step="open")

    def _name(self) -> bytes:
        return b"\0koikoi-" + TAG.encode()

    def _shm_key(self) -> int:
        return int.from_bytes(hashlib.sha256(TAG.encode()).digest()[:4], "big") & 0x7FFFFFFF

    def _open(self) -> None:
        if self.how == "collude":
            self.board = Board("collude")
        elif self.how == "inotify" and not self.sender:
            self.inotify = LIBC.inotify_init1(os.O_NONBLOCK)
            if self.inotify < 0 or LIBC.inotify_add_watch(self.inotify, SIGNAL_FILE.encode(), IN_OPEN) < 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code))
        elif self.how == "abstract":
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            if not self.sender:
                self.sock.bind(self._name())
                self.sock.setblocking(False)
        elif self.how == "sysv":
            LIBC.shmget.restype = ctypes.c_int
            LIBC.shmat.restype = ctypes.c_void_p
            flags = 0o1666 if self.sender else 0  # IPC_CREAT | 0666 for the sender
            shm_id = LIBC.shmget(self._shm_key(), 4096, flags)
            if shm_id < 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code))
            self.shm_id = shm_id
            self.shm = LIBC.shmat(shm_id, None, 0)

    def request(self) -> None:
        if self.how == "sysv" and self.shm is None and not self.sender:
            with contextlib.suppress(OSError):
                self._open()  # the sender may have made the segment after this process started
                self.error = None
        elif self.error is not None:
            return
        try:
            self.sender_step() if self.sender else self.receiver_step()
        except OSError as exc:
            self.error = err_name(exc)
            verdict(won=False, error=self.error, step="signal")

    def sender_step(self) -> None:
        self.sent += 1
        if self.how == "collude":
            self.board.publish(self.sent)
        elif self.how == "inotify":
            os.close(os.open(SIGNAL_FILE, os.O_RDONLY))
        elif self.how == "abstract" and self.sock is not None:
            with contextlib.suppress(ConnectionRefusedError, FileNotFoundError):
                self.sock.sendto(str(self.sent).encode(), self._name())
        elif self.how == "sysv" and self.shm is not None:
            ctypes.c_int.from_address(self.shm).value = self.sent

    def receiver_step(self) -> None:
        last = self.seen[-1] if self.seen else 0
        if self.how == "collude":
            while self.board.probe(last + 1):
                last += 1
        elif self.how == "inotify":
            with contextlib.suppress(BlockingIOError):
                last += os.read(self.inotify, 1 << 16).count(IN_OPEN.to_bytes(4, "little"))
        elif self.how == "abstract" and self.sock is not None:
            with contextlib.suppress(BlockingIOError):
                while True:
                    last = int(self.sock.recv(64))
        elif self.how == "sysv" and self.shm is not None:
            last = ctypes.c_int.from_address(self.shm).value
        self.seen.append(last)

    def report(self) -> None:
        if self.sender:
            if self.shm is not None:
                LIBC.shmctl(self.shm_id, 0, None)  # IPC_RMID: gone once both have detached
            verdict(sent=self.sent, error=self.error)
            return
        rises = sum(1 for a, b in zip([0, *self.seen], self.seen, strict=False) if b > a)
        verdict(won=rises >= 5, requests=len(self.seen), rises=rises, last=self.seen[-1:], error=self.error)


def twin_tag() -> str:
    """Four characters of the tag: what the ``twin`` mode's process names start with after ``kt``."""
    return hashlib.sha256(TAG.encode()).hexdigest()[:4]


# --- the game -----------------------------------------------------------------------------------------------


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    how, _, role = MODE.partition("_")
    hands = HandLocks(role) if how == "lock" else None
    keys = Keyring() if how == "keyring" else None
    pal = Colluder(how, role == "tx") if role in ("tx", "rx") else None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "bye":
            break
        if kind in ("hello", "new_match") and MODE == "twin":
            ident = str((msg.get("match") or {}).get("id") or "")[-4:]  # a tournament's pair and game: ...-000a
            pair, game = ident[:-1], ident[-1:]
            LIBC.prctl(15, f"kt{twin_tag()}{pair}{game}".encode(), 0, 0, 0)  # PR_SET_NAME
        if kind == "hello":
            send({"type": "hello", "name": f"channel-{MODE}"})
            continue
        if kind == "event":
            if msg["event"] == "round_start":
                for part in (hands, keys):
                    if part is not None:
                        part.round_start(msg["hand"], msg["field"])
            elif keys is not None:
                keys.event(msg)
            continue
        if kind != "request":
            continue
        if MODE == "twin":
            time.sleep(0.03)
        if hands is not None:
            hands.request()
        if pal is not None:
            pal.request()
        send({"type": "action", "id": msg["id"], "action": msg["legal"][0]})
        if keys is not None:
            keys.save()  # the draws so far: the match may end before the next round starts
    if pal is not None:
        pal.report()


main()
