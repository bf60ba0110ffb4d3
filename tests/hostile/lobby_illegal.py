"""A hostile registered bot for the competition test: it joins the lobby with its bot
key (botkit ``--bot-key``) like any other, then always plays one card — an illegal
answer whenever it must follow a pair or more — so its faults show in the standings.

    PYTHONPATH=sample_bots python tests/hostile/lobby_illegal.py --server S --bot-key K
"""

import sys

from botkit import Table, cards, parse_args, run

from arena.rules import Card
from arena.v1 import arena_pb2 as pb


def decide(request: pb.Request, table: Table) -> list[Card]:
    hand = cards(request.view.hand)
    if request.kind == pb.BID:
        return []
    if request.kind == pb.BURY:
        return hand[: request.count]
    return hand[:1]


if __name__ == "__main__":
    args = parse_args(__doc__.splitlines()[0])
    sys.exit(run(decide, args.name or "lobby_illegal", args.server, args.token))
