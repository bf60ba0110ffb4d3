"""The record format's values: the header roster, line encoding, events back from JSON.

docs/records.md is the specification; this module and :mod:`arena.records.reader` are
the only code that knows it. Lines are encoded one way only (:func:`dump_line`), so a
line's bytes, and hence the footer's digest, depend only on its content.
"""

from __future__ import annotations

import dataclasses
import hashlib
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Final

from arena import __version__
from arena.errors import ArenaError, InvalidCards, InvalidRules
from arena.game import EVENTS, Event, FaultPolicy, MatchSetup, TimeControl
from arena.records.models import HeaderModel, encode
from arena.rules import Card, Rank, RuleSet, codes
from arena.rules.models import ModelError, Problem, convert

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
        m = _header_model(data)
        try:
            rules = RuleSet.from_mapping(m.rules)
        except InvalidRules as exc:
            raise RecordError(f"header rules: {exc}") from None
        stacked: dict[int, tuple[Card, ...]] = {}
        for deal, cards in m.stacked.items():
            if not deal.isdigit():
                raise RecordError(f"header stacked: deal {deal!r} is not a number")
            try:
                stacked[int(deal)] = convert(cards, tuple[Card, ...])
            except ModelError as exc:
                raise RecordError(f"header stacked deck {deal}: {exc.describe()}") from None
        seats = tuple(SeatRecord(s.name, s.bot, s.version, s.token_sha256) for s in m.seats)
        return cls(
            m.match_id, rules, m.seed, seats, stacked, _clock(m.time_control),
            _policy(m.policy), m.arena_version,
        )  # fmt: skip


def _header_model(data: Mapping[str, Any]) -> HeaderModel:
    try:
        return convert(data, HeaderModel)
    except ModelError as exc:
        raise RecordError(exc.describe()) from None


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


def dump_line(obj: Mapping[str, Any]) -> bytes:
    """The one encoding of a line: compact JSON, UTF-8, keys in the given order, ``\\n``
    (:func:`arena.records.models.encode`)."""
    return encode(obj if isinstance(obj, dict) else dict(obj))


# -- events from JSON --------------------------------------------------------------------

EVENT_TYPES: Final[dict[str, type[Event]]] = {cls.type: cls for cls in EVENTS}
"""Every event a record may hold, by its ``type``."""


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from its ``to_dict()`` form (the event's dataclass is its model);
    strict: the rebuilt event must give back exactly ``data``.

    Raises:
        RecordError: an unknown type, a missing or extra key, or a value of the wrong kind.
    """
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordError(f"unknown event type {kind!r}")
    try:
        event: Event = convert(_ranks_parsed(data, cls), cls)
    except ModelError as exc:
        if exc.problem is Problem.MISSING:
            raise RecordError(f"{kind} event without {exc.path!r}") from None
        raise RecordError(f"{kind} event: {exc.describe()}") from None
    if event.to_dict() != dict(data):
        extra = sorted(set(data) - set(event.to_dict()))
        what = f"unknown keys {extra}" if extra else "values not in their standard form"
        raise RecordError(f"{kind} event has {what}")
    return event


def _ranks_parsed(data: Mapping[str, Any], cls: type[Event]) -> Mapping[str, Any]:
    """``data`` with its ranks' codes (``"T"``) as :class:`Rank` values: ``Rank`` is an
    ``IntEnum``, which msgspec reads from its number, while records write its code."""
    names = _RANK_FIELDS.get(cls)
    if names is None:
        hints = typing.get_type_hints(cls)
        names = _RANK_FIELDS[cls] = tuple(f for f, h in hints.items() if _holds_rank(h))
    if not names:
        return data
    out = dict(data)
    for name in names:
        value = out.get(name)
        try:
            if isinstance(value, str):
                out[name] = Rank.parse(value)
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                out[name] = [Rank.parse(v) for v in value]
        except InvalidCards as exc:
            raise ModelError(name, Problem.INVALID, value=value, detail=str(exc)) from None
    return out


def _holds_rank(hint: Any) -> bool:
    """``Rank``, ``tuple[Rank, Rank]``, ``Rank | None``: a field whose values are ranks."""
    return hint is Rank or any(_holds_rank(arg) for arg in typing.get_args(hint))


_RANK_FIELDS: dict[type[Event], tuple[str, ...]] = {}
