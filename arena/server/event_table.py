"""The one table between the domain's events and the wire's ``Event`` messages.

Every event class of :data:`arena.game.EVENTS` has one :class:`Row`: the ``oneof`` case
it travels in, and for each of its fields the wire field that carries it. Records write
the same events by their dataclass fields (``Event.to_dict``), so a field that is in the
domain is in the record and, through this table, on the wire. Values are converted by
their type: cards to ``Card`` messages, ranks to ``Rank``, a seat or team that may be
``None`` to -1, a trump suit code to ``Suit``.

The table is checked when this module is imported: a domain event without a row, a
domain field without a wire field, or a wire field that nothing fills raises
``TypeError`` at once (and tests/test_wire_events.py walks every case and field).
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from arena.errors import ProtocolError
from arena.game import (
    EVENTS,
    BidMade,
    CardDealt,
    CardsPlayed,
    DealEnded,
    DealRevealed,
    DealStarted,
    Event,
    KittyBuried,
    KittyTaken,
    MatchEnded,
    PenaltyApplied,
    Redealt,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
)
from arena.rules import CARDS, Card, Rank, Suit
from arena.v1 import arena_pb2 as pb

# -- values ---------------------------------------------------------------------------------

_SUIT_TO_PB: Final = {
    Suit.SPADES: pb.SPADES,
    Suit.HEARTS: pb.HEARTS,
    Suit.CLUBS: pb.CLUBS,
    Suit.DIAMONDS: pb.DIAMONDS,
}
_PB_TO_SUIT: Final = {v: k for k, v in _SUIT_TO_PB.items()}
CARD_TO_PB: Final = {
    c: pb.Card(
        suit=_SUIT_TO_PB[c.suit] if c.suit else pb.JOKER, rank=pb.Rank.ValueType(int(c.rank))
    )
    for c in CARDS
}
PB_TO_CARD: Final = {(m.suit, m.rank): c for c, m in CARD_TO_PB.items()}


class CardField:
    """One repeated ``Card`` field of one message type, each card's encoding at hand.

    Copying ``Card`` messages into a repeated field costs the protobuf runtime about a
    microsecond per card. Protobuf defines parsing concatenated encodings as merging
    them (a repeated field appends), so this keeps, per card, the encoding of the
    message holding that card alone in the field (made by protobuf itself), and cards
    go in as one ``MergeFromString`` of their join.
    """

    __slots__ = ("_one",)

    def __init__(self, message: type[Message], field: str) -> None:
        one: dict[Card, bytes] = {}
        for card, wire in CARD_TO_PB.items():
            m = message()
            getattr(m, field).append(wire)
            one[card] = m.SerializeToString()
        self._one = one

    def encode(self, cards: Iterable[Card]) -> bytes:
        """The message's encoding with exactly ``cards`` in the field (merge it in to
        append them)."""
        return b"".join(map(self._one.__getitem__, cards))


def card_from_pb(m: pb.Card) -> Card:
    """Raises:
    ProtocolError: the suit and rank name no card (e.g. unset fields)."""
    card = PB_TO_CARD.get((m.suit, m.rank))
    if card is None:
        suit = pb.Suit.Name(m.suit) if m.suit in pb.Suit.values() else m.suit
        rank = pb.Rank.Name(m.rank) if m.rank in pb.Rank.values() else m.rank
        raise ProtocolError(f"not a card: suit={suit} rank={rank}")
    return card


def suit_to_pb(suit: Suit | None) -> pb.Suit.ValueType:
    """A trump suit to ``Suit``; ``None`` (no trump) is unspecified."""
    return _SUIT_TO_PB[suit] if suit else pb.SUIT_UNSPECIFIED


def _suit_from_pb(value: pb.Suit.ValueType) -> Suit | None:
    return _PB_TO_SUIT.get(value)


@dataclasses.dataclass(frozen=True, slots=True)
class Value:
    """How one kind of domain value is written to a wire field and read back."""

    to_pb: Callable[[Any], Any]
    from_pb: Callable[[Any], Any]


_IDENTITY: Final = Value(lambda v: v, lambda v: v)
_OPTIONAL_SEAT: Final = Value(lambda v: -1 if v is None else v, lambda v: None if v < 0 else v)
_RANK: Final = Value(lambda r: int(r), lambda v: Rank(v))
_CARD: Final = Value(lambda c: CARD_TO_PB[c], card_from_pb)
_CARDS: Final = Value(
    lambda cs: [CARD_TO_PB[c] for c in cs], lambda ms: tuple(card_from_pb(m) for m in ms)
)
_RANKS: Final = Value(lambda rs: [int(r) for r in rs], lambda vs: tuple(Rank(v) for v in vs))
_HANDS: Final = Value(
    lambda hands: [pb.Cards(cards=[CARD_TO_PB[c] for c in hand]) for hand in hands],
    lambda ms: tuple(tuple(card_from_pb(c) for c in m.cards) for m in ms),
)
SUIT: Final = Value(suit_to_pb, _suit_from_pb)
"""A trump suit or ``None`` (no trump)."""


def _word(kind: type[enum.StrEnum]) -> Value:
    """A domain word (``Side``, ``Termination``) as its text on a string field."""
    return Value(lambda v: v.value, kind)


def _value_for(hint: Any) -> Value:
    """The conversion a domain field's type hint calls for."""
    if hint in (int, str, bool):
        return _IDENTITY
    if hint is Rank:
        return _RANK
    if hint is Card:
        return _CARD
    if isinstance(hint, type) and issubclass(hint, enum.StrEnum):
        return _word(hint)
    if hint == int | None:
        return _OPTIONAL_SEAT
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and args and all(a is Card or a is Ellipsis for a in args):
        return _CARDS
    if origin is tuple and args and all(a is Rank or a is Ellipsis for a in args):
        return _RANKS
    if hint == tuple[tuple[Card, ...], ...]:
        return _HANDS
    raise TypeError(f"no wire conversion for {hint!r}")  # a new kind of field: add one


