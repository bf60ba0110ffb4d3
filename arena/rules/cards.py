"""Cards, their 2-character notation, and decks (RULES.md §1 and the notation note).

A card is a *face*: rank + suit (``TS`` is the ten of spades) or one of the jokers
(``SJ`` small, ``BJ`` big). The copies of a face in a multi-deck game are
interchangeable, so a hand is a multiset of faces and a ``Card`` is one of 54 interned
values: compare with ``==`` or ``is``, hash freely, and use ``Card.index`` (0–53) as a
table index in hot paths.
"""

from __future__ import annotations

import enum
import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final

from arena.errors import InvalidCards


class Suit(enum.Enum):
    """A printed suit. Jokers have none."""

    SPADES = "S"
    HEARTS = "H"
    CLUBS = "C"
    DIAMONDS = "D"

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOLS[self]

    @property
    def noun(self) -> str:
        """The plural noun people use: ``hearts``."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Suit:
        try:
            return cls(text.upper())
        except ValueError:
            raise InvalidCards(f"unknown suit {text!r} (one of S H C D)") from None


_SUIT_SYMBOLS: Final = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.CLUBS: "♣", Suit.DIAMONDS: "♦"}
SUITS: Final = (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)


class Rank(enum.IntEnum):
    """A rank; its value is its natural order (jokers above the ace)."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14
    SMALL_JOKER = 15
    BIG_JOKER = 16

    @property
    def code(self) -> str:
        """One character for a suited rank (``T`` for ten); ``SJ``/``BJ`` for jokers."""
        return _RANK_CODES[self]

    @property
    def is_joker(self) -> bool:
        return self >= Rank.SMALL_JOKER

    @classmethod
    def parse(cls, text: str) -> Rank:
        """Parse a level rank: ``2``…``9``, ``T`` (or ``10``), ``J``, ``Q``, ``K``, ``A``."""
        key = text.strip().upper()
        if key == "10":
            key = "T"
        rank = _RANKS_BY_CODE.get(key)
        if rank is None or rank.is_joker:
            raise InvalidCards(f"unknown rank {text!r} (one of 2-9 T J Q K A)")
        return rank


_RANK_CODES: Final = {
    **{Rank(v): str(v) for v in range(2, 10)},
    Rank.TEN: "T",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
    Rank.ACE: "A",
    Rank.SMALL_JOKER: "SJ",
    Rank.BIG_JOKER: "BJ",
}
_RANKS_BY_CODE: Final = {code: rank for rank, code in _RANK_CODES.items()}
SUITED_RANKS: Final = tuple(Rank(v) for v in range(2, 15))


class Card:
    """One face of the deck. Interned: there are exactly 54 ``Card`` objects.

    ``str(card)`` is the notation (``TS``), ``repr(card)`` rebuilds it
    (``Card.parse('TS')``), ``card.pretty()`` is for people (``10♠``).

    Immutable: an interned value shared by every hand, so setting or deleting an
    attribute raises ``AttributeError`` (only :meth:`_make` fills the slots, once). Reads
    stay plain slot reads, as fast as before.
    """

    __slots__ = ("code", "index", "points", "rank", "suit")

    index: int
    suit: Suit | None
    rank: Rank
    code: str
    points: int

    def __new__(cls, index: int) -> Card:  # pragma: no cover - only called to build the table
        raise TypeError("cards are interned: use Card.parse('TS') or the constants in CARDS")

    @classmethod
    def _make(cls, index: int, suit: Suit | None, rank: Rank) -> Card:
        card = object.__new__(cls)
        fill = object.__setattr__
        fill(card, "index", index)
        fill(card, "suit", suit)
        fill(card, "rank", rank)
        fill(card, "code", rank.code if suit is None else rank.code + suit.value)
        fill(card, "points", {Rank.FIVE: 5, Rank.TEN: 10, Rank.KING: 10}.get(rank, 0))
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cards are immutable: cannot set {name!r} of {self.code}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cards are immutable: cannot delete {name!r} of {self.code}")

    @staticmethod
    def parse(text: str) -> Card:
        """Parse one 2-character code (case-insensitive): ``TS``, ``2h``, ``SJ``, ``BJ``."""
        card = _BY_CODE.get(text.strip().upper()) if isinstance(text, str) else None
        if card is None:
            raise InvalidCards(
                f"bad card code {text!r}: rank 2-9 T J Q K A then suit S H C D, or SJ/BJ"
            )
        return card

    @staticmethod
    def from_index(index: int) -> Card:
        return CARDS[index]

    @property
    def is_joker(self) -> bool:
        return self.suit is None

    def pretty(self) -> str:
        if self.suit is None:
            return self.code
        rank = "10" if self.rank is Rank.TEN else self.rank.code
        return rank + self.suit.symbol

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card.parse({self.code!r})"

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (Card.from_index, (self.index,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


def _build_cards() -> tuple[Card, ...]:
    cards = [
        Card._make(i * 13 + (r - 2), s, Rank(r)) for i, s in enumerate(SUITS) for r in range(2, 15)
    ]
    cards.append(Card._make(52, None, Rank.SMALL_JOKER))
    cards.append(Card._make(53, None, Rank.BIG_JOKER))
    return tuple(cards)


CARDS: Final = _build_cards()
"""All 54 faces, indexed by ``Card.index``: spades 2…A, hearts, clubs, diamonds, SJ, BJ."""
_BY_CODE: Final = {c.code: c for c in CARDS}
SMALL_JOKER: Final = CARDS[52]
BIG_JOKER: Final = CARDS[53]


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse codes separated by spaces or commas (or an iterable of codes).

    Raises:
        InvalidCards: naming the first code that does not parse.
    """
    if isinstance(text, str):
        text = text.replace(",", " ").split()
    return [Card.parse(code) for code in text]


def format_cards(cards: Iterable[Card]) -> str:
    """The notation, space separated: ``TS TS JS JS``."""
    return " ".join(c.code for c in cards)


def pretty_cards(cards: Iterable[Card]) -> str:
    return " ".join(c.pretty() for c in cards)


def codes(cards: Iterable[Card]) -> list[str]:
    return list(map(_CODE, cards))  # (in C: no comprehension frame; records call it per line)


_CODE: Final = operator.attrgetter("code")


def deck(decks: int = 2) -> list[Card]:
    """The cards of ``decks`` decks in a fixed order: each face ``decks`` times, face by face."""
    return [c for c in CARDS for _ in range(decks)]


def check_counts(cards: Sequence[Card], decks: int) -> None:
    """Raise :class:`InvalidCards` when some face occurs more often than ``decks`` holds."""
    for card, n in Counter(cards).items():
        if n > decks:
            raise InvalidCards(
                f"{card} appears {n} times, but {decks} deck{'s' if decks != 1 else ''} "
                f"hold only {decks}"
            )


def points(cards: Iterable[Card]) -> int:
    """Point value (RULES.md §1): each 5 is 5, each 10 and K is 10."""
    return sum(c.points for c in cards)
