"""A seat's fallback, from a frozen copy of what it depends on.

The referee plays the fallback on a timeout or a fault, and a request carries it for the
bot. :class:`FallbackBasis` holds copies of the seat's hand, the card order and the lead's
units — nothing of the live machine — so a request can compute it lazily and it never
goes stale. It holds the seat's own cards only: a request carries it to in-process bots,
so it must not hand them anything the seat's view does not (the redaction of
:mod:`arena.game.views`).
"""

from __future__ import annotations

from typing import NamedTuple

from arena.game.events import PASS, Action, Decision, Kind
from arena.rules import Card, CardOrder, Unit, fallback_bury, fallback_lead, legal_follow


class FallbackBasis(NamedTuple):  # a tuple: immutable, and cheap to make per request
    """A seat's pending decision with the copies of its own hand, the card order and
    the lead's units: all that its fallback (:meth:`answer`) depends on."""

    decision: Decision
    hand: tuple[Card, ...]
    order: CardOrder | None  # None while bidding
    lead_units: tuple[Unit, ...]

    def answer(self) -> Action:
        decision, hand, order = self.decision, self.hand, self.order
        if decision.kind is Kind.BID or order is None:
            return PASS
        if decision.kind is Kind.BURY:
            return tuple(fallback_bury(hand, decision.count, order))
        if not decision.lead:
            return tuple(fallback_lead(hand, order))
        return tuple(legal_follow(decision.lead, hand, order, lead_units=self.lead_units))


__all__ = ["FallbackBasis"]
