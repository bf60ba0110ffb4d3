"""Settling a finished deal (RULES.md §8): kitty bonus, result, levels, next dealer."""

from __future__ import annotations

from collections.abc import Sequence

from arena.game.events import DealEnded, team_of
from arena.rules import ATTACKERS, Card, Rank, RuleSet, Unit, advance, deal_result, kitty_bonus


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
    dealer_team = team_of(dealer)
    multiplier = bonus = 0
    if team_of(last_winner) != dealer_team:
        multiplier, bonus = kitty_bonus(kitty, last_units, rules)
    total = trick_points + bonus + penalties + fault_penalties
    result = deal_result(total, rules)
    new = list(levels)
    if result.winner == ATTACKERS:
        team, as_dealer, next_dealer = 1 - dealer_team, False, (dealer + 1) % 4
    else:
        team, as_dealer, next_dealer = dealer_team, True, (dealer + 2) % 4
    new[team], won = advance(new[team], result.levels, as_dealer, rules)
    ended = DealEnded(
        deal, dealer, trick_points, tuple(kitty), multiplier, bonus, penalties, total,
        result.winner, result.levels, (new[0], new[1]), next_dealer, fault_penalties,
    )  # fmt: skip
    return ended, won
