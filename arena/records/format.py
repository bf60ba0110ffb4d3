"""The record format's values: the header roster, line encoding, events back from JSON.

docs/records.md is the specification; this module and :mod:`arena.records.reader` are
the only code that knows it. Lines are encoded one way only (:func:`dump_line`), so a
line's bytes, and hence the footer's digest, depend only on its content.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from arena import __version__
from arena.errors import ArenaError, InvalidCards, InvalidRules
from arena.game import EVENTS, Event, FaultPolicy, MatchSetup, TimeControl
from arena.rules import Card, Rank, RuleSet, codes, parse_cards

T = TypeVar("T")

FORMAT: Final = "arena-record"
VERSION: Final = 2  # 2: the deal_revealed event, the "absent" verdict


class RecordError(ArenaError, ValueError):
    """A record line that does not follow the format; the message names what is wrong."""


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRecord:
    """One seat in the header. The token itself is never written, only its SHA-256."""

    name: str
    bot: str  # the command that ran it, or "builtin:NAME"
    version: str = ""
    token_sha256: str = ""

    @classmethod
    def from_token(cls, name: str, bot: str, version: str, token: str) -> SeatRecord:
        return cls(name, bot, version, hashlib.sha256(token.encode()).hexdigest())

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class RecordHeader:
    """The fixed roster of header keys (STYLE.md habit 13); line 0 of every record.

    ``rules``, ``seed`` and ``stacked`` fix the match (:attr:`setup`); the rest says who
    played and under which clock: the referee's :class:`TimeControl` and
    :class:`FaultPolicy`, read forgivingly (a key missing from an older record takes
    the default).
    """

    match_id: str
    rules: RuleSet
    seed: int
    seats: tuple[SeatRecord, ...]
    stacked: Mapping[int, tuple[Card, ...]] = dataclasses.field(default_factory=dict)
    time_control: TimeControl = dataclasses.field(default_factory=TimeControl)
    policy: FaultPolicy = dataclasses.field(default_factory=FaultPolicy)
    arena_version: str = __version__

    def __post_init__(self) -> None:
        if len(self.seats) != 4:
            raise RecordError(f"a header needs four seats, not {len(self.seats)}")

    @classmethod
    def for_setup(
        cls,
        match_id: str,
        setup: MatchSetup,
        seats: Sequence[SeatRecord],
        time_control: TimeControl | None = None,
        policy: FaultPolicy | None = None,
    ) -> RecordHeader:
        stacked = {deal: tuple(cards) for deal, cards in setup.stacked.items()}
        return cls(
            match_id, setup.rules, setup.seed, tuple(seats), stacked,
            time_control or TimeControl(), policy or FaultPolicy(),
        )  # fmt: skip

    @property
    def setup(self) -> MatchSetup:
        return MatchSetup(self.rules, self.seed, dict(self.stacked))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "arena_version": self.arena_version,
            "match_id": self.match_id,
            "rules": self.rules.to_mapping(),
            "seed": self.seed,
            "stacked": {str(deal): codes(cards) for deal, cards in sorted(self.stacked.items())},
            "time_control": self.time_control.to_dict(),
            "policy": self.policy.to_dict(),
            "seats": [seat.to_dict() for seat in self.seats],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecordHeader:
        """Raises :class:`RecordError` naming the first key that is missing or wrong."""
        if data.get("format") != FORMAT:
            raise RecordError(f"not an {FORMAT}: format is {data.get('format')!r}")
        version = data.get("version")
        if version != VERSION:
            raise RecordError(f"format version {version!r}; this arena reads version {VERSION}")
        try:
            rules = RuleSet.from_mapping(need(data, "rules", dict))
        except InvalidRules as exc:
            raise RecordError(f"header rules: {exc}") from None
        stacked: dict[int, tuple[Card, ...]] = {}
        for deal, cards in need(data, "stacked", dict).items():
            if not deal.isdigit():
                raise RecordError(f"header stacked: deal {deal!r} is not a number")
            stacked[int(deal)] = card_list(cards, f"stacked deck {deal}")
        seats = []
        for raw in need(data, "seats", list):
            if not isinstance(raw, dict):
                raise RecordError("header seats: each seat must be an object")
            seats.append(
                SeatRecord(
                    need(raw, "name", str),
                    need(raw, "bot", str),
                    need(raw, "version", str),
                    need(raw, "token_sha256", str),
                )
            )
        return cls(
            need(data, "match_id", str), rules, need(data, "seed", int), tuple(seats), stacked,
            _clock(need(data, "time_control", dict)), _policy(need(data, "policy", dict)),
            need(data, "arena_version", str),
        )  # fmt: skip


def _clock(data: Mapping[str, Any]) -> TimeControl:
    try:
        return TimeControl.from_dict(data)
    except InvalidRules as exc:
        raise RecordError(str(exc)) from None


def _policy(data: Mapping[str, Any]) -> FaultPolicy:
    try:
        return FaultPolicy.from_dict(data)
    except InvalidRules as exc:
        raise RecordError(str(exc)) from None


# -- encoding ----------------------------------------------------------------------------


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def dump_line(obj: Mapping[str, Any]) -> bytes:
    """The one encoding of a line: compact JSON, UTF-8, keys in the given order, ``\\n``."""
    try:
        return _ENCODER.encode(obj).encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate (say, in a seat name): escape everything
        return _ASCII_ENCODER.encode(obj).encode() + b"\n"


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
