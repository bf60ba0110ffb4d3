"""Where the lobby's matches run: this process, or the workers of ``arena serve --workers N``.

The lobby (:mod:`arena.competition.lobby`) decides which bots play which event match;
a *place* hosts the match and says how it ended. :class:`LocalPlace` is a single
``arena serve``'s own :class:`~arena.server.MatchHost`. The workers' place
(:mod:`arena.competition.shards`) asks a worker process to create the match, so the
seat offers carry that worker's address and the bots play there, never through the
front. Both run on the trio thread.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Sequence
from typing import Any, Protocol

import trio

from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet
from arena.server import MatchHost, MatchSpec, MatchState, token_hash


@dataclasses.dataclass(frozen=True)
class Placed:
    """A match a place hosts: its id, its four seat tokens, and where the bots play
    (``""``: this server's own address)."""

    match_id: str
    tokens: list[str]
    address: str = ""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How a placed match ended. ``lost``: it never started and is gone (its worker
    died before its first decision): the lobby puts it back in the queue."""

    state: MatchState
    record: str
    error: str = ""
    absent: tuple[int, ...] = ()  # seats whose bot never connected
    lost: bool = False


class Place(Protocol):
    nursery: trio.Nursery

    def hosts(self, match_id: str) -> bool:
        """Whether ``match_id`` runs here (restored from its record after a crash)."""

    async def create(self, settings: dict[str, Any], seed: int, seats: Sequence[str]) -> Placed:
        """A new match of an event with ``settings`` (the event's JSON settings)."""

    async def reseat(self, match_id: str) -> Placed:
        """Fresh seat tokens for a restored match (the old ones died with the server)."""

    async def outcome(self, match_id: str) -> Outcome:
        """Wait for the match to end."""


def event_spec(settings: dict[str, Any], seed: int, seats: Sequence[str]) -> MatchSpec:
    """The match an event's ``settings`` describe, dealt from ``seed``, ``seats`` named."""
    return MatchSpec(
        rules=RuleSet.from_mapping(settings.get("rules", {})),
        seed=seed,
        time_control=TimeControl.from_dict(settings.get("time_control", {})),
        policy=FaultPolicy.from_dict(
            {"kind": settings.get("policy"), "max_faults": settings.get("max_faults")}
        ),
        seat_names=tuple(seats),
        connect_timeout=float(settings.get("connect_timeout", 30)),
    )


def add_seat_tokens(host: MatchHost, match_id: str) -> list[str]:
    """Four fresh seat tokens admitted to ``match_id`` (a restored match: its bots'
    old tokens are known only by their hashes)."""
    hosted = host.matches[match_id]
    tokens = []
    for seat in range(4):
        token = secrets.token_hex(24)
        host.tokens.add(token, hosted, seat)
        hosted.token_hashes.append(token_hash(token))
        tokens.append(token)
    return tokens


def absent_seats(host: MatchHost, match_id: str) -> tuple[int, ...]:
    """The seats of ``match_id`` whose bot never connected."""
    hosted = host.matches[match_id]
    return tuple(
        seat
        for seat in range(4)
        if (remote := hosted.remote(seat)) is not None and not remote.ever_connected.is_set()
    )


class LocalPlace:
    """This process's matches (a single ``arena serve``)."""

    def __init__(self, host: MatchHost) -> None:
        self.host = host
        self.nursery = host.nursery

    def hosts(self, match_id: str) -> bool:
        return match_id in self.host.matches

    async def create(self, settings: dict[str, Any], seed: int, seats: Sequence[str]) -> Placed:
        hosted = self.host.create(event_spec(settings, seed, seats))
        return Placed(hosted.id, [t or "" for t in hosted.tokens])

    async def reseat(self, match_id: str) -> Placed:
        return Placed(match_id, add_seat_tokens(self.host, match_id))

    async def outcome(self, match_id: str) -> Outcome:
        hosted = self.host.matches[match_id]
        await hosted.done.wait()
        absent = absent_seats(self.host, match_id) if match_id in self.host.matches else ()
        return Outcome(hosted.state, hosted.record or "", hosted.error or "", absent)


__all__ = ["LocalPlace", "Outcome", "Place", "Placed", "absent_seats", "add_seat_tokens",
           "event_spec"]  # fmt: skip
