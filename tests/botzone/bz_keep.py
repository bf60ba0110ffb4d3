"""A Botzone bot in keep-running mode: the whole game on its first line, then one
request per line; it says so after every answer."""

import json

from bzkit import Player, replay, reply

whole = json.loads(input())
player: Player = replay(whole["requests"], whole["responses"])
request = whole["requests"][-1]
while True:
    response = player.decide(request)
    reply(response)
    print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
    previous, request = request, json.loads(input())
    if previous["stage"] == "cover":  # its own burial is only in its answer
        player.hand.difference_update(response)
    player.feed(request, None)
