"""A keep-running Botzone bot that misbehaves once, on its third play turn, in the way
its argument names: nj (not JSON), nr (no response), re (crashes), tle (sleeps),
badid (an id no card has), notyours (the other copy of a card it holds)."""

import json
import sys
import time

from bzkit import Player, replay, reply

MODE = sys.argv[1]
KEEP = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"


def misbehave(player: Player, request: dict, plays: int) -> bool:
    """Do the bad thing if this is the turn; True if it answered (badly) already."""
    if request["stage"] != "play" or plays != 3:
        return False
    if MODE == "nj":
        print("my answer is the seven of clubs", flush=True)
    elif MODE == "nr":
        print(json.dumps({"debug": "thinking about it"}), flush=True)
    elif MODE == "re":
        sys.exit(1)
    elif MODE == "tle":
        time.sleep(60)
    elif MODE == "badid":
        reply([108])
    elif MODE == "notyours":
        mine = player.decide(request)
        other = next(
            i + 54 if i < 54 else i - 54
            for i in sorted(player.hand)
            if (i + 54 if i < 54 else i - 54) not in player.hand
        )
        reply([other, *mine[1:]])
    print(KEEP, flush=True)
    return True


whole = json.loads(input())
requests = whole["requests"]
player = replay(requests, whole["responses"])
plays = sum(r["stage"] == "play" for r in requests)
request = requests[-1]
while True:
    if not misbehave(player, request, plays):
        response = player.decide(request)
        reply(response)
        print(KEEP, flush=True)
        if request["stage"] == "cover":
            player.hand.difference_update(response)
    request = json.loads(input())
    plays += request["stage"] == "play"
    player.feed(request, None)
