"""Units of play and the decomposition of cards into units (RULES.md §4).

A :class:`Unit` is a single, a pair, (with three decks) a triple, or a tractor: ``length``
groups of ``width`` identical cards on consecutive keys of one lane. Cards of one lane
decompose so that the largest unit is as large as possible: tractors first (longest
first), then pairs, then singles; with three decks, triples and tractors of triples
come before pairs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Final

from arena.errors import IllegalPlay
from arena.rules.cards import Card, format_cards
from arena.rules.trump import CardOrder
from arena.rules.values import quick_init

SINGLE: Final = "single"
PAIR: Final = "pair"
TRIPLE: Final = "triple"
TRACTOR: Final = "tractor"
THROW: Final = "throw"


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class Unit:
    """``length`` groups of ``width`` identical cards on consecutive keys of one lane."""

    width: int
    length: int
    cards: tuple[Card, ...]  # low to high, as people write a tractor: 9S 9S JS JS
    high: int  # key of the highest group
    low: int  # key of the lowest group

    @property
    def kind(self) -> str:
        if self.length > 1:
            return TRACTOR
        return (SINGLE, PAIR, TRIPLE)[self.width - 1]

    @property
    def size(self) -> int:
        return self.width * self.length

    @property
    def rank(self) -> tuple[int, int]:
        """How large the unit is: more cards first, then wider groups."""
        return (self.width * self.length, self.width)

    def describe(self, order: CardOrder) -> str:
        """``a pair of hearts`` / ``a tractor of 2 pairs of trumps``."""
        lane = order.lane_name(order.lane_of(self.cards[0]))
        if self.length == 1:
            return f"a {self.kind} of {lane}"
        group = "pairs" if self.width == 2 else "triples"
        return f"a tractor of {self.length} {group} of {lane}"

    def __str__(self) -> str:
        return format_cards(self.cards)


def tally(cards: Iterable[Card], order: CardOrder) -> dict[int, dict[Card, int]]:
    """Count the cards by key, then by face: the shape every search here walks.

    Several faces share a key only for the off-suit level cards.
    """
    out: dict[int, dict[Card, int]] = {}
    key = order.key
    for card in cards:
        faces = out.get(key[card.index])
        if faces is None:
            out[key[card.index]] = {card: 1}
        else:
            faces[card] = faces.get(card, 0) + 1
    return out


def lanes_of(cards: Iterable[Card], order: CardOrder) -> set[int]:
    lane = order.lane
    return {lane[c.index] for c in cards}


def decompose(cards: Sequence[Card], order: CardOrder) -> list[Unit]:
    """Split cards of one lane into units, largest first (RULES.md §4, Throw).

    Raises:
        IllegalPlay: when the cards are empty or span two effective suits.
    """
    if not cards:
        raise IllegalPlay("no cards")
    if len(cards) == 1:  # the most common case by far: one single
        key = order.key[cards[0].index]
        return [Unit(1, 1, (cards[0],), key, key)]
    lanes = lanes_of(cards, order)
    if len(lanes) > 1:
        names = " and ".join(order.lane_name(x) for x in sorted(lanes))
        raise IllegalPlay(f"cards of more than one effective suit ({names}): {format_cards(cards)}")
    counts = tally(cards, order)
    units: list[Unit] = []
    widths = range(max(n for faces in counts.values() for n in faces.values()), 1, -1)
    # The largest tractor first whatever its width: with three decks a tractor of pairs may
    # take two cards of a triple, and 9 9 9 T T J J is a 3-pair tractor and a single.
    while found := [(len(ch) * w, w, ch) for w in widths if (ch := longest_chain(counts, w))]:
        _, width, chain = max(found, key=lambda f: (f[0], f[1]))
        units.append(take(counts, chain, width))
    for width in widths:
        for key in sorted(counts, reverse=True):
            for face, n in list(counts[key].items()):
                for _ in range(n // width):
                    units.append(take(counts, [(key, face)], width))
    for key in sorted(counts, reverse=True):
        for face, n in list(counts[key].items()):
            units.extend(take(counts, [(key, face)], 1) for _ in range(n))
    units.sort(key=lambda u: (u.rank, u.high), reverse=True)
    return units


def shape_of(units: Sequence[Unit]) -> str:
    """``single``/``pair``/``triple``/``tractor`` for one unit, ``throw`` for several."""
    return units[0].kind if len(units) == 1 else THROW


def runs(counts: dict[int, dict[Card, int]], width: int) -> list[list[int]]:
    """Maximal runs of consecutive keys holding a group of ``width``, low to high."""
    keys = sorted(k for k, faces in counts.items() if any(n >= width for n in faces.values()))
    out: list[list[int]] = []
    for k in keys:
        if out and out[-1][-1] == k - 1:
            out[-1].append(k)
        else:
            out.append([k])
    return out


def longest_chain(
    counts: dict[int, dict[Card, int]], width: int, limit: int | None = None
) -> list[tuple[int, Card]]:
    """The longest tractor of ``width`` (at most ``limit`` groups), highest on ties.

    Returns ``(key, face)`` pairs low to high, or ``[]`` when no tractor exists. When the
    run is longer than ``limit`` the top of the run is taken, leaving the rest in one piece.
    """
    best: list[int] = []
    for run in runs(counts, width):
        part = run if limit is None else run[-limit:]
        if len(part) >= len(best):
            best = part
    if len(best) < 2:
        return []
    return [(k, pick_face(counts[k], width)) for k in best]


def pick_face(faces: dict[Card, int], width: int) -> Card:
    """Of several faces on one key (off-suit level cards), the one a tractor takes.

    RULES.md is silent; we follow the established engine's choice: clubs, then diamonds,
    hearts, spades.
    """
    return min((c for c, n in faces.items() if n >= width), key=_face_preference)


def _face_preference(card: Card) -> int:
    return _PREFERENCE.get(card.suit.value if card.suit else "", 9)


_PREFERENCE: Final = {"C": 0, "D": 1, "H": 2, "S": 3}


def take(counts: dict[int, dict[Card, int]], chain: Sequence[tuple[int, Card]], width: int) -> Unit:
    """Remove ``width`` copies of each face of ``chain`` from ``counts``; return the unit."""
    cards: list[Card] = []
    for key, face in chain:
        faces = counts[key]
        faces[face] -= width
        if not faces[face]:
            del faces[face]
            if not faces:
                del counts[key]
        cards.extend([face] * width)
    return Unit(width, len(chain), tuple(cards), chain[-1][0], chain[0][0])


def chains(
    counts: dict[int, dict[Card, int]], width: int, length: int
) -> list[list[tuple[int, Card]]]:
    """Every placement of a ``length``-group unit of ``width`` in ``counts``, highest first."""
    out: list[list[tuple[int, Card]]] = []
    for run in runs(counts, width):
        for top in range(len(run) - 1, length - 2, -1):
            keys = run[top - length + 1 : top + 1]
            options: list[list[tuple[int, Card]]] = [[]]
            for k in keys:
                faces = sorted(
                    (c for c, n in counts[k].items() if n >= width), key=_face_preference
                )
                options = [[*o, (k, f)] for o in options for f in faces]
            out.extend(options)
    out.sort(key=lambda ch: ch[-1][0], reverse=True)
    return out


def arrange(cards: Sequence[Card], units: Sequence[Unit], order: CardOrder) -> list[int] | None:
    """Arrange ``cards`` into exactly the shapes of ``units`` (a held tractor may serve as
    pairs, a pair as two singles), choosing the highest placement for earlier units.

    Returns the high key of each placed unit, in the order of ``units``, or ``None`` when
    the cards cannot be so arranged (RULES.md §7, Winning a trick).
    """
    if len(cards) == 1 and len(units) == 1 and units[0].size == 1:
        return [order.key[cards[0].index]]  # a single against a single: most follows
    if len(cards) != sum(u.size for u in units):
        return None
    counts = tally(cards, order)
    groups = [u for u in units if u.width > 1]
    placed = _place(counts, groups, 0)
    if placed is None:
        return None
    singles = sorted(
        (k for k, faces in counts.items() for n in faces.values() for _ in range(n)), reverse=True
    )
    out: list[int] = []
    g = iter(placed)
    s = iter(singles)
    for u in units:
        out.append(next(g) if u.width > 1 else next(s))
    return out


def arrangements(
    cards: Sequence[Card], units: Sequence[Unit], order: CardOrder
) -> set[tuple[int, ...]]:
    """Every way to arrange ``cards`` into exactly the shapes of ``units``.

    Each arrangement is the high key of each placed unit in the order of ``units``
    (largest first), with the units of one shape listed highest first, so arrangements
    that only swap two units of the same shape count once. Empty when the cards do not
    fit the shapes. Where :func:`arrange` picks one arrangement (the highest placement
    for the earlier units), this lists all of them: under ``throw_beaten_by: all_units``
    a play beats the winner when *some* arrangement of it beats every unit (a pair may
    serve as two singles), and the winner holds with *every* way its cards can be read.
    """
    if len(cards) != sum(u.size for u in units):
        return set()
    counts = tally(cards, order)
    groups = [u for u in units if u.width > 1]
    singles = len(units) - len(groups)
    found: set[tuple[int, ...]] = set()
    placed: list[int] = []

    def walk(i: int, ceiling: int | None) -> None:
        if i == len(groups):
            rest = sorted((k for k, faces in counts.items() for n in faces.values()
                           for _ in range(n)), reverse=True)  # fmt: skip
            if len(rest) == singles:
                found.add((*placed, *rest))
            return
        unit = groups[i]
        for chain in chains(counts, unit.width, unit.length):
            high = chain[-1][0]
            if ceiling is not None and high > ceiling:
                continue  # the same units in another order: already walked
            for key, face in chain:
                counts[key][face] -= unit.width
            placed.append(high)
            same = i + 1 < len(groups) and _shape(groups[i + 1]) == _shape(unit)
            walk(i + 1, high if same else None)
            placed.pop()
            for key, face in chain:
                counts[key][face] += unit.width

    walk(0, None)
    return found


def _shape(unit: Unit) -> tuple[int, int]:
    return (unit.width, unit.length)


def _place(counts: dict[int, dict[Card, int]], groups: Sequence[Unit], i: int) -> list[int] | None:
    """Place ``groups[i:]`` depth first; on success the placed cards stay removed."""
    if i == len(groups):
        return []
    unit = groups[i]
    for chain in chains(counts, unit.width, unit.length):
        for key, face in chain:
            counts[key][face] -= unit.width
        rest = _place(counts, groups, i + 1)
        if rest is not None:
            return [chain[-1][0], *rest]
        for key, face in chain:
            counts[key][face] += unit.width
    return None
