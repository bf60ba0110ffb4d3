"""A default-mode Botzone bot that uses ``data`` (its turn count within the game, checked
every turn) and ``globaldata`` (how many games it has started, across matches)."""

import json

from bzkit import fail, replay, reply

whole = json.loads(input())
requests = whole["requests"]
data = whole.get("data", "")
if len(requests) == 1:
    if data:
        fail(f"data {data!r} at the first turn of a game")
else:
    turns = json.loads(data or "null")
    if turns != len(requests) - 1:
        fail(f"data says {turns} turns, the game has {len(requests) - 1}")
stats = json.loads(whole.get("globaldata") or '{"games": 0}')
if len(requests) == 1:
    stats["games"] += 1
player = replay(requests, whole["responses"])
reply(
    player.decide(requests[-1]),
    data=json.dumps(len(requests)),
    globaldata=json.dumps(stats),
    debug=f"turn {len(requests)}",
)
