"""A hostile registered bot for the competition test: it joins the lobby with its bot
key like any other and plays legally, but sits on every tenth decision for half a
second (a bot that hogs its time bank), so its latency shows in the standings.

    PYTHONPATH=sample_bots python tests/hostile/lobby_slow.py --server S --bot-key K
"""

import itertools
import random
import sys
import time

from botkit import Table, parse_args, run
from random_bot import decide as random_decide

from arena.rules import Card
from arena.v1 import arena_pb2 as pb

calls = itertools.count()
rng = random.Random(7)


def decide(request: pb.Request, table: Table) -> list[Card]:
    if next(calls) % 10 == 9:
        time.sleep(0.5)
    return random_decide(request, table, rng)


if __name__ == "__main__":
    args = parse_args(__doc__.splitlines()[0])
    name = args.name or "lobby_slow"
    sys.exit(run(decide, name, args.server, args.token, reconnect_for=args.reconnect))
