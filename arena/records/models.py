"""The shape of every record line (docs/records.md) as msgspec models: one definition that
the writer encodes and the reader checks, so the two cannot drift apart.

Field order is the order on disk (``n`` first, then ``type``); :func:`encode` is the one
encoding of a line. A line that does not fit its model is refused by
:func:`arena.rules.models.convert` with a :class:`~arena.rules.models.ModelError`
naming the key; :mod:`arena.records.lines` turns that into a problem on that line.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

import msgspec

from arena.game import FaultKind, Kind, Ruling
from arena.rules import Card


class Model(msgspec.Struct, frozen=True):
    """A record line: its number in the file first, then its type."""

    n: int


class SeatModel(msgspec.Struct, frozen=True):
    name: str
    bot: str
    version: str
    token_sha256: str


class HeaderModel(msgspec.Struct, frozen=True):
    """Line 0 (its ``n`` and ``type`` are the reader's to check), or a header's
    ``to_dict()`` alone."""

    format: str
    version: int
    arena_version: str
    match_id: str
    rules: dict[str, Any]
    seed: int
    stacked: dict[str, Any]  # deal → its deck's codes, converted deal by deal
    time_control: dict[str, Any]
    policy: dict[str, Any]
    seats: tuple[SeatModel, ...]


class DeckModel(Model, frozen=True):
    type: Literal["deck"]
    deal: int
    attempt: int
    cards: tuple[Card, ...]


class EventModel(Model, frozen=True):
    type: Literal["event"]
    event: dict[str, Any]


class FaultModel(msgspec.Struct, frozen=True):
    kind: FaultKind
    reason: str


class AnswerModel(Model, frozen=True):
    type: Literal["answer"]
    seat: int
    seq: int
    kind: Kind
    sent: tuple[Card, ...] | None
    played: tuple[Card, ...]
    requested_at_ms: float
    latency_ms: float
    verdict: Ruling
    fault: FaultModel | None


class PenaltyModel(Model, frozen=True):
    type: Literal["penalty"]
    team: int
    points: int
    reason: str


class ForfeitModel(Model, frozen=True):
    type: Literal["forfeit"]
    team: int
    reason: str


class CancelModel(Model, frozen=True):
    type: Literal["cancel"]
    reason: str


class FooterModel(Model, frozen=True):
    type: Literal["footer"]
    result: dict[str, Any]
    faults: tuple[dict[str, Any], ...]
    lines: int
    digest: str


MODELS: Final[dict[str, type[msgspec.Struct]]] = {
    "header": HeaderModel,
    "deck": DeckModel,
    "event": EventModel,
    "answer": AnswerModel,
    "penalty": PenaltyModel,
    "forfeit": ForfeitModel,
    "cancel": CancelModel,
    "footer": FooterModel,
}
"""Each line type's model, by its ``type``."""


def _enc_hook(value: Any) -> Any:
    if isinstance(value, Card):
        return value.code
    if isinstance(value, int):  # an int subclass: Seat
        return int(value)
    raise NotImplementedError(f"no record encoding for {type(value).__name__}")


_ENCODER: Final = msgspec.json.Encoder(enc_hook=_enc_hook)


def encode(line: Model | dict[str, Any]) -> bytes:
    """The one encoding of a line: compact JSON, UTF-8, fields in order, ``\\n``."""
    try:
        return _ENCODER.encode(line) + b"\n"
    except UnicodeEncodeError:  # a lone surrogate (say, in a seat name): escape everything
        plain = msgspec.to_builtins(line, enc_hook=_enc_hook)
        return json.dumps(plain, separators=(",", ":"), allow_nan=False).encode() + b"\n"
