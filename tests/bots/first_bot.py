"""The smallest koikoi/1 bot: always the first legal action; parses only the requests."""

import sys
from json import dumps, loads

out = sys.stdout
for line in sys.stdin:
    if line.startswith('{"type":"request"'):
        msg = loads(line)
        out.write(dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}) + "\n")
        out.flush()
    elif line.startswith('{"type":"hello"'):
        out.write('{"type":"hello","name":"first"}\n')
        out.flush()
    elif line.startswith('{"type":"bye"'):
        break
