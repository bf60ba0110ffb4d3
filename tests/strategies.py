"""Hypothesis strategies that build Tractor positions and deals directly.

Drawing a seed and shuffling with it gives hypothesis nothing to shrink: a failure stays
a 108-card deal from an opaque number. These strategies draw the parts themselves — the
deck's order, the hand size, trump and level, the dealer, the lead, each answer of a
deal — so a failure shrinks to few cards, the deck in its plain order, single leads and
the first legal answer, and hypothesis prints it as a position in the text form
(docs/position.md) that a test can start from.

A shuffled deck alone rarely puts a pair in a small hand, so :func:`positions` also
draws a *rich lane* (any effective suit, trumps included) and, per seat, a run of that
lane's cards in order (copies side by side: pairs and tractors) dealt before the rest
(the leader's run shrinks to its whole hand, the others' to none);
:func:`leads` then leads a unit of it, a single card, a throw of several units or any
set of one suit. Both shrink to the plain deal and a single card.
``lead_kind`` names what a lead is, for ``hypothesis.event`` statistics
(``pytest --hypothesis-show-statistics``).
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
    TRUMP_LANE,
    Card,
    Position,
    RuleSet,
    Trump,
    apply_play,
    card_order,
    deck,
    decompose,
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


LEAD_STYLES = ("single", "unit", "unit", "throw", "throw", "any")
"""How :func:`leads` picks a lead, simplest first (what a failure shrinks to); a unit
and a throw twice as often as the others."""


@st.composite
def leads(draw: st.DrawFn, position: Position, lane: int | None = None) -> tuple[Card, ...]:
    """A lead for the seat to play, of ``lane`` if it holds some (else a drawn suit):
    a single card, one unit (a pair or a tractor when it has one), a throw of several
    units (which may fail), or any cards of one suit."""
    hand, order = position.hand(position.turn), position.order
    lanes = sorted({order.lane_of(c) for c in hand}, key=lambda held: held != lane)
    led = (
        lanes[0]
        if draw(st.sampled_from((True, True, True, False)))
        else draw(st.sampled_from(lanes))
    )
    suited = order.sort([c for c in hand if order.lane_of(c) == led])
    style = draw(st.sampled_from(LEAD_STYLES))
    if style == "single":
        return (suited[draw(picks(len(suited)))],)
    units = sorted(decompose(suited, order), key=lambda u: -u.size)  # biggest first
    if style == "unit" or (style == "throw" and len(units) == 1):
        shaped = [u for u in units if u.size > 1] or units  # a pair or tractor if held
        return shaped[draw(picks(len(shaped)))].cards
    if style == "throw":
        chosen = draw(st.lists(picks(len(units)), min_size=2, max_size=4, unique=True))
        return tuple(c for i in sorted(chosen) for c in units[i].cards)
    picked = draw(st.lists(picks(len(suited)), min_size=1, max_size=8, unique=True))
    return tuple(suited[i] for i in sorted(picked))


def lead_kind(position: Position) -> str:
    """What the trick's lead is: ``single``, ``pair``, ``tractor`` or ``throw`` (of
    trumps: ``trump …``), or ``none`` when nobody has led."""
    lead = position.lead
    if lead is None:
        return "none"
    order = position.order
    units = decompose(lead, order)
    kind = "throw" if len(units) > 1 else units[0].kind
    return f"trump {kind}" if order.lane_of(lead[0]) == TRUMP_LANE else kind


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
    plays of the trick so far (a drawn lead, then legal follows). Each hand starts with
    a drawn run of the rich lane's cards in order (see the module doc)."""
    rules = rules if rules is not None else draw(rule_sets)
    pool = list(draw(decks(rules)))
    size = draw(st.sampled_from(range(1, min(max_hand, rules.hand_size) + 1)))  # uniform
    trump = draw(trumps)
    order = card_order(trump, rules)
    rich = draw(st.sampled_from(sorted({order.lane_of(c) for c in pool})))
    in_lane = order.sort([c for c in pool if order.lane_of(c) == rich])
    hands: list[tuple[Card, ...]] = [(), (), (), ()]
    dealer, leader = draw(seats), draw(seats)
    for seat in (leader, *(s for s in range(4) if s != leader)):  # the leader picks first
        runs = range(min(size, len(in_lane)) + 1)  # uniform: long runs too; the leader's
        run = draw(st.sampled_from(runs if seat != leader else runs[::-1]))  # longest first
        faces = [
            i for i, c in enumerate(in_lane)
            if (i == 0 or in_lane[i - 1] is not c) and i + run <= len(in_lane)
        ] or [0]  # fmt: skip
        start = draw(st.sampled_from(faces))  # at a face: its copies come in together
        taken = in_lane[start : start + run]
        del in_lane[start : start + run]
        for card in taken:
            pool.remove(card)
        rest, pool = pool[: size - run], pool[size - run :]
        for card in rest:
            if order.lane_of(card) == rich:
                in_lane.remove(card)
        hands[seat] = (*taken, *rest)
    h0, h1, h2, h3 = hands
    kitty = tuple(pool[: rules.kitty_size])
    position = Position(
        (h0, h1, h2, h3), trump.level, trump, dealer, kitty, leader, rules=rules
    ).knowing(order)
    for i in range(draw(plays if plays is not None else st.integers(0, 3))):
        if i == 0:
            position = apply_play(position, draw(leads(position, rich)))
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
    position = match.position
    more = legal_burials(position) if decision.kind is Kind.BURY else legal_plays(position)
    yield from itertools.islice(more, CHOICES)


@functools.cache
def picks(n: int) -> st.SearchStrategy[int]:
    """An index below ``n`` (one strategy per size: drawing is the hot path)."""
    return st.integers(0, n - 1)


def junk(draw: st.DrawFn, match: MatchMachine, decision: Decision) -> Action:
    """A drawn handful of the seat's cards: mostly illegal, sometimes not."""
    hand = match.snapshot().deal.hands[decision.seat]
    picked = draw(st.lists(st.sampled_from(range(len(hand))), max_size=4, unique=True))
    return tuple(hand[i] for i in sorted(picked))


__all__ = [
    "CHOICES",
    "LEAD_STYLES",
    "VARIANTS",
    "candidates",
    "decks",
    "junk",
    "lead_kind",
    "leads",
    "picks",
    "positions",
    "rule_sets",
    "seats",
    "trumps",
]
