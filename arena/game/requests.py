"""What a seat is asked, and the in-process bot interface.

A :class:`Request` is a decision plus the seat's view, the events it has not seen yet
and the fallback. The referee sends exactly this to remote bots (translated to protobuf)
and hands it to in-process bots. :class:`SeatFeed` is the only way requests are built, so
every bot's data passes through the redaction of :mod:`arena.game.views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from arena.game.events import Action, DealStarted, Decision, Event
from arena.game.fallback import FallbackBasis
from arena.game.match import MatchMachine
from arena.game.views import (
    SeatView,
    SeatViews,
    indexed_seat_events,
    split_seat_events,
    view_position,
)
from arena.rules import Position, RuleSet


class Request:
    """One decision put to one seat: everything in it is that seat's own.

    It holds no reference to the match: ``view`` and ``events`` are redacted copies,
    and ``fallback`` is computed on first use (most answers are legal and never need
    it) from a frozen :class:`~arena.game.fallback.FallbackBasis`, so it stays what it was
    when the request was made, whatever the match does since.
    """

    __slots__ = (
        "_basis",
        "_fallback",
        "_position",
        "decision",
        "event_indices",
        "events",
        "rules",
        "view",
    )

    def __init__(
        self,
        decision: Decision,
        view: SeatView,
        events: tuple[Sequence[int], Sequence[Event]],  # (indices, events): split_seat_events
        rules: RuleSet,
        basis: FallbackBasis,
    ) -> None:
        self.decision = decision
        self.view = view
        indices, redacted = events
        self.events: tuple[Event, ...] = tuple(redacted)  # redacted, since its last request
        self.event_indices: tuple[int, ...] = tuple(indices)  # their indices in the match
        self.rules = rules
        self._basis = basis
        self._fallback: Action | None = None
        self._position: Position | None = None

    @property
    def seat(self) -> int:
        return self.decision.seat

    @property
    def position(self) -> Position:
        """The seat's view as a :class:`~arena.rules.Position` (others' hands unknown),
        for the legality API (``check_play``, ``legal_plays``...)."""
        if self._position is None:
            self._position = view_position(self.view, self.rules)
        return self._position

    @property
    def fallback(self) -> Action:
        if self._fallback is None:
            self._fallback = self._basis.answer()
        return self._fallback


class Bot(Protocol):
    """An in-process bot: answers a request with an action (cards; empty = pass)."""

    name: str

    def decide(self, request: Request) -> Action: ...


class SeatFeed:
    """Builds each seat's requests, remembering which events each seat has been sent."""

    def __init__(self, match: MatchMachine) -> None:
        self.match = match
        self.views = SeatViews(match)  # kept up to date, not rebuilt per request
        self._cursor = [0, 0, 0, 0]

    def request(self, decision: Decision) -> Request:
        seat = decision.seat
        match = self.match
        events, cursor = match.events, self._cursor[seat]
        new = split_seat_events(events[cursor:], seat, cursor)
        self._cursor[seat] = len(events)
        basis = match.fallback_basis(seat)
        return Request(decision, self.views.view(seat), new, match.rules, basis)

    def catch_up(self, seat: int) -> list[tuple[int, Event]]:
        """The events ``seat`` has not been sent yet, with their indices (at the end)."""
        events = self.match.events
        new = indexed_seat_events(events[self._cursor[seat] :], seat, self._cursor[seat])
        self._cursor[seat] = len(events)
        return new

    def rewind(self, seat: int) -> None:
        """Send ``seat`` the whole current deal again on its next request (after a
        reconnection, when events in flight may have been lost)."""
        events = self.match.events
        start = len(events)
        while start > 0 and not isinstance(events[start - 1], DealStarted):
            start -= 1
        self._cursor[seat] = max(0, start - 1)
