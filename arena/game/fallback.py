"""A seat's fallback, from a frozen position.

The referee plays the fallback on a timeout or a fault, and a request carries it for the
bot. :class:`FallbackBasis` holds the decision and the deal's
:class:`~arena.rules.Position` at the time it was asked — an immutable value, nothing of
the live machine — so a request can compute it lazily and it never goes stale.
"""

from __future__ import annotations

from typing import NamedTuple

from arena.game.events import PASS, Action, Decision, Kind
from arena.rules import Position, fallback_bury, fallback_lead, legal_follow


class FallbackBasis(NamedTuple):  # a tuple: immutable, and cheap to make per request
    """A seat's pending decision and the position it was asked in: all that its
    fallback (:meth:`answer`) depends on."""

    decision: Decision
    position: Position | None  # None while bidding (the fallback is a pass)

    def answer(self) -> Action:
        decision, position = self.decision, self.position
        if decision.kind is Kind.BID or position is None:
            return PASS
        hand, order = position.hand(decision.seat), position.order
        if decision.kind is Kind.BURY:
            return tuple(fallback_bury(hand, decision.count, order))
        if not decision.lead:
            return tuple(fallback_lead(hand, order))
        return tuple(legal_follow(decision.lead, hand, order, lead_units=position.lead_units))


__all__ = ["FallbackBasis"]
