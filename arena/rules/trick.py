"""Who wins a trick (RULES.md §7, Winning a trick).

A play can beat the current winner only if its cards are all of the led effective suit
or all trumps and can be arranged into exactly the lead's units. Trumps beat a side-suit
lead; within one lane the throw policy compares (by default the largest unit). It must be
strictly higher: equal stays with the earlier play.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from arena.rules.cards import Card, points
from arena.rules.ruleset import ThrowBeatenBy
from arena.rules.trump import TRUMP_LANE, CardOrder
from arena.rules.units import Unit, arrange, decompose


@dataclasses.dataclass(frozen=True, slots=True)
class TrickResult:
    winner: int
    points: int


def trick_winner(
    leader: int,
    plays: Sequence[Sequence[Card]],
    order: CardOrder,
    lead_units: Sequence[Unit] | None = None,
) -> TrickResult:
    """The seat that wins the trick and the points in it. ``plays`` are in play order,
    the leader's first; the leader's play is what landed (a forced unit after a failed
    throw)."""
    lead = plays[0]
    units = list(lead_units) if lead_units is not None else decompose(lead, order)
    lane = order.lane
    key = order.key
    led = lane[lead[0].index]
    best = 0
    best_lane = led
    best_keys = [u.high for u in units]
    best_top = max(key[c.index] for c in lead)
    policy = order.rules.throw_beaten_by
    for i in range(1, len(plays)):
        play = plays[i]
        play_lane = lane[play[0].index]
        if play_lane not in (led, TRUMP_LANE) or any(lane[c.index] != play_lane for c in play):
            continue
        keys = arrange(play, units, order)
        if keys is None:
            continue
        top = max(key[c.index] for c in play)
        if play_lane != best_lane:
            wins = play_lane == TRUMP_LANE
        elif policy is ThrowBeatenBy.LARGEST_UNIT:
            wins = keys[0] > best_keys[0]
        elif policy is ThrowBeatenBy.ALL_UNITS:
            wins = all(k > b for k, b in zip(keys, best_keys, strict=True))
        else:
            wins = top > best_top
        if wins:
            best, best_lane, best_keys, best_top = i, play_lane, keys, top
    return TrickResult((leader + best) % 4, sum(points(p) for p in plays))
