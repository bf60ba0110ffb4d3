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
under tags and lengths written by :mod:`~arena.server.protowire`, and the Play stream
writes the bytes as they are (its response serializer is the identity:
:func:`arena.server.wire.add_arena_service`).

Field numbers are read from the generated descriptors, not written down again, and
``tests/test_request_wire.py`` reads every request of whole matches back with protobuf
and compares it with :func:`arena.server.convert.request_to_pb`'s message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from arena.game import Action, CardDealt, CardsPlayed, Event, Kind, Request, TrickWon
from arena.rules import CARDS
from arena.server import view_wire
from arena.server.event_table import CardField, event_to_pb
from arena.server.protowire import Nested, Scalar, varint
from arena.v1 import arena_pb2 as pb

_REQUEST: Final = Nested(pb.RefereeMessage, "request")
_ACCEPTED: Final = Scalar(pb.RefereeMessage, "accepted_seq")
_SEQ: Final = Scalar(pb.Request, "seq")
_KIND: Final = Scalar(pb.Request, "kind")
_VIEW: Final = Nested(pb.Request, "view")
_FALLBACK: Final = Nested(pb.Request, "fallback")
_DEADLINE: Final = Scalar(pb.Request, "deadline_ms")
_BANK: Final = Scalar(pb.Request, "time_bank_ms")
_LEGAL_BID: Final = Nested(pb.Request, "legal_bids")
_COUNT: Final = Scalar(pb.Request, "count")
_ACTION_SEQ: Final = Scalar(pb.Action, "seq")
_BID_SEAT: Final = Scalar(pb.Bid, "seat")
_EVENT_INDEX: Final = Scalar(pb.Event, "index")
#: one ``Request.events`` entry: the event's encoding under this field
REQUEST_EVENT: Final = Nested(pb.Request, "events")
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
_PLAYED: Final = Nested(pb.Event, "cards_played")
_PLAYED_SEAT: Final = Scalar(pb.CardsPlayed, "seat")
_PLAYED_CARDS: Final = CardField(pb.CardsPlayed, "cards")
_PLAYED_TRICK: Final = Scalar(pb.CardsPlayed, "trick")
_WON: Final = Nested(pb.Event, "trick_won")
_WON_TRICK: Final = Scalar(pb.TrickWon, "trick")
_WON_WINNER: Final = Scalar(pb.TrickWon, "winner")
_WON_POINTS: Final = Scalar(pb.TrickWon, "points")
_WON_ATTACKERS: Final = Scalar(pb.TrickWon, "attacker_points")


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
