"""Stacked decks: a whole deck in dealing order, built from the hands a position needs.

:class:`~arena.game.MatchSetup` takes stacked decks (``stacked={deal: cards}``) to play a
chosen position instead of a shuffled one; :func:`stack` builds such a deck from the
cards each seat must hold and fills in the rest, :func:`hands_of` takes one apart, and
:func:`seed_for_first_seat` finds a match seed whose first deal is dealt first to a
given seat. Used by ``arena check-bot`` and by the game tests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from arena.game.shuffle import first_seat
from arena.rules import Card, Rank, Seat, deck, parse_cards

HAND, KITTY = 25, 8  # two decks


def cards(text: str | Iterable[Card]) -> list[Card]:
    """Cards from their codes (``"TS TS JS"``) or as they are."""
    return parse_cards(text) if isinstance(text, str) else list(text)


def stack(
    hands: Sequence[str | Sequence[Card]],
    kitty: str | Sequence[Card] = "",
    first: int = 0,
    *,
    level: str = "2",
    avoid: Mapping[int, Callable[[Card], bool]] | None = None,
) -> list[Card]:
    """A whole two-deck deck in dealing order: card i goes to seat ``Seat(first).after(i)``.

    ``hands[seat]`` lists that seat's cards in the order they are dealt (round 1 first);
    the rest of the deck fills each hand up to 25 cards (dealt after the given ones) and
    the kitty up to 8. Level cards (rank ``level``) and jokers nobody was given go to the
    kitty first, so the fill makes as few bid windows as it can. ``avoid[seat]`` keeps
    cards out of that seat's fill (e.g. ``lambda c: c.suit is Suit.HEARTS`` for a void).

    Raises:
        ValueError: a face is used more often than two decks hold, or the cards do not fit.
    """
    given = [cards(h) for h in hands] + [[]] * (4 - len(hands))
    kit = cards(kitty)
    rest = Counter(deck(2))
    for c in [c for h in given for c in h] + kit:
        if rest[c] == 0:
            raise ValueError(f"{c} used more often than two decks hold")
        rest[c] -= 1
    if any(len(h) > HAND for h in given) or len(kit) > KITTY:
        raise ValueError("a hand holds 25 cards and the kitty 8")
    lvl = Rank.parse(level)
    avoid = avoid or {}
    places: list[list[Card]] = [*given, kit]  # seats 0..3, then the kitty (index 4)
    room = [HAND - len(h) for h in given] + [KITTY - len(kit)]

    def allowed(card: Card) -> list[int]:
        return [i for i in range(5) if i == 4 or not avoid.get(i, _never)(card)]

    pool = sorted(rest.elements(), key=lambda c: (len(allowed(c)), c.index))
    for card in pool:
        options = [i for i in allowed(card) if room[i] > 0]
        if not options:
            raise ValueError(f"no room left for {card}")
        special = card.is_joker or card.rank == lvl
        dest = 4 if special and room[4] > 0 else max(options, key=lambda i: (room[i], -i))
        places[dest] = [*places[dest], card]
        room[dest] -= 1
    out: list[Card] = []
    for i in range(4 * HAND):
        out.append(places[Seat(first).after(i)][i // 4])
    out.extend(places[4])
    assert Counter(out) == Counter(deck(2)), "a stacked deck must be the whole deck"
    return out


def _never(card: Card) -> bool:
    return False


def hands_of(stacked: Sequence[Card], first: int = 0) -> tuple[list[list[Card]], list[Card]]:
    """The inverse of :func:`stack`: each seat's cards in dealing order, and the kitty."""
    hands: list[list[Card]] = [[], [], [], []]
    for i, card in enumerate(stacked[: 4 * HAND]):
        hands[Seat(first).after(i)].append(card)
    return hands, list(stacked[4 * HAND :])


def seed_for_first_seat(seat: int, start: int = 0) -> int:
    """The smallest seed from ``start`` whose first deal is dealt first to ``seat``."""
    seed = start
    while first_seat(seed) != seat:
        seed += 1
    return seed


__all__ = ["HAND", "KITTY", "cards", "hands_of", "seed_for_first_seat", "stack"]
