#!/usr/bin/env python3
"""A simple greedy bot: bid long suits, bury cheap cards, win points when cheap.

python sample_bots/greedy_bot.py --server 127.0.0.1:50051 --token TOKEN
"""

from __future__ import annotations

import sys

from botkit import Table, Turn, parse_args, run

from arena.rules import Card, check_follow, fallback_bury, legal_follow, trick_winner
from arena.v1 import arena_pb2 as pb


def decide(turn: Turn, table: Table) -> list[Card]:
    hand = turn.hand
    if turn.kind == pb.BID:
        pairs = [b for b in turn.bids if len(b) > 1]
        return pairs[-1] if pairs else []  # only confident bids: a pair
    order = turn.order
    if turn.kind == pb.BURY:
        return fallback_bury(hand, turn.count, order)  # cheap side cards, no points
    if not turn.plays:  # lead the highest side card, else the lowest trump
        side = [c for c in hand if not order.is_trump(c)]
        if side:
            return [max(side, key=order.key_of)]
        return [min(hand, key=order.key_of)]
    trick = turn.view.current_trick
    plays = [cards for _seat, cards in turn.plays]
    lead = plays[0]
    low = legal_follow(lead, hand, order)
    if len(lead) != 1:
        return low
    winner = trick_winner(trick.leader, plays, order).winner
    on_table = sum(c.points for p in plays for c in p)
    if winner % 2 == table.seat % 2:  # partner is winning: add points if we can
        scorers = [c for c in hand if c.points and check_follow(lead, hand, [c], order)]
        return [max(scorers, key=lambda c: c.points)] if scorers and len(plays) == 3 else low
    if on_table:  # take the points with the cheapest winning card
        for card in sorted(hand, key=order.key_of):
            if (
                check_follow(lead, hand, [card], order)
                and trick_winner(trick.leader, [*plays, [card]], order).winner == table.seat
            ):
                return [card]
    return low


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    return run(
        decide, args.name or "greedy_bot", args.server, args.token, reconnect_for=args.reconnect
    )


if __name__ == "__main__":
    sys.exit(main())
