"""Self-play bookkeeping: the tallies and the invariant checks of ``arena selfplay``.

The driving itself (asking, faults, policy, the record) is the referee's, in
:func:`arena.referee.play_match`; only the pure checks live here.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections import Counter
from collections.abc import Sequence

from arena.game.events import DealEnded, Event, TrickWon
from arena.game.snapshot import DealSnapshot, Phase
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


def check_cards(deal: DealSnapshot) -> str | None:
    """Every card of the deck is in exactly one place: hands, undealt, kitty, table, tricks."""
    places: list[Sequence[Card]] = list(deal.hands)
    if deal.phase is Phase.BIDDING:
        places.append(deal.undealt)
    elif deal.phase is not Phase.BURYING:  # while burying, the kitty is in the dealer's hand
        places += [deal.kitty, deal.played, *(p for _, p in deal.plays)]
    where = Counter(itertools.chain.from_iterable(places))  # counted in C: runs per play
    expected = _whole_deck(deal.rules.decks)
    if dict.__eq__(where, expected):  # (Counter's own == walks both in Python)
        return None
    missing = format_cards((expected - where).elements())
    extra = format_cards((where - expected).elements())
    return f"deal {deal.deal}: cards not accounted for: missing [{missing}], extra [{extra}]"


@functools.cache
def _whole_deck(decks: int) -> Counter[Card]:
    return Counter(deck(decks))


def tally_events(stats: SelfplayStats, events: Sequence[Event], decks: int, check: bool) -> None:
    """Count finished deals into ``stats``; with ``check``, each deal's points in play must
    add up to 100 per deck (tricks and kitty)."""
    trick_sum = 0
    for event in events:
        if isinstance(event, TrickWon):
            trick_sum += event.points
        elif isinstance(event, DealEnded):
            stats.deals += 1
            stats.attacker_points += event.attacker_points
            total = trick_sum + points(event.kitty)
            if check and total != 100 * decks:
                stats.violations.append(f"deal {event.deal}: {total} points in play")
            trick_sum = 0
