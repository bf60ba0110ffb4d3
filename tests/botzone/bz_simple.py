"""A default-mode Botzone bot that asked for the simplified interaction: the turn count
n, then 2n - 1 lines of requests and responses, then data and globaldata; it answers
with the response on one line (then debug, data, globaldata lines)."""

import json

from bzkit import replay

n = int(input())
lines = [json.loads(input()) for _ in range(2 * n - 1)]
requests, responses = lines[0::2], lines[1::2]
player = replay(requests, responses)
print(json.dumps(player.decide(requests[-1])))
print("simple turn", n)
