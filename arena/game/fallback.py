"""A seat's fallback, from a frozen copy of what it depends on.

The referee plays the fallback on a timeout or a fault, and a request carries it for the
bot. :class:`FallbackBasis` holds copies of the seat's hand, the card order and the trick
in progress — nothing of the live machine — so a request can compute it lazily and it
never goes stale. It holds the seat's own cards only: a request carries it to in-process
bots, so it must not hand them anything the seat's view does not (the redaction of
:mod:`arena.game.views`). The fallback itself is the legality API's
(``fallback_play``, ``fallback_burial``), asked about the seat's own position.
"""

from __future__ import annotations

from typing import NamedTuple

from arena.game.events import PASS, Action, Decision, Kind
from arena.game.snapshot import DealSnapshot
from arena.rules import Card, CardOrder, Position, Unit, fallback_burial, fallback_play


class FallbackBasis(NamedTuple):  # a tuple: immutable, and cheap to make per request
    """A seat's pending decision with the copies of its own hand, the card order and
    the trick so far: all that its fallback (:meth:`answer`) depends on."""

    decision: Decision
    hand: tuple[Card, ...]
    order: CardOrder | None  # None while bidding
    lead_units: tuple[Unit, ...]
    dealer: int | None = None
    leader: int = 0  # who led the trick in progress
    plays: tuple[tuple[int, Action], ...] = ()  # the trick so far: (seat, cards), public

    @classmethod
    def of(cls, decision: Decision, deal: DealSnapshot) -> FallbackBasis:
        """The basis of ``decision`` now: copies of its seat's part of ``deal`` only."""
        return cls(
            decision, deal.hands[decision.seat], deal.order, deal.lead_units,
            deal.dealer, deal.leader, deal.plays,
        )  # fmt: skip

    def position(self) -> Position:
        """The seat's own position: its hand (the others' unknown) and the trick."""
        order = self.order
        if order is None:
            raise ValueError("no position before the trump is declared")
        seat = self.decision.seat
        hands: list[tuple[Card, ...] | None] = [None, None, None, None]
        hands[seat] = self.hand
        h0, h1, h2, h3 = hands
        trump = order.trump
        if self.decision.kind is Kind.BURY:
            return Position((h0, h1, h2, h3), trump.level, trump, seat, rules=order.rules)
        return Position(
            (h0, h1, h2, h3), trump.level, trump, self.dealer, None, self.leader,
            tuple(cards for _, cards in self.plays), rules=order.rules,
            landed_units=self.lead_units if self.plays else None,
        ).knowing(order)  # fmt: skip

    def answer(self) -> Action:
        if self.decision.kind is Kind.BID or self.order is None:
            return PASS
        if self.decision.kind is Kind.BURY:
            return fallback_burial(self.position().knowing(self.order))
        return fallback_play(self.position())


__all__ = ["FallbackBasis"]
