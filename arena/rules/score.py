"""End of the deal: kitty bonus, the result table, level advancement (RULES.md §8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from arena.rules.cards import Card, Rank, points
from arena.rules.ruleset import KittyMultiplier, RuleSet
from arena.rules.seats import Side
from arena.rules.units import Unit

DEALER = Side.DEALER
ATTACKERS = Side.ATTACKERS


def kitty_multiplier(last_lead: Sequence[Unit], rules: RuleSet) -> int:
    """The kitty multiplier from the largest unit of the last trick's lead (what landed,
    so a failed throw's forced unit): ×2 per card by default (single ×2, pair ×4,
    tractor of 2 pairs ×8)."""
    largest = max(last_lead, key=lambda u: u.rank)
    if rules.kitty_multiplier is KittyMultiplier.LINEAR:
        return 2 * largest.size
    if rules.kitty_multiplier is KittyMultiplier.POWER:
        return int(2**largest.size)
    return int(2 * 2 ** (largest.length if largest.width > 1 else 0))


def kitty_bonus(
    kitty: Sequence[Card], last_lead: Sequence[Unit], rules: RuleSet
) -> tuple[int, int]:
    """``(multiplier, bonus)``: the bonus is the kitty's points times the multiplier."""
    multiplier = kitty_multiplier(last_lead, rules)
    return multiplier, points(kitty) * multiplier


@dataclasses.dataclass(frozen=True, slots=True)
class DealResult:
    """Which team won the deal and how many levels it climbs."""

    winner: Side
    levels: int


def deal_result(attacker_points: int, rules: RuleSet) -> DealResult:
    """The result table of RULES.md §8, scaled by deck count (step 20 × decks).

    Two decks: P ≤ 0 → dealer +3 (+1 per further −40); 5–35 → +2; 40–75 → +1;
    80–115 → attackers take over (+0, or +1 without the dead zone); +1 per further 40.
    """
    step = rules.point_step
    p = attacker_points
    if p < 2 * step:
        if p <= 0:
            levels = 3 + (-p) // step
        elif p < step:
            levels = 2
        else:
            levels = 1
        winner = DEALER
    else:
        levels = (p - 2 * step) // step + (0 if rules.dead_zone else 1)
        winner = ATTACKERS
    if rules.level_cap is not None:
        levels = min(levels, rules.level_cap)
    return DealResult(winner, levels)


def advance(level: Rank, levels: int, as_dealer: bool, rules: RuleSet) -> tuple[Rank, bool]:
    """A team's new level after gaining ``levels``, and whether it has won the match.

    Must-defend levels (RULES.md §8, "A must be defended"): a team arriving at one stops
    there; only a dealer team that kept the deal at that level may move past it. A team
    wins by keeping the deal at A (when A must be defended), or by moving past A (when it
    need not be).
    """
    current = level
    for step in range(levels):
        if current in rules.must_defend and (step > 0 or not as_dealer):
            break
        if current is Rank.ACE:
            return Rank.ACE, True
        current = Rank(current + 1)
    return current, False
