"""Bid windows and trump without a bid (RULES.md §5): the deal machine's pure helpers."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from arena.game.events import Action, Decision, Kind
from arena.rules import Bid, Card, NoBid, Position, Rank, Seat, Suit, legal_bids


def bid_window(
    position: Position, seen: Sequence[frozenset[Action]], closing: bool
) -> dict[int, Decision]:
    """Who is asked in this window, each with every bid legal for it now.

    After a round of dealing: each seat that has a legal bid it did not have when it
    last answered — only a newly dealt level card or joker can make one. In a closing
    window: every seat holding any legal bid.
    """
    window: dict[int, Decision] = {}
    level = position.level
    for seat in range(4):
        hand = position.hand(seat)
        if not closing and not (hand[-1].rank == level or hand[-1].is_joker):
            continue  # a card that cannot bid made no new bid possible
        options = tuple(legal_bids(position, seat))
        fresh = bool(options) if closing else not set(options) <= seen[seat]
        if options and fresh:
            window[seat] = Decision(seat, Kind.BID, options=options)
    return window


def apply_window(answers: Mapping[int, Action], start: int, position: Position) -> list[Bid]:
    """Apply a window's answers in seat order from ``start``; returns the bids made.

    An answer that an earlier answer in the same window outranked is a pass, not a fault.
    """
    made: list[Bid] = []
    for i in range(4):
        seat = Seat(start).after(i)
        cards = answers.get(seat)
        if cards and cards in legal_bids(position, seat):
            bid = Bid(seat, cards)
            position = dataclasses.replace(position, bid=bid)
            made.append(bid)
    return made


def trump_from_kitty(
    kitty: Sequence[Card], level: Rank, rule: NoBid
) -> tuple[Suit | None, tuple[Card, ...]]:
    """No bid: the kitty decides. Returns the trump suit (``None``: no trump) and the
    kitty cards revealed to decide it."""
    if rule is NoBid.FIRST_KITTY_CARD:
        return kitty[0].suit, (kitty[0],)
    for i, card in enumerate(kitty):
        if card.is_joker or card.rank == level:
            return card.suit, tuple(kitty[: i + 1])
    # None was a level card or joker: the highest rank decides, the first shown on ties.
    best = max(kitty, key=lambda c: (c.rank, -kitty.index(c)))
    return best.suit, tuple(kitty)
