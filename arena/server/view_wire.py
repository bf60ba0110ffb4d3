"""A seat's view as wire bytes, from precomputed and cached parts (issue 20 item 2).

Building a ``View`` field by field costs the protobuf runtime a call per field and a
copy per card (``hand.extend([...])`` copied each ``Card`` message: a quarter of a
request's cost). Protobuf defines a message's encoding as the concatenation of its
fields' encodings, and parsing concatenated encodings as merging them (a repeated field
appends, a scalar's last value wins), so :func:`view_bytes` joins encodings, made by
protobuf itself or under tags read from its descriptors, and the request takes the
whole view as they are:

- a :class:`~arena.server.event_table.CardField` keeps, per card, the encoding of its
  message holding that card alone in the field: a hand is a join of table look-ups (the
  events' cards go in the same way);
- the parts that stay the same from one decision to the next — the seat's deal frame
  (seat, dealer, trump, levels), the bids, the previous trick — are kept encoded,
  keyed by their value (``functools.lru_cache``), so consecutive requests reuse them;
- the parts that change at every decision — the current trick, the points and hand
  sizes — are written field by field (:mod:`arena.server.protowire`), not built as a
  message and serialized.

What goes in is only what the seat's :class:`~arena.game.SeatView` holds — the one
redaction path (:mod:`arena.game.views`) decided that — so caches shared by all seats
and matches hand nobody anything its own view does not. Read back field by field with
protobuf's own accessors, the message says what the view says
(``tests/test_views_incremental.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Final

from arena.game import Phase, SeatView, TrickView
from arena.rules import Bid, Card, Rank, Suit
from arena.server.event_table import CardField, suit_to_pb
from arena.server.protowire import Nested, Packed, Scalar
from arena.v1 import arena_pb2 as pb

CACHED: Final = 4096  # encoded parts kept per kind: a few per live match

PHASE_TO_PB: Final = {
    Phase.BIDDING: pb.DEALING,
    Phase.BURYING: pb.BURYING,
    Phase.PLAYING: pb.PLAYING,
    Phase.OVER: pb.DEAL_OVER,
}


VIEW_HAND: Final = CardField(pb.View, "hand")
VIEW_KITTY: Final = CardField(pb.View, "kitty")
PLAY_CARDS: Final = CardField(pb.Play, "cards")
BID_CARDS: Final = CardField(pb.Bid, "cards")
ACTION_CARDS: Final = CardField(pb.Action, "cards")


def put_play(m: pb.Play, seat: int, cards: Iterable[Card]) -> None:
    """Fill a ``Play`` with a seat and its cards."""
    m.seat = seat
    m.MergeFromString(PLAY_CARDS.encode(cards))


def put_bid(m: pb.Bid, seat: int, cards: Iterable[Card]) -> None:
    """Fill a ``Bid`` with a seat and its cards."""
    m.seat = seat
    m.MergeFromString(BID_CARDS.encode(cards))


def _rank(rank: Rank) -> pb.Rank.ValueType:
    return pb.Rank.ValueType(int(rank))


@functools.lru_cache(maxsize=CACHED)
def frame_bytes(
    seat: int,
    deal: int,
    phase: Phase,
    dealer: int | None,
    level: Rank,
    trump_suit: Suit | None,
    declared: bool,
    levels: tuple[Rank, Rank],
    first_seat: int,
) -> bytes:
    """The fields that change a few times a deal: who, which deal, which phase, trump."""
    trump = pb.Trump(
        level=_rank(level),
        suit=suit_to_pb(trump_suit),
        no_trump=declared and trump_suit is None,
        declared=declared,
    )
    m = pb.View(
        seat=seat,
        deal_number=deal,
        phase=PHASE_TO_PB[phase],
        dealer=-1 if dealer is None else dealer,
        trump=trump,
        levels=[_rank(r) for r in levels],
        first_seat=first_seat,
    )
    return m.SerializeToString()


_TRICK_NUMBER: Final = Scalar(pb.Trick, "number")
_TRICK_LEADER: Final = Scalar(pb.Trick, "leader")
_TRICK_PLAY: Final = Nested(pb.Trick, "plays")
_TRICK_WINNER: Final = Scalar(pb.Trick, "winner")
_TRICK_POINTS: Final = Scalar(pb.Trick, "points")
_PLAY_SEAT: Final = Scalar(pb.Play, "seat")
_TRICK_IN: Final = {
    False: Nested(pb.View, "current_trick"),
    True: Nested(pb.View, "previous_trick"),
}


@functools.lru_cache(maxsize=CACHED)
def _play(play: tuple[int, tuple[Card, ...]]) -> tuple[bytes, int]:
    """One play of a trick as a ``Trick.plays`` entry, and its points. Kept by value: the
    current trick is written at every decision of the trick, its earlier plays each time
    again (t22edge: a hash of the play's tuple, in C, against three encoders and a sum)."""
    seat, cards = play
    entry = _TRICK_PLAY(_PLAY_SEAT(seat) + PLAY_CARDS.encode(cards))
    return entry, sum(card.points for card in cards)


def _trick(trick: TrickView, previous: bool) -> bytes:
    plays = []
    points = 0
    for play in trick.plays:
        entry, worth = _play(play)
        plays.append(entry)
        points += worth
    winner = -1 if trick.winner is None else trick.winner
    return _TRICK_IN[previous](
        _TRICK_NUMBER(trick.number)
        + _TRICK_LEADER(trick.leader)
        + b"".join(plays)
        + _TRICK_WINNER(winner)
        + _TRICK_POINTS(points)
    )


_kept_trick = functools.lru_cache(maxsize=CACHED)(_trick)


def trick_bytes(trick: TrickView, previous: bool) -> bytes:
    """A ``View`` encoding holding only ``trick`` as its current or previous trick.
    The previous one is asked for four times in a row, so it is kept; the current one
    has changed at every decision of the trick, so it is written each time (directly:
    keeping it cost a hash of the trick and a miss)."""
    return _kept_trick(trick, True) if previous else _trick(trick, False)


@functools.lru_cache(maxsize=CACHED)
def bids_bytes(bids: tuple[Bid, ...], winning: Bid | None) -> bytes:
    """A ``View`` encoding holding only its ``bids`` and ``winning_bid`` (the same for
    every decision of a deal's play)."""
    m = pb.View()
    for bid in bids:
        put_bid(m.bids.add(), bid.seat, bid.cards)
    if winning is not None:
        m.winning_bid.SetInParent()
        put_bid(m.winning_bid, winning.seat, winning.cards)
    return m.SerializeToString()


_TRICK_NUMBER_OF_VIEW: Final = Scalar(pb.View, "trick_number")
_ATTACKER_POINTS: Final = Scalar(pb.View, "attacker_points")
_PENALTY_POINTS: Final = Scalar(pb.View, "penalty_points")
_FAULT_PENALTY_POINTS: Final = Scalar(pb.View, "fault_penalty_points")
_POINTS_BY_SEAT: Final = Packed(pb.View, "points_by_seat")
_HAND_SIZES: Final = Packed(pb.View, "hand_sizes")


def view_bytes(view: SeatView) -> bytes:
    """``view``'s ``View`` encoding."""
    parts = [
        frame_bytes(
            view.seat,
            view.deal,
            view.phase,
            view.dealer,
            view.level,
            view.trump_suit,
            view.trump_declared,
            view.levels,
            view.first_seat,
        ),
        VIEW_HAND.encode(view.hand),
        bids_bytes(view.bids, view.winning_bid),
        _TRICK_NUMBER_OF_VIEW(view.trick if view.phase is Phase.PLAYING else 0),
        _ATTACKER_POINTS(view.attacker_points),
        _PENALTY_POINTS(view.penalty_points),
        _FAULT_PENALTY_POINTS(view.fault_penalty_points),
        _POINTS_BY_SEAT(view.points_by_seat),
        _HAND_SIZES(view.hand_sizes),
    ]
    if view.current is not None:
        parts.append(_trick(view.current, False))
    if view.previous is not None:
        parts.append(_kept_trick(view.previous, True))
    if any(view.revealed):
        revealed = pb.View()
        for seat, cards in enumerate(view.revealed):
            if cards:
                put_play(revealed.revealed.add(), seat, cards)
        parts.append(revealed.SerializeToString())
    if view.kitty:
        parts.append(VIEW_KITTY.encode(view.kitty))
    return b"".join(parts)


__all__ = [
    "ACTION_CARDS",
    "PHASE_TO_PB",
    "bids_bytes",
    "frame_bytes",
    "put_bid",
    "put_play",
    "trick_bytes",
    "view_bytes",
]
