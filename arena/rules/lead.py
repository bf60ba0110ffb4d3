"""Leads and the throw check (RULES.md §7, Lead, Throw check, Failed throw).

A lead is cards of one effective suit. One unit is always a legal lead; several units
are a throw, valid only when no other seat (partner included) holds, in the led suit, a
unit of the same kind that beats one of them. A failed throw is not a fault: the leader
plays the forced unit, the rest goes back to the hand (shown to all), and the throwing
team pays the penalty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from arena.rules.cards import Card, format_cards
from arena.rules.ruleset import ForcedUnit, ThrowPenalty
from arena.rules.seats import Seat, Side
from arena.rules.trump import CardOrder
from arena.rules.units import Unit, decompose, runs, tally
from arena.rules.values import quick_init
from arena.rules.verdict import Verdict, missing_from


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class LeadVerdict(Verdict):
    """The judgement of a lead: what lands on the table and what it costs. A failed
    throw is legal (``failed``), its ``reason`` saying who beat which unit."""

    throw: bool = False
    failed: bool = False
    played: tuple[Card, ...] = ()
    returned: tuple[Card, ...] = ()
    blocker: int | None = None
    penalty: int = 0  # the attackers' point change
    units: tuple[Unit, ...] = ()  # the units of what was played


def beats(held: dict[int, dict[Card, int]], unit: Unit) -> bool:
    """Whether cards ``held`` (tallied, led suit only) hold a unit of the same kind that
    beats ``unit``: a higher group of the same width, or a tractor at least as long
    starting higher (a mere higher pair does not beat a tractor)."""
    if unit.length == 1:
        return any(
            key > unit.high and any(n >= unit.width for n in faces.values())
            for key, faces in held.items()
        )
    return any(
        len(run) >= unit.length and run[-unit.length] > unit.low for run in runs(held, unit.width)
    )


def check_lead(
    leader: int,
    hands: Sequence[Sequence[Card]],
    play: Sequence[Card],
    order: CardOrder,
    dealer: int = 0,
) -> LeadVerdict:
    """Judge ``play`` led by ``leader`` against all four ``hands`` (RULES.md §7).

    Returns a verdict; an illegal lead (not in hand, empty, two effective suits) has
    ``legal=False`` and a reason. A failed throw is legal: ``failed=True`` with the forced
    unit in ``played`` and the rest in ``returned``.
    """
    if not play:
        return LeadVerdict(False, "a lead needs at least one card")
    missing = missing_from(hands[leader], play)
    if missing:
        return LeadVerdict(False, f"not in hand: {format_cards(missing)}")
    lane = order.lane
    led = lane[play[0].index]
    if any(lane[c.index] != led for c in play):
        names = sorted({order.lane_name(lane[c.index]) for c in play})
        return LeadVerdict(
            False,
            f"a lead must be one effective suit, not {' and '.join(names)}: {format_cards(play)}",
        )
    units = tuple(decompose(play, order))
    if len(units) == 1:
        return LeadVerdict(True, played=tuple(play), units=units)
    seats = [Seat(leader).after(i) for i in range(1, 4)]  # the others, in play order
    held = {s: tally((c for c in hands[s] if lane[c.index] == led), order) for s in seats}
    beaten = [u for u in units if any(beats(held[s], u) for s in seats)]
    if not beaten:
        return LeadVerdict(True, throw=True, played=tuple(play), units=units)
    if order.rules.forced_unit is ForcedUnit.FIRST_BLOCKER:
        first = next(s for s in seats if any(beats(held[s], u) for u in beaten))
        forced = min((u for u in beaten if beats(held[first], u)), key=_smallness)
    else:
        forced = min(beaten, key=_smallness)
    blocker = next(s for s in seats if beats(held[s], forced))
    returned = list(play)
    for card in forced.cards:
        returned.remove(card)
    return LeadVerdict(
        True,
        reason=f"throw failed: seat {blocker} beats {forced}",
        throw=True,
        failed=True,
        played=forced.cards,
        returned=tuple(returned),
        blocker=blocker,
        penalty=throw_penalty(leader, dealer, len(play), order),
        units=(forced,),
    )


def _smallness(unit: Unit) -> tuple[int, int, int]:
    return (unit.size, unit.low, unit.high)


def throw_penalty(leader: int, dealer: int, cards: int, order: CardOrder) -> int:
    """The attackers' point change for a failed throw of ``cards`` cards by ``leader``."""
    rule = order.rules.throw_penalty
    amount = (
        0 if rule is ThrowPenalty.NONE else 10 * (cards if rule is ThrowPenalty.PER_CARD else 1)
    )
    return amount if Seat(leader).side(dealer) is Side.DEALER else -amount
