"""The observation tensor: one seat's view of the table as a fixed-size ``float32`` vector.

Built only from what the one redaction path hands a seat — its :class:`~arena.game.SeatView`
and its redacted events (:func:`arena.game.seat_events`) — so an observation can hold no
card the seat may not see. The same :class:`SeatMemory` and :func:`encode` serve the
environment and a policy seated in the arena (``policy:module:function``), so a trained
policy sees in a match exactly what it saw in training.

Seats are *relative*: "seat r" in the tensor is the seat ``r`` places after the observer
(0 itself, 1 the next to play after it, 2 its partner, 3 the one before it). Card planes
are 54 counts indexed by ``Card.index`` (♠2…♠A, ♥, ♣, ♦, small joker, big joker). The
layout, plane by plane, is :data:`LAYOUT` (docs/env.md prints it).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from arena.game import CardsPlayed, DealStarted, Event, Phase, SeatView
from arena.rules import SEATS, SUITS, Card, RuleSet, Seat, Side, other_team

Obs = npt.NDArray[np.float32]

_FACES: Final = 54
LAYOUT: Final[tuple[tuple[str, int, str], ...]] = (
    ("hand", _FACES, "cards in the observer's hand (counts)"),
    ("chosen", _FACES, "cards chosen so far in the decision being answered"),
    ("played", 4 * _FACES, "cards each relative seat has played this deal"),
    ("trick", 4 * _FACES, "cards each relative seat has played in the trick in progress"),
    ("revealed", 4 * _FACES, "cards each relative seat showed in a failed throw, still held"),
    ("bids", 4 * _FACES, "cards each relative seat has shown as bids this deal"),
    ("kitty", _FACES, "the kitty: the dealer's after pickup, everyone's once the deal ends"),
    ("decision", 5, "one-hot: bid, bury, lead, follow, none (not this seat's turn)"),
    ("phase", 4, "one-hot: bidding, burying, playing, over"),
    ("trump", 6, "one-hot trump suit ♠ ♥ ♣ ♦ or no trump (zero before it is known), declared"),
    ("level", 13, "one-hot rank played this deal (2…A)"),
    ("levels", 26, "one-hot level of the observer's team, then of the other team"),
    ("dealer", 5, "one-hot relative dealer seat, or unknown (first deal's bidding)"),
    ("winning_bid", 5, "one-hot relative seat of the winning bid, or none"),
    ("leader", 4, "one-hot relative seat that led the trick in progress"),
    ("winning", 4, "one-hot relative seat winning the trick in progress"),
    (
        "scalars",
        12,
        "trick/hand size (0 outside play); attackers' points/total; throw and fault penalties/100; "
        "points won by each relative seat/total; on the dealer's team; cards to choose/10; "
        "chosen/10; deal/10",
    ),
    ("hand_sizes", 4, "cards held by each relative seat / cards dealt to a seat"),
)
"""(name, width, meaning) of each block of the observation, in order."""

OFFSET: Final[dict[str, int]] = {}
_at = 0
for _name, _width, _ in LAYOUT:
    OFFSET[_name] = _at
    _at += _width
OBS_SIZE: Final = _at
"""The observation's length (1,114)."""

_HAND, _CHOSEN, _PLAYED, _TRICK = (
    OFFSET["hand"],
    OFFSET["chosen"],
    OFFSET["played"],
    OFFSET["trick"],
)
_REVEALED, _BIDS, _KITTY = OFFSET["revealed"], OFFSET["bids"], OFFSET["kitty"]
_DECISION, _PHASE, _TRUMP, _LEVEL = (
    OFFSET["decision"],
    OFFSET["phase"],
    OFFSET["trump"],
    OFFSET["level"],
)
_LEVELS, _DEALER, _WINNING_BID = OFFSET["levels"], OFFSET["dealer"], OFFSET["winning_bid"]
_LEADER, _WINNING, _SCALARS = OFFSET["leader"], OFFSET["winning"], OFFSET["scalars"]
assert OFFSET["hand_sizes"] == _SCALARS + 12  # the scalars and hand sizes are filled together

_KIND_SLOT: Final = {"bid": 0, "bury": 1, "lead": 2, "follow": 3, "none": 4}
_PHASE_SLOT: Final = {Phase.BIDDING: 0, Phase.BURYING: 1, Phase.PLAYING: 2, Phase.OVER: 3}
_SUIT_SLOT: Final = {suit: i for i, suit in enumerate(SUITS)}  # spades, hearts, clubs, diamonds