# -- the table ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Row:
    """One event class on the wire.

    ``case`` is the ``Event`` oneof field; ``nested`` names the message inside the case
    that holds the fields (``match_ended.result``), if any. ``rename`` maps a domain
    field to a wire field of another name; ``values`` overrides a field's conversion;
    ``derived`` fills wire-only fields from the event (never read back).
    """

    event: type[Event]
    case: str
    nested: str = ""
    rename: Mapping[str, str] = dataclasses.field(default_factory=dict)
    values: Mapping[str, Value] = dataclasses.field(default_factory=dict)
    derived: Mapping[str, Callable[[Any], Any]] = dataclasses.field(default_factory=dict)
    not_from_event: frozenset[str] = frozenset()  # wire fields filled elsewhere, documented
    fields: tuple[tuple[str, str, Value], ...] = ()  # (domain, wire, value): filled in below
    writers: tuple[tuple[str, Callable[[Message, Any], None], Callable[[Any], Any]], ...] = ()
    derivers: tuple[tuple[Callable[[Message, Any], None], Callable[[Any], Any]], ...] = ()


TABLE: Final[tuple[Row, ...]] = (
    Row(DealStarted, "deal_started"),
    Row(CardDealt, "card_dealt"),
    Row(BidMade, "bid_made"),
    Row(Redealt, "redeal", rename={"attempt": "count"}),
    Row(
        TrumpDeclared,
        "trump_declared",
        values={"suit": SUIT},
        derived={"no_trump": lambda e: e.suit is None},
    ),
    Row(KittyTaken, "kitty_taken"),
    Row(KittyBuried, "kitty_buried"),
    Row(ThrowFailed, "throw_failed"),
    Row(CardsPlayed, "cards_played"),
    Row(TrickWon, "trick_won"),
    Row(PenaltyApplied, "penalty_applied"),
    Row(DealEnded, "deal_ended"),
    Row(DealRevealed, "deal_revealed"),
    Row(
        MatchEnded,
        "match_ended",
        nested="result",
        rename={"winner": "winner_team", "forfeited": "forfeited_team"},
        # the game does not count faults: MatchEnd and MatchInfo fill these
        not_from_event=frozenset({"fault_penalty_points", "fault_counts"}),
    ),
)


