"""A bot that breaks one item of ``koikoi-referee check`` (its first argument) and plays well otherwise.

Modes: ``no-name`` (a hello without a name), ``play-choice`` (exits at a play with a choice of capture),
``draw-choice`` (at a ``capture`` request), ``koikoi``, ``misdeal`` (at the event), ``hand-yaku`` (at the event),
``new-match``, ``no-yaku`` (at a round end nobody won), ``bank`` (at a request whose move time is under 10 ms),
``bye`` (never exits on bye).
"""

import json
import sys

mode = sys.argv[1]


def die(why: str) -> None:
    print(f"check_breaker: {why}", file=sys.stderr, flush=True)
    sys.exit(3)


for line in sys.stdin:
    m = json.loads(line)
    kind = m["type"]
    if kind == "hello":
        hello = {"type": "hello", "protocol": "koikoi/1"}
        if mode != "no-name":
            hello["name"] = f"breaker-{mode}"
        print(json.dumps(hello), flush=True)
    elif kind == "new_match" and mode == "new-match":
        die("new_match")
    elif kind == "event":
        if m["event"] == "misdeal" and mode == "misdeal":
            die("misdeal")
        if m["event"] == "hand_yaku" and mode == "hand-yaku":
            die("hand_yaku")
        if m["event"] == "round_end" and m["winner"] is None and mode == "no-yaku":
            die("a round without a winner")
    elif kind == "request":
        plays = [a.get("play") for a in m["legal"] if "play" in a]
        if mode == "play-choice" and len(plays) != len(set(plays)):
            die("a choice of capture on a play")
        if mode == "draw-choice" and m["decision"] == "capture":
            die("a capture request")
        if mode == "koikoi" and m["decision"] == "koikoi":
            die("a koikoi request")
        if mode == "bank" and m["time"]["move_ms"] < 10:
            die("a move time under 10 ms")
        print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
    elif kind == "bye" and mode != "bye":
        break
