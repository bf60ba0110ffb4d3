"""The hand-written record-line validators that msgspec models replaced (kept verbatim
from arena before the change), as the baseline of ``bench/models.py``. Not used by arena.
"""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from arena.errors import InvalidCards
from arena.game import Kind, MatchEnded, Event, EVENTS
from arena.records import RecordError, RecordHeader
from arena.records.lines import (
    AnswerLine, CancelLine, DeckLine, EventLine, Footer, ForfeitLine, PenaltyLine,
)
from arena.rules import Card, Rank, parse_cards

T = TypeVar("T")
EVENT_TYPES: Final[dict[str, type[Event]]] = {cls.type: cls for cls in EVENTS}

_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dump_line(obj: Mapping[str, Any]) -> bytes:
    return _ENCODER.encode(obj).encode("utf-8") + b"\n"


def decode(chunk: bytes) -> dict[str, Any]:
    return json.loads(chunk.decode("utf-8"))


def need(data: Mapping[str, Any], key: str, kind: type[T]) -> T:
    """``data[key]``, which must be a ``kind`` (an int is never a bool here)."""
    if key not in data:
        raise RecordError(f"missing {key!r}")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordError(f"{key!r} must be {_KIND_NAMES.get(kind, kind.__name__)}: {value!r}")
    return value


def card_list(raw: Any, what: str) -> tuple[Card, ...]:
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise RecordError(f"{what} must be a list of card codes")
    try:
        return tuple(parse_cards(raw))
    except InvalidCards as exc:
        raise RecordError(f"{what}: {exc}") from None


_KIND_NAMES: Final[dict[type, str]] = {
    int: "a whole number",
    str: "a string",
    dict: "an object",
    list: "a list",
    float: "a number",
}

# -- events from JSON --------------------------------------------------------------------

EVENT_TYPES: Final[dict[str, type[Event]]] = {cls.type: cls for cls in EVENTS}
"""Every event a record may hold, by its ``type``."""

Converter = Callable[[Any], Any]
_CONVERTERS: dict[type[Event], list[tuple[str, Converter]]] = {}


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from its ``to_dict()`` form; strict: the rebuilt event must
    give back exactly ``data``.

    Raises:
        RecordError: an unknown type, a missing or extra key, or a value of the wrong kind.
    """
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordError(f"unknown event type {kind!r}")
    converters = _CONVERTERS.get(cls) or _CONVERTERS.setdefault(cls, _converters_for(cls))
    values = {}
    for name, convert in converters:
        if name not in data:
            raise RecordError(f"{kind} event without {name!r}")
        try:
            values[name] = convert(data[name])
        except (TypeError, ValueError) as exc:
            raise RecordError(f"{kind} event: {name!r} {exc}") from None
    event = cls(**values)
    if event.to_dict() != dict(data):
        extra = sorted(set(data) - set(event.to_dict()))
        what = f"unknown keys {extra}" if extra else "values not in their standard form"
        raise RecordError(f"{kind} event has {what}")
    return event


def _converters_for(cls: type[Event]) -> list[tuple[str, Converter]]:
    hints = typing.get_type_hints(cls)
    return [(f.name, _converter(hints[f.name])) for f in dataclasses.fields(cls)]


def _converter(hint: Any) -> Converter:
    if hint is Card:
        return lambda v: Card.parse(_str(v))
    if hint is Rank:
        return lambda v: Rank.parse(_str(v))
    if hint is int or hint is str:
        return _plain(hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):  # Side, Termination, Suit
        return _member(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:
        items = [_converter(a) for a in args if a is not Ellipsis]
        if len(args) == 2 and args[1] is Ellipsis:
            return lambda v: tuple(items[0](x) for x in _list(v))
        return lambda v: tuple(c(x) for c, x in zip(items, _list(v, len(items)), strict=True))
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        convert = _converter(inner)
        return lambda v: None if v is None else convert(v)
    raise TypeError(f"no record converter for {hint!r}")  # pragma: no cover - a new field type


def _plain(kind: type) -> Converter:
    def convert(v: Any) -> Any:
        if not isinstance(v, kind) or isinstance(v, bool):
            raise ValueError(f"must be {_KIND_NAMES[kind]}, not {v!r}")
        return v

    return convert


def _member(kind: type[enum.Enum]) -> Converter:
    def convert(v: Any) -> Any:
        try:
            return kind(_str(v))
        except ValueError:
            words = ", ".join(repr(m.value) for m in kind)
            raise ValueError(f"must be one of {words}, not {v!r}") from None

    return convert


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"must be a code, not {v!r}")
    return v


def _list(v: Any, length: int | None = None) -> list[Any]:
    if not isinstance(v, list) or (length is not None and len(v) != length):
        raise ValueError(f"must be a list{f' of {length}' if length else ''}, not {v!r}")
    return v


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
    verdict = need(d, "verdict", str)
    if "fault" not in d:
        raise RecordError("missing 'fault'")
    fault = d["fault"]
    if verdict not in ("accepted", "fault", "absent"):
        raise RecordError(f"verdict {verdict!r} is not accepted, fault or absent")
    if (fault is None) == (verdict == "fault"):
        raise RecordError(f"a {verdict} answer {'with' if fault else 'without'} a fault")
    fault_kind = fault_reason = None
    if fault is not None:
        fault = need(d, "fault", dict)
        fault_kind, fault_reason = need(fault, "kind", str), need(fault, "reason", str)
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



PARSERS: Final[dict[str, Callable[[Mapping[str, Any], int], Any]]] = {
    "header": lambda d, n: RecordHeader.from_dict(d),
    "deck": _deck,
    "event": _event,
    "answer": _answer,
    "penalty": _penalty,
    "forfeit": _forfeit,
    "cancel": _cancel,
    "footer": _footer,
}
