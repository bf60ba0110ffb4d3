"""Settling a finished deal (RULES.md §8): kitty bonus, result, levels, next dealer."""

from __future__ import annotations

from collections.abc import Sequence

from arena.game.events import DealEnded
from arena.rules import Card, Rank, RuleSet, Seat, Side, Unit, advance, deal_result, kitty_bonus


def settle_deal(
    rules: RuleSet,
    deal: int,
    dealer: int,
    levels: tuple[Rank, Rank],
    trick_points: int,
    kitty: Sequence[Card],
    last_winner: int,
    last_units: Sequence[Unit],
    penalties: int,
    fault_penalties: int = 0,
) -> tuple[DealEnded, bool]:
    """The deal's result event and whether it won the match.

    ``penalties`` (failed throws) and ``fault_penalties`` (the referee's) are the
    attackers' point changes; the kitty counts only when an attacker won the last trick.
    """
    dealer_seat = Seat(dealer)
    multiplier = bonus = 0
    if Seat(last_winner).side(dealer_seat) is Side.ATTACKERS:
        multiplier, bonus = kitty_bonus(kitty, last_units, rules)
    total = trick_points + bonus + penalties + fault_penalties
    result = deal_result(total, rules)
    new = list(levels)
    team = result.winner.team(dealer_seat)
    if result.winner is Side.ATTACKERS:  # the deal passes to the next seat
        as_dealer, next_dealer = False, dealer_seat.next
    else:  # the dealer's partner deals next
        as_dealer, next_dealer = True, dealer_seat.partner
    new[team], won = advance(new[team], result.levels, as_dealer, rules)
    ended = DealEnded(
        deal, dealer, trick_points, tuple(kitty), multiplier, bonus, penalties, total,
        result.winner, result.levels, (new[0], new[1]), next_dealer, fault_penalties,
    )  # fmt: skip
    return ended, won
