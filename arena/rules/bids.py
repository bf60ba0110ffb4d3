"""Trump bids (RULES.md §5, Bids).

A bid shows identical cards: one or two level cards of a suit (bids that suit), or a pair
of small or big jokers (bids no trump). A single joker is never a bid. A seat whose bid
is winning may only reinforce it (more copies of the same face); any other seat must bid
strictly stronger.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from arena.rules.cards import Card, Rank, Suit, format_cards
from arena.rules.ruleset import BidStrength, RuleSet
from arena.rules.verdict import Verdict, missing_from

_SUIT_ORDER = {Suit.DIAMONDS: 1, Suit.CLUBS: 2, Suit.HEARTS: 3, Suit.SPADES: 4}


@dataclasses.dataclass(frozen=True, slots=True)
class Bid:
    """``seat`` showed ``cards`` (identical faces)."""

    seat: int
    cards: tuple[Card, ...]

    @property
    def face(self) -> Card:
        return self.cards[0]

    @property
    def suit(self) -> Suit | None:
        """The trump suit this bid names; ``None`` is no trump."""
        return self.face.suit

    def __str__(self) -> str:
        return f"seat {self.seat}: {format_cards(self.cards)}"


def is_bid_shape(cards: Sequence[Card], level: Rank, decks: int = 2) -> bool:
    """Identical level cards (1…decks of them), or two or more identical jokers."""
    if not cards or any(c is not cards[0] for c in cards) or len(cards) > decks:
        return False
    face = cards[0]
    if face.is_joker:
        return len(cards) >= 2
    return face.rank == level


def strength(cards: Sequence[Card], rules: RuleSet) -> tuple[int, int]:
    """Comparable strength of a bid under ``rules.bid_strength``."""
    face = cards[0]
    if rules.bid_strength is BidStrength.COUNT_ONLY:
        return (len(cards), 0)
    if face.is_joker:
        tie = 6 if face.rank is Rank.BIG_JOKER else 5
    elif rules.bid_strength is BidStrength.COUNT_THEN_SUIT:
        tie = _SUIT_ORDER[face.suit] if face.suit else 0
    else:
        tie = 0
    return (len(cards), tie)


def bid_options(
    level: Rank, seat: int, hand: Sequence[Card], winning: Bid | None, rules: RuleSet
) -> list[tuple[Card, ...]]:
    """Every bid ``seat`` may make now, weakest first (RULES.md §5)."""
    counts: dict[Card, int] = {}  # only the cards that can bid (a Counter of the hand is slower)
    for card in hand:
        if card.is_joker or card.rank == level:
            counts[card] = counts.get(card, 0) + 1
    options: list[tuple[Card, ...]] = []
    for face, n in counts.items():
        if face.is_joker:
            sizes = range(2, n + 1)
        elif face.rank == level:
            sizes = range(1, n + 1)
        else:
            continue
        options.extend((face,) * k for k in sizes)
    if winning is not None:
        if winning.seat == seat:
            options = [o for o in options if o[0] is winning.face and len(o) > len(winning.cards)]
        else:
            floor = strength(winning.cards, rules)
            options = [o for o in options if strength(o, rules) > floor]
    options.sort(key=lambda o: (strength(o, rules), o[0].index))
    return options


def judge_bid(
    level: Rank,
    seat: int,
    hand: Sequence[Card],
    winning: Bid | None,
    cards: Sequence[Card],
    rules: RuleSet,
) -> Verdict:
    """Judge one bid; the empty bid (a pass) is always legal."""
    if not cards:
        return Verdict(True)
    if missing_from(hand, cards):
        return Verdict(False, f"not in hand: {format_cards(missing_from(hand, cards))}")
    if not is_bid_shape(cards, level, rules.decks):
        return Verdict(
            False,
            f"{format_cards(cards)} is not a bid: show one or two {level.code}s of a suit, "
            "or a pair of jokers",
        )
    if tuple(cards) in bid_options(level, seat, hand, winning, rules):
        return Verdict(True)
    if winning is not None and winning.seat == seat:
        return Verdict(
            False,
            f"your bid {format_cards(winning.cards)} is winning: "
            "you may only reinforce it with the same card",
        )
    options = bid_options(level, seat, hand, winning, rules)
    shown = "; ".join(format_cards(o) for o in options) or "none (pass)"
    return Verdict(False, f"{format_cards(cards)} does not beat {winning}; legal bids: {shown}")
