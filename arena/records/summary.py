"""A record's deals and tricks, gathered from its lines for people and tests.

One function, :func:`summarize`, walks the typed lines in order. Given a seat, it sees
only what that seat saw: every event passes through :func:`arena.game.seat_events` (the
one redaction function), deck lines are skipped and only that seat's answers are kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from arena.game import (
    BidMade,
    CardDealt,
    CardsPlayed,
    DealEnded,
    DealStarted,
    Event,
    Kind,
    KittyBuried,
    KittyTaken,
    PenaltyApplied,
    Redealt,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
    seat_events,
)
from arena.records.lines import AnswerLine, DeckLine, EventLine, Item
from arena.rules import Card


@dataclasses.dataclass
class TrickRecord:
    deal: int
    number: int  # from 1 within the deal
    plays: list[tuple[int, tuple[Card, ...]]]  # (seat, cards landed), in play order
    throw: ThrowFailed | None = None  # the lead was a failed throw
    winner: int | None = None
    points: int | None = None
    attacker_points: int | None = None  # running total after this trick

    @property
    def leader(self) -> int:
        return self.plays[0][0]


@dataclasses.dataclass(frozen=True, slots=True)
class DealFault:
    answer: AnswerLine
    trick: int | None  # the trick in progress, for a play


@dataclasses.dataclass
class DealRecord:
    """One deal (one attempt of it, when the first deal is redealt), as recorded."""

    deal: int
    attempt: int
    started: DealStarted
    deck: tuple[Card, ...] | None  # None when the deck line is missing or hidden
    hands: list[list[Card]] = dataclasses.field(default_factory=lambda: [[], [], [], []])
    bids: list[BidMade] = dataclasses.field(default_factory=list)
    redealt: Redealt | None = None
    trump: TrumpDeclared | None = None
    kitty: KittyTaken | None = None
    burial: KittyBuried | None = None
    tricks: list[TrickRecord] = dataclasses.field(default_factory=list)
    penalties: list[PenaltyApplied] = dataclasses.field(default_factory=list)
    answers: list[AnswerLine] = dataclasses.field(default_factory=list)
    faults: list[DealFault] = dataclasses.field(default_factory=list)
    result: DealEnded | None = None
    _throw: ThrowFailed | None = dataclasses.field(default=None, repr=False)
    _next_trick: int = dataclasses.field(default=1, repr=False)

    def add(self, event: Event) -> None:
        """Take one event of this deal into the summary."""
        if isinstance(event, CardDealt):
            self.hands[event.seat].append(event.card)
        elif isinstance(event, BidMade):
            self.bids.append(event)
        elif isinstance(event, Redealt):
            self.redealt = event
        elif isinstance(event, TrumpDeclared):
            self.trump = event
        elif isinstance(event, KittyTaken):
            self.kitty = event
        elif isinstance(event, KittyBuried):
            self.burial = event
        elif isinstance(event, ThrowFailed):
            self._throw = event
        elif isinstance(event, CardsPlayed):
            trick = self.tricks[-1] if self.tricks else None
            if trick is None or trick.number != event.trick:
                trick = TrickRecord(self.deal, event.trick, [], self._throw)
                self.tricks.append(trick)
                self._throw = None
            trick.plays.append((event.seat, event.cards))
        elif isinstance(event, TrickWon):
            for trick in reversed(self.tricks):
                if trick.number == event.trick:
                    trick.winner, trick.points = event.winner, event.points
                    trick.attacker_points = event.attacker_points
                    break
            self._next_trick = event.trick + 1
        elif isinstance(event, PenaltyApplied):
            self.penalties.append(event)
        elif isinstance(event, DealEnded):
            self.result = event

    def note(self, answer: AnswerLine) -> None:
        """Take one answer (recorded before the events it caused) into the summary."""
        self.answers.append(answer)
        if answer.fault:
            trick = self._next_trick if answer.kind is Kind.PLAY else None
            self.faults.append(DealFault(answer, trick))


def summarize(items: Iterable[Item], seat: int | None = None) -> list[DealRecord]:
    """The deals of a record, in order; with ``seat``, only what that seat saw."""
    deals: list[DealRecord] = []
    deck: DeckLine | None = None
    for item in items:
        if isinstance(item, DeckLine):
            deck = item if seat is None else None
        elif isinstance(item, AnswerLine):
            if deals and (seat is None or item.seat == seat):
                deals[-1].note(item)
        elif isinstance(item, EventLine):
            events = [item.event] if seat is None else seat_events([item.event], seat)
            for event in events:
                if isinstance(event, DealStarted):
                    cards = None
                    if deck is not None and (deck.deal, deck.attempt) == (
                        event.deal,
                        event.attempt,
                    ):
                        cards = deck.cards
                    deals.append(DealRecord(event.deal, event.attempt, event, cards))
                elif deals:
                    deals[-1].add(event)
    return deals


__all__ = ["DealFault", "DealRecord", "TrickRecord", "summarize"]
