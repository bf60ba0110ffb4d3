"""Playing matches in-process with built-in bots, checking invariants as it goes.

This is the synchronous driver used by ``arena selfplay`` and the benchmarks: no
network, no deadlines, no clock. An illegal answer from a bot counts as a fault and
the fallback is played, exactly as the referee would.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence

from arena.errors import IllegalPlay
from arena.game.deal import DealMachine, Phase
from arena.game.events import DealEnded, Kind, TrickWon
from arena.game.match import MatchMachine, MatchSetup
from arena.game.requests import Bot, SeatFeed
from arena.rules import Card, deck, format_cards, points


@dataclasses.dataclass
class SelfplayStats:
    matches: int = 0
    deals: int = 0
    decisions: int = 0
    faults: int = 0
    violations: list[str] = dataclasses.field(default_factory=list)
    team_wins: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    draws: int = 0
    attacker_points: int = 0


def check_cards(deal: DealMachine) -> str | None:
    """Every card of the deck is in exactly one place: hands, undealt, kitty, table, tricks."""
    where: Counter[Card] = Counter()
    for hand in deal.hands:
        where.update(hand)
    if deal.phase is Phase.BIDDING:
        where.update(deal.deck[4 * deal.dealt :])
    elif deal.phase is not Phase.BURYING:  # while burying, the kitty is in the dealer's hand
        where.update(deal.kitty)
        where.update(c for _, p in deal.plays for c in p)
        where.update(deal.played)
    expected = Counter(deck(deal.rules.decks))
    if where != expected:
        missing = format_cards((expected - where).elements())
        extra = format_cards((where - expected).elements())
        return f"deal {deal.deal}: cards not accounted for: missing [{missing}], extra [{extra}]"
    return None


def play_match(
    setup: MatchSetup,
    bots: Sequence[Bot],
    on_decision: Callable[[], None] | None = None,
    stats: SelfplayStats | None = None,
    check: bool = True,
) -> MatchMachine:
    """Play one match to its end with four in-process bots; tally into ``stats``."""
    stats = stats if stats is not None else SelfplayStats()
    match = MatchMachine(setup)
    feed = SeatFeed(match)
    seen = trick_sum = 0
    while not match.finished:
        for decision in match.pending():
            request = feed.request(decision)
            action = bots[decision.seat].decide(request)
            stats.decisions += 1
            try:
                match.answer(decision.seat, action)
            except IllegalPlay:
                stats.faults += 1
                match.answer(decision.seat, request.fallback)
            if on_decision is not None:
                on_decision()
            if check and decision.kind is Kind.PLAY:
                problem = check_cards(match.deal) if not match.finished else None
                if problem:
                    stats.violations.append(problem)
        for event in match.events[seen:]:
            if isinstance(event, TrickWon):
                trick_sum += event.points
            elif isinstance(event, DealEnded):
                stats.deals += 1
                stats.attacker_points += event.attacker_points
                total = trick_sum + points(event.kitty)
                if check and total != 100 * setup.rules.decks:
                    stats.violations.append(f"deal {event.deal}: {total} points in play")
                trick_sum = 0
        seen = len(match.events)
    stats.matches += 1
    result = match.result
    if result is not None:
        if result.winner is None:
            stats.draws += 1
        else:
            stats.team_wins[result.winner] += 1
    return match
