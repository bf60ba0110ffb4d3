"""The typed content of each record line (docs/records.md), parsed from its JSON.

Every parser takes the decoded object of one line and returns a frozen value, or raises
:class:`~arena.records.format.RecordError` naming what is wrong; the reader turns that
into a problem on that line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final

from arena.game import Event, FaultKind, Kind, MatchEnded, Ruling
from arena.records.format import RecordError, RecordHeader, card_list, event_from_dict, need
from arena.rules import Card

_MISSING: Final = object()


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


def _deck(d: Mapping[str, Any], n: int) -> DeckLine:
    cards = card_list(need(d, "cards", list), "deck cards")
    return DeckLine(n, need(d, "deal", int), need(d, "attempt", int), cards)


def _event(d: Mapping[str, Any], n: int) -> EventLine:
    return EventLine(n, event_from_dict(need(d, "event", dict)))


def _answer(d: Mapping[str, Any], n: int) -> AnswerLine:
    try:
        kind = Kind(need(d, "kind", str))
    except ValueError:
        raise RecordError(f"answer kind {d['kind']!r} is not bid, bury or play") from None
    sent = None if d.get("sent", 0) is None else card_list(need(d, "sent", list), "sent")
    text = need(d, "verdict", str)
    fault = d.get("fault", _MISSING)
    if fault is _MISSING:
        raise RecordError("missing 'fault'")
    try:
        verdict = Ruling(text)
    except ValueError:
        raise RecordError(f"verdict {text!r} is not accepted, fault or absent") from None
    if (fault is None) == (verdict is Ruling.FAULT):
        raise RecordError(f"a {verdict} answer {'with' if fault else 'without'} a fault")
    fault_kind: FaultKind | None = None
    fault_reason: str | None = None
    if fault is not None:
        fault = need(d, "fault", dict)
        word, fault_reason = need(fault, "kind", str), need(fault, "reason", str)
        try:
            fault_kind = FaultKind(word)
        except ValueError:
            raise RecordError(f"no fault {word!r}") from None
    return AnswerLine(
        n, need(d, "seat", int), need(d, "seq", int), kind, sent,
        card_list(need(d, "played", list), "played"),
        _number(d, "requested_at_ms"), _number(d, "latency_ms"), verdict, fault_kind, fault_reason,
    )  # fmt: skip


def _number(d: Mapping[str, Any], key: str) -> float:
    value = d.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise RecordError(f"{key!r} must be a number: {value!r}")
    return float(value)


def _penalty(d: Mapping[str, Any], n: int) -> PenaltyLine:
    return PenaltyLine(n, need(d, "team", int), need(d, "points", int), need(d, "reason", str))


def _forfeit(d: Mapping[str, Any], n: int) -> ForfeitLine:
    return ForfeitLine(n, need(d, "team", int), need(d, "reason", str))


def _cancel(d: Mapping[str, Any], n: int) -> CancelLine:
    return CancelLine(n, need(d, "reason", str))


def _footer(d: Mapping[str, Any], n: int) -> Footer:
    result = event_from_dict(need(d, "result", dict))
    if not isinstance(result, MatchEnded):
        raise RecordError(f"footer result is a {result.type} event, not match_ended")
    faults = need(d, "faults", list)
    if not all(isinstance(f, dict) for f in faults):
        raise RecordError("footer faults must be objects")
    digest = need(d, "digest", str)
    if not digest.startswith("sha256:"):
        raise RecordError(f"footer digest {digest!r} is not sha256:<hex>")
    return Footer(n, result, tuple(faults), need(d, "lines", int), digest)


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
