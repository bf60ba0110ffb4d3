"""Hypothesis strategies that build Tractor positions and deals directly.

Drawing a seed and shuffling with it gives hypothesis nothing to shrink: a failure stays
a 108-card deal from an opaque number. These strategies draw the parts themselves — the
deck's order, the hand size, trump and level, the dealer, the lead, each answer of a
deal — so a failure shrinks to few cards, the deck in its plain order, single leads and
the first legal answer, and hypothesis prints it as a position in the text form
(docs/position.md) that a test can start from.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from arena.game import PASS, Action, Decision, Kind, MatchMachine
from arena.rules import (
    SEATS,
    SUITED_RANKS,
    SUITS,
    Card,
    Position,
    RuleSet,
    Trump,
    apply_play,
    deck,
    legal_burials,
    legal_plays,
)

VARIANTS: list[dict[str, Any]] = [
    {},
    {"decks": 1},
    {"decks": 3},
    {"throw_beaten_by": "all_units", "forced_unit": "first_blocker"},
    {"follow": "suit_only", "throw_penalty": "per_card", "bid_strength": "count_only"},
    {"level_tractors": False, "kitty_multiplier": "power", "no_bid": "first_level_or_joker"},
]
"""Rule variants, the competition rules first (what a failure shrinks to)."""

seats = st.sampled_from(SEATS)
rule_sets = st.sampled_from(VARIANTS).map(RuleSet.from_mapping)
trumps = st.builds(Trump, st.sampled_from(SUITED_RANKS), st.sampled_from([*SUITS, None]))
CHOICES = 12  # answers offered per decision: the fallback and the first legal ones


def decks(rules: RuleSet) -> st.SearchStrategy[list[Card]]:
    """The deck in some order (shrinks to the plain order: pairs of spades first)."""
    return st.permutations(deck(rules.decks))


@st.composite
def leads(draw: st.DrawFn, position: Position) -> tuple[Card, ...]:
    """A lead for the seat to play: some cards of one effective suit of its hand (a
    single unit, or a throw, which may fail)."""
    hand, order = position.hand(position.turn), position.order
    lanes = sorted({order.lane_of(c) for c in hand})
    lane = draw(st.sampled_from(lanes))
    suited = order.sort([c for c in hand if order.lane_of(c) == lane])
    picked = draw(
        st.lists(st.sampled_from(range(len(suited))), min_size=1, max_size=8, unique=True)
    )
    return tuple(suited[i] for i in sorted(picked))


@st.composite
def positions(
    draw: st.DrawFn,
    *,
    rules: RuleSet | None = None,
    max_hand: int = 10,
    plays: st.SearchStrategy[int] | None = None,
) -> Position:
    """A position in the middle of a trick: four hands of equal size (the rest of the
    deck forms the kitty and the cards played before), a trump, a dealer, and ``plays``
    plays of the trick so far (a drawn lead, then legal follows)."""
    rules = rules if rules is not None else draw(rule_sets)
    cards = draw(decks(rules))
    size = draw(st.integers(1, min(max_hand, rules.hand_size)))
    h0, h1, h2, h3 = (tuple(cards[i * size : (i + 1) * size]) for i in range(4))
    trump = draw(trumps)
    kitty = tuple(cards[4 * size : 4 * size + rules.kitty_size])
    position = Position(
        (h0, h1, h2, h3), trump.level, trump, draw(seats), kitty, draw(seats), rules=rules
    )
    for i in range(draw(plays if plays is not None else st.integers(0, 3))):
        if i == 0:
            position = apply_play(position, draw(leads(position)))
        else:
            options = list(itertools.islice(legal_plays(position), CHOICES))
            position = apply_play(position, draw(st.sampled_from(options)))
    return position


# -- whole deals, every answer drawn -------------------------------------------------------


def candidates(match: MatchMachine, decision: Decision) -> Iterator[Action]:
    """The answers hypothesis picks from, the referee's fallback first (what a failure
    shrinks to): for a bid, a pass or any legal bid; else the first legal ones."""
    if decision.kind is Kind.BID:
        yield PASS
        yield from decision.options
        return
    yield match.fallback(decision.seat)
    position = match.deal.position
    more = legal_burials(position) if decision.kind is Kind.BURY else legal_plays(position)
    yield from itertools.islice(more, CHOICES)


@functools.cache
def picks(n: int) -> st.SearchStrategy[int]:
    """An index below ``n`` (one strategy per size: drawing is the hot path)."""
    return st.integers(0, n - 1)


def junk(draw: st.DrawFn, match: MatchMachine, decision: Decision) -> Action:
    """A drawn handful of the seat's cards: mostly illegal, sometimes not."""
    hand = match.deal.snapshot().hands[decision.seat]
    picked = draw(st.lists(st.sampled_from(range(len(hand))), max_size=4, unique=True))
    return tuple(hand[i] for i in sorted(picked))


__all__ = [
    "CHOICES",
    "VARIANTS",
    "candidates",
    "decks",
    "junk",
    "leads",
    "picks",
    "positions",
    "rule_sets",
    "seats",
    "trumps",
]
