"""What crosses the bridge between the referee (trio) and the gRPC edge (asyncio).

Plain domain values, no protobuf: the trio side says *what* to tell a seat
(:data:`Outgoing`) and hears *what* a seat said (:data:`Inbound`); the edge
(:mod:`arena.server.wire`) is the one place that turns them into wire messages and back.
So the referee's thread never builds a message, and a request's events are converted
once for every seat and spectator by the edge's per-match cache, not once per seat.

Every outgoing item carries ``acked``: the seq of the seat's previous answer whose
acknowledgement rides on it (``VERDICT_FAULTS_ONLY``; 0 = none), so an accepted answer
costs no message and no thread hop of its own.
"""

from __future__ import annotations

import dataclasses
import enum

from arena.game import Action, Event, MatchEnded, Request
from arena.referee import Fault, FaultKind, SeatVerdict, TimeControl
from arena.rules import RuleSet

PROTOCOL = 1  # the protocol version this referee speaks (Hello.protocol, Welcome.protocol)


class VerdictMode(enum.IntEnum):
    """Which Verdicts a bot asked for in its Hello (values as ``arena.v1.VerdictMode``)."""

    EVERY_ANSWER = 0  # a Verdict message after every answer (the original protocol)
    FAULTS_ONLY = 1  # accepted answers acknowledged on the next message instead


# -- trio → edge ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Welcome:
    """The handshake's answer (built by the host, converted at the edge)."""

    seat: int
    match_id: str
    rules: RuleSet
    time_control: TimeControl
    seat_names: tuple[str, ...]
    resumed: bool
    deals: int
    policy: str
    max_faults: int
    acked: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Ask:
    """A decision for the seat: its request, with the clock it is given."""

    seq: int
    request: Request
    deadline_ms: int
    bank_ms: int
    acked: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Judged:
    """A Verdict message: a fault at once, or an accepted answer in ``EVERY_ANSWER`` mode."""

    verdict: SeatVerdict
    acked: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Told:
    """Events that cannot wait for the seat's next request (a Notice)."""

    events: tuple[tuple[int, Event], ...]
    acked: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Ended:
    """The match is over: the stream's last message."""

    result: MatchEnded
    faults: tuple[Fault, ...]
    record: str
    acked: int = 0


Outgoing = Welcome | Ask | Judged | Told | Ended


# -- edge → trio ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    """An Action as the referee reads it, converted at the edge.

    ``cards`` is ``None`` when they name no card (``problem`` says why: a MALFORMED
    fault); ``fault`` is a fault the client reports against itself, with ``reason``.
    ``latency`` is the bot's own time measured at the edge, request written → answer
    read (seconds), or ``None`` when the edge could not pair it with a request.
    """

    seq: int
    cards: Action | None
    problem: str = ""
    fault: FaultKind | None = None
    reason: str = ""
    latency: float | None = None
    size: int = 0  # bytes on the wire, for the seat's buffer bound


@dataclasses.dataclass(frozen=True, slots=True)
class Malformed:
    """Something unreadable arrived on the stream (or a message of the wrong kind)."""

    reason: str


class Signal(enum.Enum):
    ATTACHED = "attached"
    DETACHED = "detached"


Inbound = Answer | Malformed | Signal


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    """A ``Check`` call's action, converted at the edge: ``cards`` is ``None`` when they
    name no card (``problem`` says why); ``count``: how many cards were sent."""

    seq: int
    cards: Action | None
    problem: str
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class CheckVerdict:
    """How the referee would judge a candidate (``Check``'s answer, before the wire)."""

    seq: int
    accepted: bool
    fault: FaultKind | None
    reason: str
    played: Action = ()


def with_ack(item: Outgoing, acked: int) -> Outgoing:
    """``item`` carrying the acknowledgement of ``acked`` (unchanged when 0)."""
    if not acked:
        return item
    if type(item) is Ask:  # once per decision: built directly, replace() is ~5× dearer
        return Ask(item.seq, item.request, item.deadline_ms, item.bank_ms, acked)
    return dataclasses.replace(item, acked=acked)


__all__ = [
    "PROTOCOL",
    "Answer",
    "Ask",
    "Candidate",
    "CheckVerdict",
    "Ended",
    "Inbound",
    "Judged",
    "Malformed",
    "Outgoing",
    "Signal",
    "Told",
    "VerdictMode",
    "Welcome",
    "with_ack",
]
