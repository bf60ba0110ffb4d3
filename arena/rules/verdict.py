"""The answer to "is this action legal?": one type for plays, leads, bids and burials.

Every check in :mod:`arena.rules` returns a :class:`Verdict`; a lead's is the richer
:class:`~arena.rules.lead.LeadVerdict` (what lands, what a failed throw costs). A verdict
is true exactly when the action is legal, and an illegal one says why, naming what should
have been played, so the same text serves the referee's fault, ``Check`` and the judge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from arena.rules.cards import Card
from arena.rules.values import quick_init


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    """Whether an action is legal, and if not, why (naming what should have been played)."""

    legal: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.legal


LEGAL = Verdict(True)


def missing_from(hand: Sequence[Card], play: Sequence[Card]) -> list[Card]:
    """The cards of ``play`` that ``hand`` does not hold (as a multiset)."""
    if len(play) == 1:
        return [] if play[0] in hand else list(play)
    remaining = list(hand)
    missing: list[Card] = []
    for card in play:
        try:
            remaining.remove(card)
        except ValueError:
            missing.append(card)
    return missing


__all__ = ["LEGAL", "Verdict", "missing_from"]
