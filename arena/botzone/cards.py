"""Botzone card ids (0–107) and the per-deal ledger that keeps each physical card's id.

Botzone names a card by an integer: ``n = id % 54`` is the face (52 the small joker, 53
the big one, otherwise rank ``n // 4`` in ``A 2 3 … K`` and suit ``n % 4`` in ``s h c
d``); ids ``n`` and ``n + 54`` are the two copies. arena's cards are faces, so a bridge
must *choose* which copy a face is — and choose once: a Botzone bot rebuilds its hand
from the whole history every turn and fails when a card changes its id.
:class:`DealIds` does that for one seat and one deal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.rules import Card, Rank, Suit

CARD_IDS = 108
_RANKS = (
    Rank.ACE,
    Rank.TWO,
    Rank.THREE,
    Rank.FOUR,
    Rank.FIVE,
    Rank.SIX,
    Rank.SEVEN,
    Rank.EIGHT,
    Rank.NINE,
    Rank.TEN,
    Rank.JACK,
    Rank.QUEEN,
    Rank.KING,
)
_SUITS = (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)
LEVEL_CODES = {Rank.TEN: "0"}  # Botzone writes ten as 0; other ranks as arena does


def face_of(card_id: int) -> Card:
    """The arena card a Botzone id names (raises ``ValueError`` outside 0–107)."""
    if not 0 <= card_id < CARD_IDS:
        raise ValueError(f"card id {card_id} is not in 0-107")
    n = card_id % 54
    if n == 52:
        return Card.parse("SJ")
    if n == 53:
        return Card.parse("BJ")
    return Card.parse(_RANKS[n // 4].code + _SUITS[n % 4].value)


def face_number(card: Card) -> int:
    """The lower of a face's two ids (0–53)."""
    if card.rank is Rank.SMALL_JOKER:
        return 52
    if card.rank is Rank.BIG_JOKER:
        return 53
    assert card.suit is not None
    return _RANKS.index(card.rank) * 4 + _SUITS.index(card.suit)


def level_code(rank: Rank) -> str:
    """A level as Botzone writes it: ``2``…``9``, ``0`` (ten), ``J``, ``Q``, ``K``, ``A``."""
    return LEVEL_CODES.get(rank, rank.code)


class IdClash(Exception):
    """A third copy of a face, or a card taken twice: the events contradict a 2-deck deal."""


class DealIds:
    """The ids one seat has seen in one deal: its hand and every card shown to it.

    A face seen for the first time gets its lowest id no one has used in this deal
    (``n``, then ``n + 54``), so a card another seat plays can never take the id of the
    copy this seat holds. Cards leave the hand by the ids the bot named when it can
    (:meth:`release`), so the bot's own choice of copy is what the history shows.
    """

    def __init__(self) -> None:
        self.used: dict[int, Card] = {}  # id -> face, every id handed out in this deal
        self.hand: set[int] = set()

    def _allocate(self, card: Card) -> int:
        n = face_number(card)
        for card_id in (n, n + 54):
            if card_id not in self.used:
                self.used[card_id] = card
                return card_id
        raise IdClash(f"a third {card} in one deal")

    def receive(self, cards: Iterable[Card]) -> list[int]:
        """Cards coming into this seat's hand (dealt, or the kitty): their new ids."""
        ids = [self._allocate(c) for c in cards]
        self.hand.update(ids)
        return ids

    def seen(self, cards: Iterable[Card]) -> list[int]:
        """Cards another seat played: their ids (new ones, as each physical card shows once)."""
        return [self._allocate(c) for c in cards]

    def release(self, cards: Sequence[Card], named: Sequence[int] = ()) -> list[int]:
        """This seat's own cards leaving its hand (played or buried), preferring the ids
        in ``named`` (what the bot answered) for each face; returns the ids used."""
        preferred = [i for i in named if i in self.hand]
        out: list[int] = []
        for card in cards:
            pick = next((i for i in preferred if self.used[i] is card and i not in out), None)
            if pick is None:
                pick = next(
                    (i for i in sorted(self.hand) if self.used[i] is card and i not in out), None
                )
            if pick is None:
                raise IdClash(f"{card} left the hand, but the hand holds no {card}")
            out.append(pick)
        self.hand.difference_update(out)
        return out

    def hand_faces(self) -> list[Card]:
        return [self.used[i] for i in sorted(self.hand)]
