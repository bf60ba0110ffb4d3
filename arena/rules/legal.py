"""Building candidate actions: the referee's fallbacks and the built-in bots' moves.

The functions here *construct* an action; they decide nothing. What is legal is decided
in one place, :mod:`arena.rules.legality`, whose ``fallback_play``, ``follow_with`` and
``fallback_burial`` take a candidate from here and judge it with ``check_play`` (a
refused candidate falls back to ``legal_plays``). Every choice goes through a ``pick``
callable (given candidates, low to high, it returns one), so the same code yields the
deterministic fallback (``pick=lowest``, always the first candidate) and a random bot's
move (a seeded ``rng.choice``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from arena.rules.cards import Card
from arena.rules.follow import profile, take_tractors
from arena.rules.ruleset import FollowRule
from arena.rules.trump import CardOrder
from arena.rules.units import Unit, tally

T = TypeVar("T")
Pick = Callable[[Sequence[T]], T]


def lowest(options: Sequence[T]) -> T:
    """The deterministic chooser: the first (lowest) candidate."""
    return options[0]


def cheapness(order: CardOrder) -> Callable[[Card], int]:
    """Sort key from the card one would most gladly give away to the least."""
    return order.cheap_rank.__getitem__


def fallback_bury(hand: Sequence[Card], count: int, order: CardOrder) -> list[Card]:
    """The ``count`` cheapest cards: side suits before trumps, no points, low first."""
    return order.cheapest_first(list(hand))[:count]


def fallback_lead(hand: Sequence[Card], order: CardOrder) -> list[Card]:
    """The cheapest single card: a low side card without points if there is one."""
    return [min(hand, key=cheapness(order))]


def follow_candidate(
    lead: Sequence[Card],
    hand: Sequence[Card],
    order: CardOrder,
    units: Sequence[Unit],
    pick: Pick[Card] = lowest,
) -> tuple[list[Card], bool]:
    """A follow to ``lead`` (whose units are ``units``) from ``hand``, every free choice
    made by ``pick``, and whether its shape was forced. Forced: every card of the led
    suit the hand holds, the rest picked from the others, when it holds no more than
    the lead's size (RULES.md §7); or any of them under suit-only rules or against a
    lead of singles (no group to match: :func:`~arena.rules.follow.check_follow` takes
    any cards of the led suit then). Otherwise the
    best profile the hand can reach, almost always legal:
    :func:`arena.rules.legality.follow_with` judges it and searches when it is not."""
    n = len(lead)
    lane = order.lane
    led = lane[lead[0].index]
    ordered = order.cheapest_first(list(hand))
    suited = [c for c in ordered if lane[c.index] == led]
    if len(suited) <= n:
        others = [c for c in ordered if lane[c.index] != led]
        return suited + _choose(others, n - len(suited), pick), True
    if order.rules.follow is FollowRule.SUIT_ONLY or all(u.width == 1 for u in units):
        # any n cards of the led suit are legal: suit-only rules, or a lead of singles
        # (the most common follow by far), where the best profile asks for no group.
        # What _shaped would build then, without building the profile: ``suited`` is
        # already cheapest first, as _shaped sorts what is left.
        return _choose(suited, n, pick), True
    return _shaped(suited, units, order, pick), False


def _choose(cards: list[Card], count: int, pick: Pick[Card]) -> list[Card]:
    pool = list(cards)
    chosen: list[Card] = []
    for _ in range(count):
        card = pick(pool)
        pool.remove(card)
        chosen.append(card)
    return chosen


def _shaped(
    suited: list[Card], units: Sequence[Unit], order: CardOrder, pick: Pick[Card]
) -> list[Card]:
    """Meet the best profile the hand can reach: tractor structure, then groups, then fill."""
    best = profile(suited, units, order)
    counts = tally(suited, order)
    play: list[Card] = []
    for width, groups in ((3, best[0]), (2, best[1])):
        for chains in take_tractors(counts, units, width):
            for chain in chains:
                play.extend(face for _, face in chain for _ in range(width))
                groups -= len(chain)
        while groups > 0:
            faces = [f for fs in counts.values() for f, k in fs.items() if k >= width]
            if not faces:
                break
            face = pick(sorted(faces, key=cheapness(order)))
            counts[order.key[face.index]][face] -= width
            play.extend([face] * width)
            groups -= 1
    rest = sorted(
        (f for faces in counts.values() for f, k in faces.items() for _ in range(k)),
        key=cheapness(order),
    )
    return play + _choose(rest, sum(u.size for u in units) - len(play), pick)
