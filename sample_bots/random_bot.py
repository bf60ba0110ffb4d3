#!/usr/bin/env python3
"""A bot that plays uniformly random legal moves — the template to copy.

    python sample_bots/random_bot.py --server 127.0.0.1:50051 --token TOKEN

It bids at random, buries random cards, leads one random card and follows with a
random legal play built by the referee's own rules library (arena.rules.legal), so it
never loses a point to a fault.
"""

from __future__ import annotations

import random
import sys

from botkit import Table, Turn, parse_args, run

from arena.rules import Card, legal_follow
from arena.v1 import arena_pb2 as pb


def decide(turn: Turn, table: Table, rng: random.Random) -> list[Card]:
    hand = turn.hand
    if turn.kind == pb.BID:
        bids = turn.bids
        return rng.choice(bids) if bids and rng.random() < 0.5 else []
    if turn.kind == pb.BURY:
        return rng.sample(hand, turn.count)
    lead = turn.lead
    if not lead:  # leading: any single card is a legal lead
        return [rng.choice(hand)]
    return legal_follow(lead, hand, turn.order, pick=rng.choice)


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    rng = random.Random(args.seed)
    return run(
        lambda r, t: decide(r, t, rng),
        args.name or "random_bot",
        args.server,
        args.token,
        reconnect_for=args.reconnect,
    )


if __name__ == "__main__":
    sys.exit(main())
