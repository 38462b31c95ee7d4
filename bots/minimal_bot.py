"""The smallest koikoi/1 bot: it answers every request with the first legal action."""

import json
import sys

for line in sys.stdin.buffer:  # one JSON object per line
    msg = json.loads(line)
    if msg["type"] == "hello":
        answer = {"type": "hello", "name": "minimal", "protocol": "koikoi/1"}
    elif msg["type"] == "request":
        answer = {"type": "action", "id": msg["id"], "action": msg["legal"][0]}
    elif msg["type"] == "bye":
        break
    else:  # new_match, event, error: nothing to answer
        continue
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()  # always flush: the referee is waiting for this line
