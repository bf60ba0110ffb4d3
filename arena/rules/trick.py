"""Who wins a trick (RULES.md §7, Winning a trick).

A play can beat the current winner only if its cards are all of the led effective suit
or all trumps and can be arranged into exactly the lead's units. Trumps beat a side-suit
lead; within one lane the throw policy compares (by default the largest unit). It must be
strictly higher: equal stays with the earlier play. Under ``all_units`` a play beats a
throw when some arrangement of it beats every unit of the winner's strongest reading
(docs/rules-notes.md, "Winning a trick").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from arena.rules.cards import Card, points
from arena.rules.ruleset import ThrowBeatenBy
from arena.rules.seats import Seat
from arena.rules.trump import TRUMP_LANE, CardOrder
from arena.rules.units import Unit, arrange, arrangements, decompose
from arena.rules.values import quick_init


@dataclasses.dataclass(frozen=True, slots=True)
class TrickResult:
    winner: int
    points: int


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class Leading:
    """The play winning a trick so far: its place in play order, lane and unit keys."""

    place: int
    lane: int
    keys: tuple[int, ...]
    top: int


def first_leading(lead: Sequence[Card], units: Sequence[Unit], order: CardOrder) -> Leading:
    """The lead is winning until something beats it."""
    key = order.key
    keys = tuple(u.high for u in units)
    if order.rules.throw_beaten_by is ThrowBeatenBy.ALL_UNITS and len(units) > 1:
        found = arrangements(lead, units, order)  # the lead's own cards read every way
        keys = tuple(max(column) for column in zip(keys, *found, strict=True))
    return Leading(0, order.lane[lead[0].index], keys, max(key[c.index] for c in lead))


def next_leading(
    leading: Leading,
    place: int,
    play: Sequence[Card],
    units: Sequence[Unit],
    led: int,
    order: CardOrder,
) -> Leading:
    """Who leads the trick after ``play`` (at ``place`` in play order) joins it."""
    lane = order.lane
    play_lane = lane[play[0].index]
    if play_lane not in (led, TRUMP_LANE) or any(lane[c.index] != play_lane for c in play):
        return leading  # a mixed play, or neither the led suit nor trumps, never wins
    policy = order.rules.throw_beaten_by
    if policy is ThrowBeatenBy.ALL_UNITS and len(units) > 1:
        return _all_units(leading, place, play, units, play_lane, order)
    arranged = arrange(play, units, order)
    if arranged is None:
        return leading  # it does not fit the lead's shape
    keys = tuple(arranged)
    top = max(order.key[c.index] for c in play)
    if play_lane != leading.lane:
        wins = play_lane == TRUMP_LANE
    elif policy is ThrowBeatenBy.LARGEST_UNIT:
        wins = keys[0] > leading.keys[0]
    elif policy is ThrowBeatenBy.ALL_UNITS:
        wins = all(k > b for k, b in zip(keys, leading.keys, strict=True))
    else:
        wins = top > leading.top
    return Leading(place, play_lane, keys, top) if wins else leading


def _all_units(
    leading: Leading,
    place: int,
    play: Sequence[Card],
    units: Sequence[Unit],
    play_lane: int,
    order: CardOrder,
) -> Leading:
    """``throw_beaten_by: all_units`` against a throw: the play wins when one way of
    arranging it beats every unit of the winner, however the winner's cards are read.

    A play's cards may fit the lead's units in several ways (a pair serves as two
    singles, a held tractor as pairs); the first-fit arrangement of :func:`arrange` is
    only one of them. So the winner's keys are, unit by unit, the highest any of its
    arrangements reaches, and a challenger wins if any of its arrangements is strictly
    higher in every unit (units of one shape matched highest to highest).
    """
    found = arrangements(play, units, order)
    if not found:
        return leading  # it does not fit the lead's shape
    if play_lane != leading.lane:
        wins = play_lane == TRUMP_LANE
    else:
        wins = any(all(k > b for k, b in zip(keys, leading.keys, strict=True)) for keys in found)
    if not wins:
        return leading
    best = tuple(max(column) for column in zip(*found, strict=True))
    return Leading(place, play_lane, best, max(order.key[c.index] for c in play))


def trick_winner(
    leader: int,
    plays: Sequence[Sequence[Card]],
    order: CardOrder,
    lead_units: Sequence[Unit] | None = None,
) -> TrickResult:
    """The seat that wins the trick and the points in it. ``plays`` are in play order,
    the leader's first; the leader's play is what landed (a forced unit after a failed
    throw). Fewer than four plays give who is winning so far."""
    lead = plays[0]
    units = list(lead_units) if lead_units is not None else decompose(lead, order)
    led = order.lane[lead[0].index]
    leading = first_leading(lead, units, order)
    for i in range(1, len(plays)):
        leading = next_leading(leading, i, plays[i], units, led, order)
    return TrickResult(Seat(leader).after(leading.place), sum(points(p) for p in plays))
