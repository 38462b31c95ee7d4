"""A bot that follows koikoi/1 (first legal action) until its MODE makes it break a rule on purpose.

Usage: broken_bot.py MODE [ARG]. Modes: ok, hang, hang_hello, crash, crash_hello, invalid_json, wrong_shape,
illegal, oversized, double, mismatch, child_hang (a child in its group, then hang), spy FILE (copy stdin to
FILE), ignore_term (ignore SIGTERM, then hang), stderr_flood, no_newline (an answer without its newline, then exit).
"""

import json
import signal
import subprocess
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
arg = sys.argv[2] if len(sys.argv) > 2 else ""
spy = open(arg, "ab", buffering=0) if mode == "spy" else None  # noqa: SIM115


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def hang() -> None:
    while True:
        time.sleep(60)


if mode == "ignore_term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "child_hang":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
if mode == "stderr_flood":
    sys.stderr.write("x" * 3_000_000)
    sys.stderr.flush()

requests = 0
for raw in sys.stdin.buffer:
    if spy is not None:
        spy.write(raw)
    msg = json.loads(raw)
    kind = msg["type"]
    if kind == "hello":
        if mode == "hang_hello":
            hang()
        if mode == "crash_hello":
            sys.exit(3)
        if mode == "mismatch":
            send({"type": "hello", "name": "broken", "protocol": "koikoi/9"})
            continue
        send({"type": "hello", "name": f"broken-{mode}", "version": "1"})
    elif kind == "request":
        requests += 1
        if requests >= 2 and mode in ("hang", "child_hang", "ignore_term"):
            hang()
        if requests >= 2 and mode == "crash":
            sys.exit(5)
        answer = {"type": "action", "id": msg["id"], "action": msg["legal"][0]}
        if requests >= 2 and mode == "invalid_json":
            sys.stdout.write("{not json\n")
            sys.stdout.flush()
            continue
        if requests >= 2 and mode == "wrong_shape":
            send({"type": "action", "id": msg["id"], "move": msg["legal"][0]})
            continue
        if requests >= 2 and mode == "illegal":
            send(
                {
                    "type": "action",
                    "id": msg["id"],
                    "action": {
                        "play": "pine-crane"
                        if "pine-crane" not in msg["view"]["hand"]
                        else "paulownia-phoenix"
                    },
                }
            )
            send({"type": "action", "id": msg["id"], "action": {"koikoi": 1}})
            continue
        if requests >= 2 and mode == "no_newline":
            sys.stdout.write(json.dumps(answer))
            sys.stdout.flush()
            sys.exit(0)
        if requests >= 2 and mode == "oversized":
            sys.stdout.write("[" + "1," * 600_000 + "1]\n")
            sys.stdout.flush()
            continue
        send(answer)
        if requests >= 2 and mode == "double":
            send(answer)
    elif kind == "bye":
        break
