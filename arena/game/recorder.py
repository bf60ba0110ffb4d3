"""What a match driver tells a match record, without knowing how records are written.

The record format and its writer live in :mod:`arena.records` (docs/records.md); this
module only names the calls, so that the referee core can feed a record through
``arena.game`` while it stays pure: no I/O here, the recorder does it.

A driver calls, in the order things happen:

- :meth:`Recorder.deck` when a deal (or redeal attempt) starts, just before its
  ``deal_started`` event; :class:`RecordFeed` gets this order right;
- :meth:`Recorder.events` with every event the machine emitted, unredacted;
- an input method (:meth:`~Recorder.answer`, :meth:`~Recorder.penalty`,
  :meth:`~Recorder.forfeit`, :meth:`~Recorder.cancel`) for everything fed to the machine,
  in the order it was fed, *before* writing the events it caused;
- :meth:`Recorder.close` once, after the match has ended.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from arena.game.domain import FaultKind
from arena.game.events import DealStarted, Event, MatchEnded
from arena.game.match import MatchMachine
from arena.rules import Card


class FaultNote(Protocol):
    """A fault as a record needs it (``arena.referee.Fault`` fits).

    ``to_dict`` is its footer entry.
    """

    @property
    def kind(self) -> FaultKind: ...
    @property
    def reason(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...


class EventSink(Protocol):
    """The part of a recorder that :class:`RecordFeed` writes to."""

    def deck(self, deal: int, attempt: int, cards: Sequence[Card]) -> None: ...
    def events(self, events: Sequence[Event]) -> None: ...


class Recorder(EventSink, Protocol):
    """Where a match record goes: ``arena.records.RecordWriter`` or ``NullRecorder``."""

    def answer(
        self,
        *,
        seat: int,
        seq: int,
        kind: str,
        sent: Sequence[Card] | None,
        played: Sequence[Card],
        requested_at_ms: float,
        latency_ms: float,
        fault: FaultNote | None,
        absent: bool = False,
    ) -> None: ...
    def hold(self) -> None:
        """Keep the lines of the calls that follow, to write them together at
        :meth:`release` (one answer's lines in one write)."""

    def release(self) -> None:
        """Write what :meth:`hold` kept."""

    def penalty(self, team: int, points: int, reason: str) -> None: ...
    def forfeit(self, team: int, reason: str) -> None: ...
    def cancel(self, reason: str) -> None: ...
    def close(self, result: MatchEnded, faults: Sequence[FaultNote]) -> None: ...


class RecordFeed:
    """Passes a match's new decks and events to a sink, each deal's deck just before its
    ``deal_started`` event. Call :meth:`flush` before recording each input and once at
    the end; it writes everything the machine emitted since the last call."""

    def __init__(
        self, match: MatchMachine, sink: EventSink, events_written: int = 0, decks_written: int = 0
    ) -> None:
        """``events_written``/``decks_written``: how many the sink already holds (a record
        being resumed after a crash)."""
        self.match = match
        self.sink = sink
        self._events = events_written
        self._decks = decks_written

    def flush(self) -> None:
        events = self.match.events
        decks = self.match.decks
        while self._decks < len(decks):
            deal, attempt, cards = decks[self._decks]
            start = self._deal_start(deal, attempt)
            if start > self._events:
                self.sink.events(events[self._events : start])
                self._events = start
            self.sink.deck(deal, attempt, cards)
            self._decks += 1
        if self._events < len(events):
            self.sink.events(events[self._events :])
            self._events = len(events)

    def _deal_start(self, deal: int, attempt: int) -> int:
        events = self.match.events
        for i in range(self._events, len(events)):
            e = events[i]
            if isinstance(e, DealStarted) and e.deal == deal and e.attempt == attempt:
                return i
        return len(events)  # pragma: no cover - every deck comes with its deal_started


__all__ = ["EventSink", "FaultNote", "RecordFeed", "Recorder"]