class SeatMemory:
    """What one seat keeps between requests: the cards each seat has played this deal.

    Fed with the seat's redacted events (a request's ``events``) in order. Rows are
    ``array('f')`` (54 counts each): cheap to bump one by one and to copy into a buffer.
    """

    __slots__ = ("played", "seat")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.played = [array("f", _ZEROS54) for _ in range(4)]

    def absorb(self, events: Iterable[Event]) -> None:
        played = self.played
        for event in events:
            if isinstance(event, CardsPlayed):
                row = played[event.seat]
                for card in event.cards:
                    row[card.index] += 1
            elif isinstance(event, DealStarted):
                for row in played:
                    row[:] = array("f", _ZEROS54)


_ZEROS54: Final = bytes(4 * _FACES)
_ZEROS: Final = bytes(4 * OBS_SIZE)


def encode(
    view: SeatView,
    memory: SeatMemory,
    rules: RuleSet,
    kind: str = "none",
    count: int = 0,
    chosen: Sequence[Card] = (),
) -> Obs:
    """The observation of ``view``'s seat; ``kind`` names the decision it is answering
    (``bid``, ``bury``, ``lead``, ``follow``, or ``none``), ``count`` how many cards the
    answer must hold (0: free) and ``chosen`` what it has chosen so far.

    Filled in a plain ``array('f')`` (a Python-level store is several times cheaper there
    than in a numpy array) and handed out as a numpy view of it, without a copy.
    """
    buf = array("f", _ZEROS)
    me = Seat(view.seat)
    rel = ((me, 0), (me.next, 1), (me.partner, 2), (me.after(3), 3))
    back = [s.places_after(me) for s in SEATS]  # relative seat of each absolute seat
    for card in view.hand:
        buf[_HAND + card.index] += 1
    for card in chosen:
        buf[_CHOSEN + card.index] += 1
    played = memory.played
    for seat, r in rel:
        at = _PLAYED + r * _FACES
        buf[at : at + _FACES] = played[seat]
    current = view.current
    if current is not None:
        for s, cards in current.plays:
            at = _TRICK + back[s] * _FACES
            for card in cards:
                buf[at + card.index] += 1
        buf[_LEADER + back[current.leader]] = 1
        if current.winner is not None:
            buf[_WINNING + back[current.winner]] = 1
    for s, cards in enumerate(view.revealed):
        at = _REVEALED + back[s] * _FACES
        for card in cards:
            buf[at + card.index] += 1
    for bid in view.bids:
        slot = _BIDS + back[bid.seat] * _FACES + bid.face.index
        buf[slot] = max(buf[slot], len(bid.cards))
    for card in view.kitty:
        buf[_KITTY + card.index] += 1
    buf[_DECISION + _KIND_SLOT[kind]] = 1
    buf[_PHASE + _PHASE_SLOT[view.phase]] = 1
    if view.trump_declared:
        buf[_TRUMP + (_SUIT_SLOT[view.trump_suit] if view.trump_suit else 4)] = 1
        buf[_TRUMP + 5] = 1
    buf[_LEVEL + view.level - 2] = 1
    buf[_LEVELS + view.levels[me.team] - 2] = 1
    buf[_LEVELS + 13 + view.levels[other_team(me.team)] - 2] = 1
    buf[_DEALER + (4 if view.dealer is None else back[view.dealer])] = 1
    won = view.winning_bid
    buf[_WINNING_BID + (4 if won is None else back[won.seat])] = 1
    total = 100.0 * rules.decks
    by_seat, sizes, size = view.points_by_seat, view.hand_sizes, rules.hand_size
    at = _SCALARS
    buf[at] = view.trick / size if view.phase is Phase.PLAYING else 0.0  # as the wire has it
    buf[at + 1] = view.attacker_points / total
    buf[at + 2] = view.penalty_points / 100.0
    buf[at + 3] = view.fault_penalty_points / 100.0
    buf[at + 8] = float(view.dealer is not None and me.side(view.dealer) is Side.DEALER)
    buf[at + 9] = count / 10.0
    buf[at + 10] = len(chosen) / 10.0
    buf[at + 11] = view.deal / 10.0
    for s, r in rel:
        buf[at + 4 + r] = by_seat[s] / total
        buf[at + 12 + r] = sizes[s] / size
    return np.frombuffer(buf, dtype=np.float32)


def with_chosen(base: Obs, chosen: Sequence[Card]) -> Obs:
    """``base`` (encoded with nothing chosen) with ``chosen`` filled in: the cheap way to
    observe each step of a many-card answer."""
    obs = base.copy()
    for card in chosen:
        obs[_CHOSEN + card.index] += 1
    obs[_SCALARS + 10] = len(chosen) / 10.0
    return obs


__all__ = ["LAYOUT", "OBS_SIZE", "OFFSET", "Obs", "SeatMemory", "encode", "with_chosen"]
