"""The typed content of each record line (docs/records.md), parsed from its JSON.

Every parser checks the decoded object of one line against its model
(:mod:`arena.records.models`, validated by msgspec) and returns a frozen value, or
raises :class:`~arena.records.format.RecordError` naming what is wrong; the reader turns
that into a problem on that line. What a model cannot say (a fault exactly when the
verdict is ``fault``, the digest's form, the footer's result being ``match_ended``) is
checked here after it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final

from arena.game import Event, FaultKind, Kind, MatchEnded, Ruling
from arena.records.format import RecordError, RecordHeader, event_from_dict
from arena.records.models import (
    MODELS,
    AnswerModel,
    CancelModel,
    DeckModel,
    EventModel,
    FooterModel,
    ForfeitModel,
    PenaltyModel,
)
from arena.rules import Card
from arena.rules.models import ModelError, Problem, convert


@dataclasses.dataclass(frozen=True, slots=True)
class DeckLine:
    n: int
    deal: int
    attempt: int
    cards: tuple[Card, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class EventLine:
    n: int
    event: Event


@dataclasses.dataclass(frozen=True, slots=True)
class AnswerLine:
    """One answer fed to the machine: ``played`` was applied; ``sent`` is what the seat
    sent (``None``: nothing usable arrived)."""

    n: int
    seat: int
    seq: int
    kind: Kind
    sent: tuple[Card, ...] | None
    played: tuple[Card, ...]
    requested_at_ms: float
    latency_ms: float
    verdict: Ruling
    fault_kind: FaultKind | None = None
    fault_reason: str | None = None

    @property
    def fault(self) -> bool:
        return self.verdict is Ruling.FAULT

    @property
    def absent(self) -> bool:
        return self.verdict is Ruling.ABSENT


@dataclasses.dataclass(frozen=True, slots=True)
class PenaltyLine:
    n: int
    team: int
    points: int
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class ForfeitLine:
    n: int
    team: int
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class CancelLine:
    n: int
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class Footer:
    n: int
    result: MatchEnded
    faults: tuple[dict[str, Any], ...]
    lines: int
    digest: str


Input = AnswerLine | PenaltyLine | ForfeitLine | CancelLine
Item = RecordHeader | DeckLine | EventLine | Input | Footer


def _model(d: Mapping[str, Any], kind: str) -> Any:
    try:
        return convert(d, MODELS[kind])
    except ModelError as exc:
        raise RecordError(_wording(exc, d)) from None


def _wording(exc: ModelError, d: Mapping[str, Any]) -> str:
    """The reader's messages for what the model refused (docs/records.md's terms)."""
    special = _SPECIAL.get(exc.path) if exc.problem in _REFUSED else None
    return special(exc.value) if special else exc.describe()


_REFUSED: Final = frozenset({Problem.VALUE, Problem.TYPE})
_SPECIAL: Final[dict[str, Callable[[Any], str]]] = {
    "kind": lambda v: f"answer kind {v!r} is not bid, bury or play",
    "verdict": lambda v: f"verdict {v!r} is not accepted, fault or absent",
    "fault.kind": lambda v: f"no fault {v!r}",
}
"""Fields whose refusal the reader words itself: the values they take, by name."""


def _deck(d: Mapping[str, Any], n: int) -> DeckLine:
    m: DeckModel = _model(d, "deck")
    return DeckLine(n, m.deal, m.attempt, m.cards)


def _event(d: Mapping[str, Any], n: int) -> EventLine:
    m: EventModel = _model(d, "event")
    return EventLine(n, event_from_dict(m.event))


def _answer(d: Mapping[str, Any], n: int) -> AnswerLine:
    m: AnswerModel = _model(d, "answer")
    if (m.fault is None) == (m.verdict is Ruling.FAULT):
        raise RecordError(f"a {m.verdict} answer {'with' if m.fault else 'without'} a fault")
    fault_kind: FaultKind | None = None
    fault_reason: str | None = None
    if m.fault is not None:
        fault_kind, fault_reason = m.fault.kind, m.fault.reason
    return AnswerLine(
        n, m.seat, m.seq, m.kind, m.sent, m.played, m.requested_at_ms, m.latency_ms,
        m.verdict, fault_kind, fault_reason,
    )  # fmt: skip


def _penalty(d: Mapping[str, Any], n: int) -> PenaltyLine:
    m: PenaltyModel = _model(d, "penalty")
    return PenaltyLine(n, m.team, m.points, m.reason)


def _forfeit(d: Mapping[str, Any], n: int) -> ForfeitLine:
    m: ForfeitModel = _model(d, "forfeit")
    return ForfeitLine(n, m.team, m.reason)


def _cancel(d: Mapping[str, Any], n: int) -> CancelLine:
    m: CancelModel = _model(d, "cancel")
    return CancelLine(n, m.reason)


def _footer(d: Mapping[str, Any], n: int) -> Footer:
    m: FooterModel = _model(d, "footer")
    result = event_from_dict(m.result)
    if not isinstance(result, MatchEnded):
        raise RecordError(f"footer result is a {result.type} event, not match_ended")
    if not m.digest.startswith("sha256:"):
        raise RecordError(f"footer digest {m.digest!r} is not sha256:<hex>")
    return Footer(n, result, m.faults, m.lines, m.digest)


def _header(d: Mapping[str, Any], n: int) -> RecordHeader:
    return RecordHeader.from_dict(d)


PARSERS: Final[dict[str, Callable[[Mapping[str, Any], int], Item]]] = {
    "header": _header,
    "deck": _deck,
    "event": _event,
    "answer": _answer,
    "penalty": _penalty,
    "forfeit": _forfeit,
    "cancel": _cancel,
    "footer": _footer,
}
"""Each line type's parser: (decoded line, line number) → its typed value."""
