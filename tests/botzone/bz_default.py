"""A Botzone bot in default mode: started afresh each turn with the whole game on stdin."""

import json

from bzkit import replay, reply

whole = json.loads(input())
player = replay(whole["requests"], whole["responses"])
reply(player.decide(whole["requests"][-1]))
