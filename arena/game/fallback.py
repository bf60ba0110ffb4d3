"""A seat's fallback, from a frozen copy of what it depends on.

The referee plays the fallback on a timeout or a fault, and a request carries it for the
bot. :class:`FallbackBasis` holds copies of the seat's hand, the card order and the trick
in progress — nothing of the live machine — so a request can compute it lazily and it
never goes stale. It holds the seat's own cards only: a request carries it to in-process
bots, so it must not hand them anything the seat's view does not (the redaction of
:mod:`arena.game.views`). The fallback itself is the legality API's
(``fallback_play``, ``fallback_burial``), asked about the seat's own position.

The same basis is the judge's shortcut (issue 20): the deal machine keeps the basis it
handed out for the moment it was made, and :meth:`FallbackBasis.judge` answers for it
when it can without the whole table — the fallback itself (legal by construction: its
verdict is known once it is built) and any follow (a follow is judged on the seat's own
hand and the trick alone). The machine judges everything else itself, and uses none of
this once anything has changed — nor a basis whose fields are no longer the snapshot's
(its private caches are trusted like any code in the process).
"""

from __future__ import annotations

from arena.game.events import PASS, Action, Decision, Kind
from arena.game.snapshot import DealSnapshot
from arena.rules import (
    LEGAL,
    Card,
    CardOrder,
    Position,
    Unit,
    Verdict,
    check_play,
    fallback_burial,
    fallback_play,
    forced_fallback,
)


class FallbackBasis:
    """A seat's pending decision with the copies of its own hand, the card order and
    the trick so far: all that its fallback (:meth:`answer`) depends on. Immutable but
    for its caches (the position, the answer with its verdict), each set once to the
    value it will always have."""

    __slots__ = (
        "_done", "_position", "dealer", "decision", "hand", "lead_units", "leader",
        "order", "plays",
    )  # fmt: skip

    def __init__(
        self,
        decision: Decision,
        hand: tuple[Card, ...],
        order: CardOrder | None,  # None while bidding
        lead_units: tuple[Unit, ...],
        dealer: int | None = None,
        leader: int = 0,  # who led the trick in progress
        plays: tuple[tuple[int, Action], ...] = (),  # the trick so far: (seat, cards), public
    ) -> None:
        self.decision = decision
        self.hand = hand
        self.order = order
        self.lead_units = lead_units
        self.dealer = dealer
        self.leader = leader
        self.plays = plays
        self._position: Position | None = None
        # the answer and its verdict, set together (one store: another thread that reads
        # it sees both or neither — the edge builds the fallback, the referee judges)
        self._done: tuple[Action, Verdict] | None = None

    @classmethod
    def of(cls, decision: Decision, deal: DealSnapshot) -> FallbackBasis:
        """The basis of ``decision`` now: copies of its seat's part of ``deal`` only."""
        return cls(
            decision, deal.hands[decision.seat], deal.order, deal.lead_units,
            deal.dealer, deal.leader, deal.plays,
        )  # fmt: skip

    def __repr__(self) -> str:
        return f"<FallbackBasis {self.decision}>"

    def position(self) -> Position:
        """The seat's own position: its hand (the others' unknown) and the trick."""
        if self._position is not None:
            return self._position
        order = self.order
        if order is None:
            raise ValueError("no position before the trump is declared")
        seat = self.decision.seat
        hands: list[tuple[Card, ...] | None] = [None, None, None, None]
        hands[seat] = self.hand
        h0, h1, h2, h3 = hands
        trump = order.trump
        if self.decision.kind is Kind.BURY:
            position = Position((h0, h1, h2, h3), trump.level, trump, seat, rules=order.rules)
        else:
            position = Position(
                (h0, h1, h2, h3), trump.level, trump, self.dealer, None, self.leader,
                tuple(cards for _, cards in self.plays), rules=order.rules,
                landed_units=self.lead_units if self.plays else None,
            )  # fmt: skip
        self._position = position.knowing(order)
        return self._position

    def answer(self) -> Action:
        """The fallback (computed once)."""
        done = self._done
        if done is None:
            done = self._done = self._build()
        return done[0]

    def _build(self) -> tuple[Action, Verdict]:
        """The fallback and the judge's verdict on it, which its construction decides:
        a pass, a checked burial and a follow are legal (``LEGAL``, what the checks say
        of a legal one); a lead is one card, whose verdict needs the leader's hand only
        (one unit is no throw: no other hand is looked at), so the seat's position gives
        the very ``LeadVerdict`` the whole table would."""
        kind, order = self.decision.kind, self.order
        if kind is Kind.BID or order is None:
            return PASS, LEGAL
        if kind is Kind.PLAY and self.plays:  # a follow: most are forced, built at once
            forced = forced_fallback(self.plays[0][1], self.hand, order, self.lead_units)
            return (forced if forced is not None else fallback_play(self.position())), LEGAL
        position = self.position()
        if kind is Kind.BURY:
            return fallback_burial(position), LEGAL
        cards = fallback_play(position)
        return cards, check_play(position, cards)

    def judge(self, cards: Action) -> Verdict | None:
        """The verdict on ``cards`` as this basis's seat's answer, when the basis alone
        decides it: the fallback once built (its verdict came with it), or any follow
        (judged on the seat's hand and the trick alone); ``None``: judge it on the whole
        table. Valid only while the machine is as it was when the basis was made (the
        machine sees to it)."""
        done = self._done
        if done is not None and cards == done[0]:
            return done[1]
        if self.plays and self.decision.kind is Kind.PLAY:
            return check_play(self.position(), cards)
        return None


class Handouts:
    """The fallback bases a deal machine handed out, one per seat, each with the
    snapshot it was made from: a basis judges for the machine only while that snapshot
    is still the current one (every change of the deal drops the snapshot) and the
    seat's pending decision is the one it was made for."""

    __slots__ = ("_given",)

    def __init__(self) -> None:
        self._given: list[tuple[DealSnapshot, FallbackBasis] | None] = [None, None, None, None]

    def give(self, decision: Decision, snap: DealSnapshot) -> FallbackBasis:
        """A new basis for ``decision`` from ``snap`` (the current snapshot), kept."""
        basis = FallbackBasis.of(decision, snap)
        self._given[decision.seat] = (snap, basis)
        return basis

    def valid(self, decision: Decision, snap: DealSnapshot | None) -> FallbackBasis | None:
        """The basis handed out for ``decision`` if ``snap`` (the machine's current
        snapshot, ``None`` after a change) is the one it was made from, and its fields
        are still the snapshot's own (an in-process bot holds the same basis: one that
        changed them only loses the shortcut)."""
        given = self._given[decision.seat]
        if given is None or given[0] is not snap:
            return None
        basis = given[1]
        if (
            basis.decision is not decision
            or basis.hand is not snap.hands[decision.seat]
            or basis.plays is not snap.plays
            or basis.order is not snap.order
            or basis.lead_units is not snap.lead_units
            or basis.leader != snap.leader
            or basis.dealer != snap.dealer
        ):
            return None
        return basis


__all__ = ["FallbackBasis", "Handouts"]
