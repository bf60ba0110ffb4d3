"""An independent oracle of leads and follows, written from RULES.md §3, §4 and §7 alone.

It shares nothing with ``arena.rules`` but the ``Card`` values (no card order, no units,
no follow profile): the perft test compares the production legality API with it. It is
deliberately naive — brute force over every multiset of the hand — and covers two decks
(no triples) and leads with at most one tractor, which is what the perft positions hold.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence

from arena.rules import Card, Rank, Suit

Faces = tuple[Card, ...]
TRUMP = "trump"


class Table:
    """The order of RULES.md §3 for level ``level`` and trump ``suit`` (None: no trump):
    each card's effective suit and a value where adjacent cards differ by exactly one."""

    def __init__(self, level: Rank, suit: Suit | None) -> None:
        self.level, self.suit = level, suit

    def lane(self, card: Card) -> str:
        if card.is_joker or card.rank == self.level or card.suit is self.suit:
            return TRUMP
        assert card.suit is not None
        return card.suit.value

    def value(self, card: Card) -> int:
        """Place in the lane; off-suit level cards share one value (equal, not adjacent)."""
        plain = [r for r in range(2, 15) if r != self.level]  # side ranks, L removed
        top = len(plain) - 1 if self.suit is not None else -1
        if card.rank is Rank.BIG_JOKER:
            return top + 4 if self.suit is not None else top + 3
        if card.rank is Rank.SMALL_JOKER:
            return top + 3 if self.suit is not None else top + 2
        if card.rank == self.level:
            if self.suit is not None and card.suit is self.suit:
                return top + 2
            return top + 1
        return plain.index(card.rank)


def multisets(cards: Sequence[Card], size: int) -> set[Faces]:
    """Every distinct multiset of ``size`` cards from ``cards`` (as sorted tuples)."""
    return {tuple(sorted(c, key=lambda x: x.index)) for c in itertools.combinations(cards, size)}


def decompose_lead(lead: Sequence[Card], table: Table) -> tuple[int, int, int]:
    """(tractor length, other pairs, singles) of a lead with at most one tractor."""
    counts = Counter(lead)
    pair_values = sorted({table.value(f) for f, n in counts.items() if n == 2})
    best: list[int] = []
    run: list[int] = []
    for v in pair_values:
        run = [*run, v] if run and v == run[-1] + 1 else [v]
        if len(run) > len(best):
            best = run
    pairs = sum(1 for n in counts.values() if n == 2)
    tractor = len(best) if len(best) >= 2 else 0
    singles = sum(1 for n in counts.values() if n == 1)
    return tractor, pairs - tractor, singles


def _partitions(n: int, most: int) -> Iterator[tuple[int, ...]]:
    if n == 0:
        yield ()
        return
    for k in range(min(n, most), 0, -1):
        for rest in _partitions(n - k, k):
            yield (k, *rest)


def requirements(tractor: int, pairs: int) -> list[list[int]]:
    """RULES.md §7's ladder, tightest first: lists of chain lengths (1 = a pair) the
    play must hold. A tractor of n pairs loosens to shorter tractors plus pairs (the
    longest first), then n pairs, then fewer pairs; the lead's other pairs follow."""
    ladder: list[list[int]] = []
    for kept in range(tractor, -1, -1):  # pairs of the tractor still met
        parts = sorted(_partitions(kept, kept), key=lambda p: (-max(p, default=0), len(p)))
        ladder += [[*p, *[1] * pairs] for p in parts]
    ladder += [[1] * p for p in range(pairs - 1, -1, -1)]
    return ladder


def holds(cards: Sequence[Card], chains: list[int], table: Table) -> bool:
    """Whether ``cards`` hold disjoint chains of pairs of these lengths (a chain: pairs
    of one lane on consecutive values), by trying every way to lay them out."""
    pairs = [f for f, n in Counter(cards).items() if n >= 2]

    def lay(i: int, used: frozenset[Card]) -> bool:
        return i == len(chains) or any(grow(i, [f], used) for f in pairs if f not in used)

    def grow(i: int, chain: list[Card], used: frozenset[Card]) -> bool:
        if len(chain) == chains[i]:
            return lay(i + 1, used | set(chain))
        last = chain[-1]
        return any(
            grow(i, [*chain, f], used)
            for f in pairs
            if f not in used and f not in chain and table.lane(f) == table.lane(last)
            and table.value(f) == table.value(last) + 1
        )  # fmt: skip

    return lay(0, frozenset())


def legal_follow(lead: Sequence[Card], hand: Sequence[Card], play: Faces, table: Table) -> bool:
    """RULES.md §7, Follow, for a play of the lead's size taken from ``hand``."""
    led = table.lane(lead[0])
    suited = [c for c in hand if table.lane(c) == led]
    if len(suited) <= len(lead):  # all of the led suit, plus anything
        return not Counter(suited) - Counter(play)
    if any(table.lane(c) != led for c in play):
        return False
    tractor, pairs, _ = decompose_lead(lead, table)
    for chains in requirements(tractor, pairs):
        if holds(suited, chains, table):
            return holds(play, chains, table)
    return True


def follows(lead: Sequence[Card], hand: Sequence[Card], table: Table) -> set[Faces]:
    """Every legal follow, by brute force: each multiset of the right size, filtered."""
    return {p for p in multisets(hand, len(lead)) if legal_follow(lead, hand, p, table)}


def leads(hand: Sequence[Card], table: Table) -> set[Faces]:
    """Every legal lead: any non-empty multiset of one effective suit (RULES.md §7; a
    throw that fails is still a legal lead)."""
    out: set[Faces] = set()
    for size in range(1, len(hand) + 1):
        out |= {p for p in multisets(hand, size) if len({table.lane(c) for c in p}) == 1}
    return out
