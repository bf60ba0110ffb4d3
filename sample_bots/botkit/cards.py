"""Cards off the wire through lookup tables, and the ready-made :class:`Turn` a bot decides on.

A wire card is a ``Card{suit, rank}`` of two enums; the bot works with
``arena.rules.Card``, one of 54 interned, immutable faces (``card.suit``, ``card.rank``,
``card.points``, ``card.code``, ``card.index``, ``card.is_joker``) that the referee's own
rules library (``arena.rules``: ``legal_follow``, ``check_follow``, ``trick_winner``, …)
reads. Turning one into the other is a table lookup each way, not a parse: decoding the
cards of a request used to be over half of what ``random_bot`` spent per decision.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from arena.rules import CARDS, Card, CardOrder, Rank, RuleSet, Suit, Trump, card_order
from arena.v1 import arena_pb2 as pb

_ROW: Final = 1 << 32  # a wire rank is an int32: one row of keys per suit, no overlap


def _wire_key(card: Card) -> int:
    suit = pb.JOKER if card.suit is None else 1 + "SHCD".index(card.suit.value)
    return suit * _ROW + int(card.rank)


FROM_WIRE: Final[dict[int, Card]] = {_wire_key(card): card for card in CARDS}
"""``FROM_WIRE[suit * 2**32 + rank]`` is the card of the wire enums ``suit`` and ``rank``
(a KeyError for enums that name no card)."""
TO_WIRE: Final = tuple(
    pb.Card(suit=pb.JOKER if c.suit is None else 1 + "SHCD".index(c.suit.value), rank=int(c.rank))  # type: ignore[arg-type]
    for c in CARDS
)
"""``TO_WIRE[card.index]`` is the wire ``Card`` of ``card`` (copied into each message)."""
_WIRE_SUIT: Final = {pb.SPADES: Suit.SPADES, pb.HEARTS: Suit.HEARTS, pb.CLUBS: Suit.CLUBS,
                     pb.DIAMONDS: Suit.DIAMONDS}  # fmt: skip


def card_from_pb(card: pb.Card) -> Card:
    """The card of one wire ``Card`` (ValueError for enums that name no card)."""
    found = FROM_WIRE.get(card.suit * _ROW + card.rank)
    if found is None:
        raise ValueError(f"no such card: suit {card.suit}, rank {card.rank}")
    return found


def card_to_pb(card: Card) -> pb.Card:
    return TO_WIRE[card.index]


def cards(message_cards: Iterable[pb.Card]) -> list[Card]:
    """The cards of a wire list (``view.hand``, ``bid.cards``, …), in its order."""
    table, row = FROM_WIRE, _ROW
    try:
        return [table[c.suit * row + c.rank] for c in message_cards]
    except KeyError:  # enums that name no card (never from a referee): say which
        return [card_from_pb(c) for c in message_cards]


def to_pb(chosen: Iterable[Card]) -> list[pb.Card]:
    return [TO_WIRE[c.index] for c in chosen]


@dataclass
class Table:
    """What the bot knows between requests: its seat, the match and its rules."""

    seat: int = -1
    rules: RuleSet = field(default_factory=RuleSet)
    faults: int = 0
    match_id: str = ""

    def welcome(self, welcome: pb.Welcome) -> None:
        self.seat = welcome.seat
        self.match_id = welcome.match_id
        self.rules = RuleSet.from_mapping({k: json.loads(v) for k, v in welcome.rules.items()})

    def order(self, view: pb.View) -> CardOrder:
        """Effective suits and card order for this deal (before trump is declared: the
        level cards and jokers are the only trumps)."""
        trump = view.trump
        suit = None if trump.no_trump or not trump.suit else _WIRE_SUIT[trump.suit]
        return card_order(Trump(Rank(trump.level), suit), self.rules)


class Turn:
    """One request with its cards ready: what ``decide(turn, table)`` reads.

    The card lists are ``arena.rules.Card`` values made by table lookup, each list made
    once, when first read. The wire fields stay where they were (``turn.kind``,
    ``turn.seq``, ``turn.count``, ``turn.view``, ``turn.events``, ``turn.fallback``,
    ``turn.legal_bids``, ``turn.deadline_ms``, ``turn.time_bank_ms``), so a ``decide``
    written for the raw ``pb.Request`` keeps working; ``turn.request`` is that message.
    """

    def __init__(self, request: pb.Request, table: Table) -> None:
        self.request = request
        self.table = table
        self.seq: int = request.seq
        self.kind: int = request.kind
        self.count: int = request.count
        self.view: pb.View = request.view
        self.hand: list[Card] = cards(request.view.hand)  # every bot reads its hand

    # the rest of the wire request, unchanged
    @property
    def events(self) -> Sequence[pb.Event]:
        return self.request.events

    @property
    def fallback(self) -> pb.Action:
        return self.request.fallback

    @property
    def legal_bids(self) -> Sequence[pb.Bid]:
        return self.request.legal_bids

    @property
    def deadline_ms(self) -> int:
        return self.request.deadline_ms

    @property
    def time_bank_ms(self) -> int:
        return self.request.time_bank_ms

    # the cards, ready
    @cached_property
    def bids(self) -> list[list[Card]]:
        """BID: every legal bid, as cards (passing, ``[]``, is always legal too)."""
        return [cards(b.cards) for b in self.request.legal_bids]

    @cached_property
    def plays(self) -> list[tuple[int, list[Card]]]:
        """The current trick so far: (seat, cards) in play order; empty when leading."""
        return [(p.seat, cards(p.cards)) for p in self.request.view.current_trick.plays]

    @property
    def lead(self) -> list[Card]:
        """The trick's lead, which a follow must match in size and suit; [] when leading."""
        plays = self.plays
        return plays[0][1] if plays else []

    @cached_property
    def fallback_cards(self) -> list[Card]:
        """What the referee would play for the seat on a timeout (a legal answer)."""
        return cards(self.request.fallback.cards)

    @cached_property
    def order(self) -> CardOrder:
        """Trump-aware helpers for this deal: ``is_trump(card)``, ``lane_of(card)`` (the
        effective suit, 0-3 or ``TRUMP_LANE``), ``key_of(card)`` (strength within the
        lane), ``sort(cards)``, ``cheapest_first(cards)``."""
        return self.table.order(self.request.view)

    @property
    def trump_declared(self) -> bool:
        return self.request.view.trump.declared


__all__ = [
    "FROM_WIRE",
    "TO_WIRE",
    "Table",
    "Turn",
    "card_from_pb",
    "card_to_pb",
    "cards",
    "to_pb",
]
