"""The trump context: effective suit, order and adjacency of every card (RULES.md §3).

A :class:`Trump` is the deal's level rank and trump suit (``None``: no trump). Joined
with a :class:`RuleSet` it yields a :class:`CardOrder`, two small tables indexed by
``Card.index`` that every rule reads:

- ``lane`` — the effective suit: 0–3 for the side suits ♠♥♣♦, :data:`TRUMP_LANE` for trumps;
- ``key`` — the card's place in its lane. Higher is stronger, equal keys are equal cards
  (the off-suit level cards), and two cards are adjacent exactly when their keys differ
  by one, so a tractor is a run of consecutive keys. Where the rules forbid tractors
  through level cards and jokers, the keys simply leave gaps.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Final

from arena.rules.cards import CARDS, SUITS, Card, Rank, Suit
from arena.rules.ruleset import RuleSet

TRUMP_LANE: Final = 4
LANE_NAMES: Final = ("spades", "hearts", "clubs", "diamonds", "trumps")


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class Trump:
    """The level rank and the trump suit (``None`` for a no-trump deal).

    ``str`` is the short form (``2S``, ``ANT``), ``repr`` rebuilds it.
    """

    level: Rank
    suit: Suit | None

    @classmethod
    def parse(cls, level: str, suit: str | None) -> Trump:
        return cls(Rank.parse(level), None if suit is None else Suit.parse(suit))

    def __str__(self) -> str:
        return f"{self.level.code}{self.suit.value if self.suit else 'NT'}"

    def __repr__(self) -> str:
        suit = f"Suit.{self.suit.name}" if self.suit else "None"
        return f"Trump(Rank.{self.level.name}, {suit})"

    def pretty(self) -> str:
        return f"level {self.level.code}, " + (
            f"trump {self.suit.symbol}" if self.suit else "no trump"
        )


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class CardOrder:
    """Effective suit and order of each card for one trump and rule set.

    Build with :func:`card_order` (cached); compare cards only within a lane.
    """

    trump: Trump
    rules: RuleSet
    lane: tuple[int, ...]
    key: tuple[int, ...]
    hand_rank: dict[Card, int]  # position in a hand sorted as people hold it
    cheap_rank: dict[Card, int]  # position from the card most gladly given away

    def lane_of(self, card: Card) -> int:
        return self.lane[card.index]

    def is_trump(self, card: Card) -> bool:
        return self.lane[card.index] == TRUMP_LANE

    def key_of(self, card: Card) -> int:
        return self.key[card.index]

    def lane_name(self, lane: int) -> str:
        return LANE_NAMES[lane]

    def sort(self, cards: list[Card]) -> list[Card]:
        """Cards by lane (♠♥♣♦, trumps last) then from high to low: a hand as people hold it."""
        return sorted(cards, key=self.hand_rank.__getitem__)

    def cheapest_first(self, cards: list[Card]) -> list[Card]:
        """Side suits before trumps, cards without points first, then low before high."""
        return sorted(cards, key=self.cheap_rank.__getitem__)


def card_order(trump: Trump, rules: RuleSet | None = None) -> CardOrder:
    """The (cached) order tables for ``trump`` under ``rules`` (default: competition)."""
    return _card_order(trump, rules or _DEFAULT_RULES)


_DEFAULT_RULES: Final = RuleSet()


@functools.lru_cache(maxsize=256)
def _card_order(trump: Trump, rules: RuleSet) -> CardOrder:
    level, tsuit = trump.level, trump.suit
    # Side-suit ranks in order with the level rank removed (RULES.md §3).
    plain = [r for r in range(2, 15) if r != level]
    place = {r: i for i, r in enumerate(plain)}
    # The top of the trump lane. Gaps in these keys are what forbid tractors through
    # level cards and jokers (only SJ SJ BJ BJ stays a tractor then).
    gap = 1 if rules.level_tractors else 2
    top = len(plain) - 1 if tsuit is not None else -1
    off_level = top + gap
    suit_level = off_level + (gap if tsuit is not None else 0)
    small = suit_level + gap
    big = small + 1
    lane: list[int] = []
    key: list[int] = []
    for card in CARDS:
        if card.suit is None:
            lane.append(TRUMP_LANE)
            key.append(big if card.rank is Rank.BIG_JOKER else small)
        elif card.rank == level:
            lane.append(TRUMP_LANE)
            key.append(suit_level if card.suit is tsuit else off_level)
        elif card.suit is tsuit:
            lane.append(TRUMP_LANE)
            key.append(place[card.rank])
        else:
            lane.append(SUITS.index(card.suit))
            key.append(place[card.rank])
    by_hand = sorted(CARDS, key=lambda c: (lane[c.index], -key[c.index], c.index))
    by_cheap = sorted(
        CARDS, key=lambda c: (lane[c.index] == TRUMP_LANE, c.points, key[c.index], c.index)
    )
    return CardOrder(
        trump,
        rules,
        tuple(lane),
        tuple(key),
        {c: i for i, c in enumerate(by_hand)},
        {c: i for i, c in enumerate(by_cheap)},
    )
