"""What an organiser does to a competition, said once: register bots, manage their
keys, schedule and finish events, read standings.

:class:`Organiser` is the interface ``arena bots`` and ``arena events`` speak; it has
two forms. :class:`LocalOrganiser` works on the database itself (on the server's
machine; the ``Competition`` RPCs are served by one too), and
:class:`arena.competition.client.RemoteOrganiser` makes the same calls over gRPC with
the organiser token, from anywhere.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from arena.competition.plan import EventPlan, create_event
from arena.competition.standings import standings
from arena.competition.store import PENDING, RUNNING, Bot, Store


@dataclasses.dataclass(frozen=True)
class EventProgress:
    name: str
    format: str
    state: str
    matches: int  # scheduled so far
    played: int  # of which over


@dataclasses.dataclass(frozen=True)
class EventStandings:
    name: str
    format: str
    state: str
    data: dict[str, Any]  # :func:`arena.competition.standings.standings`


class Organiser(Protocol):
    def add_bot(self, name: str, owner: str) -> str: ...
    def rotate_key(self, name: str) -> str: ...
    def set_disabled(self, name: str, disabled: bool) -> Bot: ...
    def bots(self) -> list[Bot]: ...
    def create_event(self, plan: EventPlan) -> tuple[str, int]: ...
    def events(self) -> list[EventProgress]: ...
    def finish_event(self, name: str) -> EventProgress: ...
    def standings(self, name: str) -> EventStandings: ...
    def close(self) -> None: ...


class LocalOrganiser:
    """The organiser's operations on the database (errors: ArenaError, NotFound,
    NameTaken from :mod:`arena.competition.store`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add_bot(self, name: str, owner: str) -> str:
        return self.store.add_bot(name, owner)

    def rotate_key(self, name: str) -> str:
        return self.store.rotate_key(name)

    def set_disabled(self, name: str, disabled: bool) -> Bot:
        self.store.set_disabled(name, disabled)
        return next(b for b in self.store.bots() if b.name == name)

    def bots(self) -> list[Bot]:
        return self.store.bots()

    def create_event(self, plan: EventPlan) -> tuple[str, int]:
        return create_event(self.store, plan)

    def events(self) -> list[EventProgress]:
        return [self._progress(e.name) for e in self.store.events()]

    def _progress(self, name: str) -> EventProgress:
        event = self.store.event(name)
        matches = self.store.matches(name)
        played = sum(1 for m in matches if m.state not in (PENDING, RUNNING))
        return EventProgress(event.name, event.format, event.state, len(matches), played)

    def finish_event(self, name: str) -> EventProgress:
        self.store.finish_event(name)
        return self._progress(name)

    def standings(self, name: str) -> EventStandings:
        event = self.store.event(name)
        data = standings(self.store.matches(name))
        return EventStandings(event.name, event.format, event.state, data)

    def close(self) -> None:
        self.store.close()
