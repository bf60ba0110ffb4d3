"""A seat's request written as wire bytes, with no ``RefereeMessage`` built (issue 20).

Why: on the gRPC thread, building the request as a protobuf message cost more than the
raw grpc.aio server's whole round trip spends in Python — the view and the cards went
in as encodings (:mod:`arena.server.view_wire`) that protobuf then *parsed* back into
the message, every converted event was deep-copied into ``Request.events``, and gRPC
then serialized the whole message again. Protobuf defines a message's encoding as its
fields' encodings one after another, a nested message as a length-delimited field
holding the nested encoding; so this joins what is already encoded — the view
(:func:`~arena.server.view_wire.view_bytes`), each event as the match's
:class:`~arena.server.wire.EventCache` keeps it (``Request.events`` entries, encoded
once per match), the cards from :class:`~arena.server.event_table.CardField` tables —
under the tags and lengths written here, and the Play stream writes the bytes as they
are (its response serializer is the identity: :func:`arena.server.service.add_arena_service`).

Field numbers are read from the generated descriptors, not written down again, and
``tests/test_request_wire.py`` reads every request of whole matches back with protobuf
and compares it with :func:`arena.server.convert.request_to_pb`'s message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from google.protobuf.message import Message

from arena.game import Action, CardDealt, CardsPlayed, Event, Kind, Request, TrickWon
from arena.rules import CARDS
from arena.server import view_wire
from arena.server.event_table import CardField, event_to_pb
from arena.v1 import arena_pb2 as pb

_LEN: Final = 2  # wire type of a length-delimited field (a message, bytes)
_U64: Final = (1 << 64) - 1  # a negative int32 is written as its 64-bit two's complement


def varint(n: int) -> bytes:
    """``n`` (0 ≤ n < 2**64) as a base-128 varint, low group first."""
    if n < _TABLED:
        return _SMALL[n]
    return _varint(n)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# Lengths, seqs and the clock's milliseconds are mostly below this: a look-up (~140 KB).
_TABLED: Final = 4096
_SMALL: Final = [_varint(n) for n in range(_TABLED)]


def _number(message: type[Message], name: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[name].number)


def _tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


class _Scalar:
    """One varint field (an integer or an enum): its tag, written only for a value that
    is not 0 (proto3 leaves defaults out)."""

    __slots__ = ("tag",)

    def __init__(self, number: int) -> None:
        self.tag = _tag(number, 0)

    def __call__(self, value: int) -> bytes:
        if not value:
            return b""
        if 0 < value < _TABLED:
            return self.tag + _SMALL[value]
        return self.tag + _varint(value & _U64)


class _Nested:
    """One length-delimited field: tag, length, payload."""

    __slots__ = ("tag",)

    def __init__(self, number: int) -> None:
        self.tag = _tag(number, _LEN)

    def __call__(self, payload: bytes) -> bytes:
        n = len(payload)
        return self.tag + (_SMALL[n] if n < _TABLED else _varint(n)) + payload


_REQUEST: Final = _Nested(_number(pb.RefereeMessage, "request"))
_ACCEPTED: Final = _Scalar(_number(pb.RefereeMessage, "accepted_seq"))
_SEQ: Final = _Scalar(_number(pb.Request, "seq"))
_KIND: Final = _Scalar(_number(pb.Request, "kind"))
_VIEW: Final = _Nested(_number(pb.Request, "view"))
_FALLBACK: Final = _Nested(_number(pb.Request, "fallback"))
_DEADLINE: Final = _Scalar(_number(pb.Request, "deadline_ms"))
_BANK: Final = _Scalar(_number(pb.Request, "time_bank_ms"))
_LEGAL_BID: Final = _Nested(_number(pb.Request, "legal_bids"))
_COUNT: Final = _Scalar(_number(pb.Request, "count"))
_ACTION_SEQ: Final = _Scalar(_number(pb.Action, "seq"))
_BID_SEAT: Final = _Scalar(_number(pb.Bid, "seat"))
_EVENT_INDEX: Final = _Scalar(_number(pb.Event, "index"))
#: one ``Request.events`` entry: the event's encoding under this field
REQUEST_EVENT: Final = _Nested(_number(pb.Request, "events"))
_KIND_TO_PB: Final = {Kind.BID: pb.BID, Kind.BURY: pb.BURY, Kind.PLAY: pb.PLAY}

# The events of nearly every decision, encoded from their fields without a message:
# converting one through the event table costs ~15 µs, and a decision makes one or two
# new ones. A dealt card (a hundred a deal, each read by one seat, so no cache helps)
# by table: its encoding at index 0 (left out, proto3's default), made by the one event
# conversion. The index goes in front: field 1 comes first in protobuf's own encoding.
# tests/test_request_wire.py reads every event of whole matches back against
# :func:`~arena.server.event_table.event_to_pb`.
_DEALT: Final = {
    (seat, card): event_to_pb(CardDealt(seat=seat, card=card), 0).SerializeToString()
    for seat in range(4)
    for card in CARDS
}
_PLAYED: Final = _Nested(_number(pb.Event, "cards_played"))
_PLAYED_SEAT: Final = _Scalar(_number(pb.CardsPlayed, "seat"))
_PLAYED_CARDS: Final = CardField(pb.CardsPlayed, "cards")
_PLAYED_TRICK: Final = _Scalar(_number(pb.CardsPlayed, "trick"))
_WON: Final = _Nested(_number(pb.Event, "trick_won"))
_WON_TRICK: Final = _Scalar(_number(pb.TrickWon, "trick"))
_WON_WINNER: Final = _Scalar(_number(pb.TrickWon, "winner"))
_WON_POINTS: Final = _Scalar(_number(pb.TrickWon, "points"))
_WON_ATTACKERS: Final = _Scalar(_number(pb.TrickWon, "attacker_points"))


def _dealt(event: CardDealt) -> bytes:
    return _DEALT[event.seat, event.card]


def _played(event: CardsPlayed) -> bytes:
    cards = _PLAYED_CARDS.encode(event.cards)
    return _PLAYED(_PLAYED_SEAT(event.seat) + cards + _PLAYED_TRICK(event.trick))


def _won(event: TrickWon) -> bytes:
    return _WON(
        _WON_TRICK(event.trick)
        + _WON_WINNER(event.winner)
        + _WON_POINTS(event.points)
        + _WON_ATTACKERS(event.attacker_points)
    )


_DIRECT: Final[dict[type[Event], Callable[[Any], bytes]]] = {
    CardDealt: _dealt,
    CardsPlayed: _played,
    TrickWon: _won,
}


def event_bytes(index: int, event: Event) -> bytes:
    """``event``'s ``Event`` encoding (index ``index``): the common kinds directly, the
    others through the event table."""
    direct = _DIRECT.get(type(event))
    if direct is None:
        return event_to_pb(event, index).SerializeToString()
    return _EVENT_INDEX(index) + direct(event)


def event_entry(index: int, event: Event) -> bytes:
    """``event`` as one ``Request.events`` entry."""
    return REQUEST_EVENT(event_bytes(index, event))


def request_message(
    seq: int,
    request: Request,
    deadline_ms: int,
    bank_ms: int,
    events: Sequence[bytes],
    acked: int,
) -> bytes:
    """The ``RefereeMessage`` carrying this request, encoded; ``events``: its events as
    ``Request.events`` entries (:func:`event_entry`, the match's cache)."""
    decision = request.decision
    parts = [
        _SEQ(seq),
        _KIND(_KIND_TO_PB[decision.kind]),
        _VIEW(view_wire.view_bytes(request.view)),
        *events,
        _FALLBACK(_ACTION_SEQ(seq) + view_wire.ACTION_CARDS.encode(request.fallback)),
        _DEADLINE(deadline_ms),
        _BANK(bank_ms),
    ]
    if decision.options:
        parts.extend(_bids(decision.seat, decision.options))
    parts.append(_COUNT(decision.count))
    return _REQUEST(b"".join(parts)) + _ACCEPTED(acked)


def _bids(seat: int, options: Sequence[Action]) -> list[bytes]:
    seat_field = _BID_SEAT(seat)
    encode = view_wire.BID_CARDS.encode
    return [_LEGAL_BID(seat_field + encode(option)) for option in options]


__all__ = ["REQUEST_EVENT", "event_bytes", "event_entry", "request_message", "varint"]
