"""A koikoi/1 bot that attacks the referee in one way, chosen by MODE; otherwise it plays the first legal action.

Usage: hostile_bot.py MODE PIDFILE [ARG]. Every process this bot creates (itself included) appends a line
"PID START" to PIDFILE (START: its start time in clock ticks, field 22 of /proc/PID/stat) before the bot says
hello, so a test can check that none of them outlives the match.

Modes: exit_now, crash_mid, no_handshake, hang_after, slow, invalid_json, wrong_shape, illegal, double,
huge_line, non_utf8, stderr_flood, close_stdout, ignore_term, fork_child, setsid_child, setsid_orphan,
memory_hog, cpu_spin, probe (ARG: a file to write what the bot can see of its working directory), spy (ARG:
a file to copy every byte of its stdin to, - for stderr; it plays a random legal action), sleepy (ARG ms per
answer, default 50).
"""

import json
import os
import random
import signal
import sys
import threading
import time

MODE = sys.argv[1]
PIDFILE = sys.argv[2]
ARG = sys.argv[3] if len(sys.argv) > 3 else ""


def record() -> None:
    """Append this process's pid and start time to PIDFILE (nothing where it is not writable: in a sandbox,
    where a test finds the bot's processes by the PIDFILE path on their command line instead)."""
    with open(f"/proc/{os.getpid()}/stat", "rb") as f:
        raw = f.read()
    start = raw[raw.rindex(b")") + 2 :].split()[19].decode()
    try:
        with open(PIDFILE, "a") as f:
            f.write(f"{os.getpid()} {start}\n")
    except OSError:
        pass


def sleep_forever() -> None:
    while True:
        time.sleep(60)


def spawn(detach: bool, orphan: bool) -> None:
    """Fork a sleeping child (in a new session if ``detach``; through a parent that exits if ``orphan``), and
    wait until it has recorded itself."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if detach:
            os.setsid()
        if orphan and os.fork() != 0:
            os._exit(0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        record()
        os.write(ready_w, b"1")
        sleep_forever()
    if orphan:
        os.waitpid(pid, 0)
    os.read(ready_r, 1)


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


record()
if MODE == "exit_now":
    sys.exit(0)
if MODE == "ignore_term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if MODE == "fork_child":
    spawn(detach=False, orphan=False)
if MODE == "setsid_child":
    spawn(detach=True, orphan=False)
if MODE == "setsid_orphan":
    spawn(detach=True, orphan=True)
if MODE == "stderr_flood":

    def flood() -> None:
        chunk = b"e" * 65536
        for _ in range(300):  # about 20 MB
            os.write(2, chunk)

    threading.Thread(target=flood, daemon=True).start()
if MODE == "probe":
    with open(ARG, "w") as f:
        json.dump({"cwd": os.getcwd(), "entries": sorted(os.listdir("."))}, f)

spy = None
if MODE == "spy":  # "-": to stderr (the referee's log of the bot), for a sandbox whose files are read-only
    spy = os.fdopen(2, "ab", buffering=0, closefd=False) if ARG == "-" else open(ARG, "ab", buffering=0)  # noqa: SIM115
requests = 0
for raw in sys.stdin.buffer:
    if spy is not None:
        spy.write(raw)
    msg = json.loads(raw)
    kind = msg["type"]
    if kind == "hello":
        if MODE == "no_handshake":
            sleep_forever()
        send({"type": "hello", "name": f"hostile-{MODE}"})
        if MODE == "close_stdout":
            os.close(1)
            sleep_forever()
        continue
    if kind == "bye":
        break
    if kind != "request":
        continue
    requests += 1
    answer = {"type": "action", "id": msg["id"], "action": msg["legal"][0]}
    if spy is not None:
        answer["action"] = random.choice(msg["legal"])
    if MODE == "sleepy":
        time.sleep(int(ARG or 50) / 1000)
    if requests < 2:
        send(answer)
        continue
    if MODE == "crash_mid" or MODE == "fork_child":
        os._exit(9)
    if MODE in ("hang_after", "ignore_term", "setsid_orphan"):
        sleep_forever()
    if MODE == "slow":
        time.sleep((msg["time"]["move_ms"] + 80) / 1000)
    elif MODE == "invalid_json":
        sys.stdout.write('{"type": "action", "id": \n')
        sys.stdout.flush()
        continue
    elif MODE == "wrong_shape":
        send({"type": "action", "id": msg["id"], "action": [msg["legal"][0]]})
        continue
    elif MODE == "illegal":
        send({"type": "action", "id": msg["id"], "action": {"koikoi": True} if "play" in msg["legal"][0]
              else {"play": "pine-crane"}})  # fmt: skip
        continue
    elif MODE == "huge_line":
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            os.write(1, chunk)
        sleep_forever()
    elif MODE == "non_utf8":
        sys.stdout.buffer.write(b'{"type": "action", "id": ' + str(msg["id"]).encode() + b', "\xff\xfe": 1}\n')
        sys.stdout.flush()
        continue
    elif MODE == "memory_hog":
        hog = [bytearray(64 << 20) for _ in range(64)]  # 4 GiB
        send({"type": "hello", "name": str(len(hog))})
    elif MODE == "cpu_spin":
        while True:
            pass
    send(answer)
    if MODE == "double":
        send(answer)