def _message_of(row: Row) -> Any:
    descriptor: Any = pb.Event.DESCRIPTOR.fields_by_name[row.case].message_type
    if row.nested:
        descriptor = descriptor.fields_by_name[row.nested].message_type
    return descriptor


def _complete(row: Row) -> Row:
    """Fill in ``fields`` and check the row covers both sides exactly."""
    hints = typing.get_type_hints(row.event)
    wire = _message_of(row).fields_by_name
    fields = []
    for f in dataclasses.fields(row.event):
        name = row.rename.get(f.name, f.name)
        if name not in wire:
            raise TypeError(f"{row.event.__name__}.{f.name} has no wire field {row.case}.{name}")
        fields.append((f.name, name, row.values.get(f.name) or _value_for(hints[f.name])))
    filled = {w for _, w, _ in fields} | set(row.derived) | row.not_from_event
    if unfilled := sorted(set(wire) - filled):
        raise TypeError(f"wire fields {unfilled} of {row.case} are filled by nothing")
    writers = tuple(
        (d, _cards_writer(wire[w]), _same) if v is _CARDS else (d, _writer(wire[w]), v.to_pb)
        for d, w, v in fields
    )
    derived = tuple((_writer(wire[w]), fn) for w, fn in row.derived.items())
    return dataclasses.replace(row, fields=tuple(fields), writers=writers, derivers=derived)


def _same(value: Any) -> Any:
    return value


def _cards_writer(field: Any) -> Callable[[Message, Any], None]:
    """Cards into a repeated ``Card`` field as one merge of precomputed encodings."""
    encode = CardField(GetMessageClass(field.containing_type), field.name).encode

    def write(m: Message, cards: Iterable[Card]) -> None:
        m.MergeFromString(encode(cards))

    return write


def _writer(field: Any) -> Callable[[Message, Any], None]:
    """How to put a value into ``field`` of a message (decided once, not per event)."""
    name = field.name
    if field.is_repeated:
        return lambda m, v: getattr(m, name).extend(v)
    if field.message_type is not None:
        return lambda m, v: getattr(m, name).CopyFrom(v)
    return lambda m, v: setattr(m, name, v)


def _check_cases(rows: tuple[Row, ...]) -> dict[type[Event], Row]:
    by_event = {row.event: row for row in rows}
    if missing := [e.__name__ for e in EVENTS if e not in by_event]:
        raise TypeError(f"domain events without a wire row: {missing}")
    cases = {f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}
    if extra := sorted(cases - {row.case for row in rows}):
        raise TypeError(f"wire events that no domain event fills: {extra}")
    return by_event


_ROWS: Final = _check_cases(tuple(_complete(row) for row in TABLE))
_BY_CASE: Final = {row.case: row for row in _ROWS.values()}


# -- conversion ----------------------------------------------------------------------------


def event_to_pb(event: Event, index: int = 0) -> pb.Event:
    """One domain event (already redacted for its viewer) as a wire event."""
    row = _ROWS[type(event)]
    m = pb.Event(index=index)
    target: Message = getattr(m, row.case)
    target.SetInParent()
    if row.nested:
        target = getattr(target, row.nested)
        target.SetInParent()
    for domain, write, to_pb in row.writers:
        write(target, to_pb(getattr(event, domain)))
    for write, derive in row.derivers:
        write(target, derive(event))
    return m


def event_from_pb(m: pb.Event) -> Event:
    """A wire event back in the domain (what a Python client or a test reads).

    Raises:
        ProtocolError: no event set, or a card that names no card.
    """
    case = m.WhichOneof("kind")
    if case is None:
        raise ProtocolError("an Event with no kind set")
    row = _BY_CASE[case]
    source: Message = getattr(m, case)
    if row.nested:
        source = getattr(source, row.nested)
    values = {domain: value.from_pb(getattr(source, wire)) for domain, wire, value in row.fields}
    return row.event(**values)


def row_for(event: type[Event]) -> Row:
    """The completed row of ``event`` (its ``fields`` filled in)."""
    return _ROWS[event]


__all__ = [
    "CARD_TO_PB",
    "SUIT",
    "TABLE",
    "CardField",
    "Row",
    "Value",
    "card_from_pb",
    "event_from_pb",
    "event_to_pb",
    "row_for",
    "suit_to_pb",
]
