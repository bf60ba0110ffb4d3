"""Seat views: the one place that decides what a seat may know (RULES.md §6, §7).

:func:`seat_view` builds a seat's picture of the table (:class:`SeatViews` keeps the
same pictures up to date for a referee) and :func:`seat_events` filters the event stream
for it. Nothing else hands game data to a bot: the referee, the wire and the built-in
bots all go through this module. A seat sees its own hand,
everything played, the bids, trump, levels, points, the cards that failed throws showed,
the kitty only as the dealer after pickup, and everything once the deal has ended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from arena.game.events import (
    Action,
    CardDealt,
    CardsPlayed,
    Event,
    KittyBuried,
    KittyTaken,
    TrickWon,
    jsonable,
)
from arena.game.match import MatchMachine
from arena.game.snapshot import DealSnapshot, MatchSnapshot, Phase
from arena.rules import (
    SEATS,
    Bid,
    Card,
    Position,
    Rank,
    RuleSet,
    Suit,
    Trump,
    other_team,
    quick_init,
)


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class TrickView:
    number: int
    leader: int
    plays: tuple[tuple[int, Action], ...]  # (seat, cards) in play order
    winner: int | None = None


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class SeatView:
    """Everything one seat may know, as of now."""

    seat: int
    deal: int
    phase: Phase
    hand: tuple[Card, ...]
    dealer: int | None
    level: Rank
    trump_suit: Suit | None  # None for no trump or not yet declared
    trump_declared: bool
    levels: tuple[Rank, Rank]
    bids: tuple[Bid, ...]
    winning_bid: Bid | None
    trick: int
    current: TrickView | None
    previous: TrickView | None
    attacker_points: int  # from tricks so far
    penalty_points: int  # failed-throw penalties so far (the attackers' change)
    fault_penalty_points: int  # referee penalties so far (the attackers' change)
    revealed: tuple[tuple[Card, ...], ...]  # per seat: failed-throw cards still in hand
    kitty: tuple[Card, ...]  # the dealer's after pickup; everyone's after the deal
    points_by_seat: tuple[int, int, int, int] = (0, 0, 0, 0)  # card points won in tricks
    hand_sizes: tuple[int, int, int, int] = (0, 0, 0, 0)  # cards each seat holds (public)
    first_seat: int = 0  # the seat dealt to first this deal

    @property
    def trump(self) -> Trump | None:
        """The deal's trump once declared (``None`` before)."""
        return Trump(self.level, self.trump_suit) if self.trump_declared else None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: jsonable(_plain(getattr(self, f.name))) for f in dataclasses.fields(self)}


def _plain(v: Any) -> Any:
    if isinstance(v, Bid):
        return {"seat": v.seat, "cards": jsonable(v.cards)}
    if isinstance(v, TrickView):
        return {
            "number": v.number,
            "leader": v.leader,
            "plays": [{"seat": s, "cards": jsonable(c)} for s, c in v.plays],
            "winner": v.winner,
        }
    if isinstance(v, tuple) and v and isinstance(v[0], Bid):
        return [_plain(b) for b in v]
    return v


def seat_view(match: MatchMachine, seat: int) -> SeatView:
    """The view of ``seat`` (0–3): its own hand only, the kitty only when allowed.
    Read from the match's frozen snapshot, never from the machines' state."""
    snap = match.snapshot()
    deal = snap.deal
    return _assemble(seat, _public(snap), _hand(deal, seat), _kitty(deal, seat))


# The redaction, in three parts: what every seat sees alike (_public), the seat's own
# hand (_hand) and whether it sees the kitty (_kitty). seat_view builds a view from them
# at once; SeatViews keeps the public part while it holds. Both put them
# together with _assemble, so there is one definition of what a seat may know.

_Public = tuple[Any, ...]  # SeatView's arguments after ``seat``, but for hand and kitty


def _public(snap: MatchSnapshot, previous: TrickView | None = None) -> _Public:
    """Everything in a view that is the same for all four seats (``previous``: the
    view of the deal's previous trick, if the caller kept it)."""
    deal = snap.deal
    current = None
    if deal.phase is Phase.PLAYING:
        current = TrickView(deal.trick, deal.leader, deal.plays, deal.winning_seat)
    if previous is None:
        previous = _previous(deal)
    faults = 0
    penalties = deal.team_penalties
    if deal.dealer is not None and (penalties[0] or penalties[1]):
        team = SEATS[deal.dealer].team
        faults = penalties[team] - penalties[other_team(team)]
    hands = deal.hands
    return (
        deal.deal,
        deal.phase,
        deal.dealer,
        deal.level,
        deal.trump.suit if deal.trump else None,
        deal.trump is not None,
        snap.levels,
        deal.bids,
        deal.winning,
        deal.trick,
        current,
        previous,
        deal.trick_points,
        deal.throw_penalties,
        faults,
        deal.revealed,
        deal.points_by_seat,
        (len(hands[0]), len(hands[1]), len(hands[2]), len(hands[3])),
        deal.first_seat,
    )


def _previous(deal: DealSnapshot) -> TrickView | None:
    """The view of the deal's last finished trick."""
    last = deal.previous
    return None if last is None else TrickView(deal.trick - 1, last.leader, last.plays, last.winner)


def _hand(deal: DealSnapshot, seat: int) -> tuple[Card, ...]:
    """The seat's own hand, sorted as people hold it once the card order is known
    (``held``: the machine's hands, sorted once per deal and kept so)."""
    return deal.held[seat]  # kept sorted by the deal machine as cards leave


def _kitty(deal: DealSnapshot, seat: int) -> tuple[Card, ...]:
    """The kitty for its dealer once picked up, for everyone once the deal is over."""
    if deal.phase is Phase.OVER or (deal.dealer == seat and deal.phase is not Phase.BIDDING):
        return deal.kitty
    return ()


def _assemble(
    seat: int, public: _Public, hand: tuple[Card, ...], kitty: tuple[Card, ...]
) -> SeatView:
    (number, phase, dealer, level, suit, declared, levels, bids, winning, trick, current,
     previous, points, throws, faults, revealed, by_seat, sizes, first) = public  # fmt: skip
    return SeatView(
        seat, number, phase, hand, dealer, level, suit, declared, levels, bids, winning,
        trick, current, previous, points, throws, faults, revealed, kitty, by_seat, sizes,
        first,
    )  # fmt: skip


class SeatViews:
    """Every seat's view of one match, kept up to date as the match moves on.

    A referee asks for a view at every decision; :func:`seat_view` would build it from
    scratch, yet most of it (``_public``) is the same for all four seats. This keeps that
    part until the deal's snapshot or the match's levels change, so the seats of a bid
    window share it, and only the seat's own hand and kitty are added per view; the
    previous trick's view is kept while the deal's previous trick is the same. (The
    seat's sorted hand comes from the snapshot's ``held``, which the deal machine keeps
    sorted as cards leave: no view sorts a hand.)
    :meth:`view` equals :func:`seat_view` at every moment
    (``tests/test_views_incremental.py``).
    """

    __slots__ = ("_deal", "_last", "_levels", "_match", "_previous", "_public")

    def __init__(self, match: MatchMachine) -> None:
        self._match = match
        self._deal: DealSnapshot | None = None  # the snapshot _public was made from
        self._levels: tuple[Rank, Rank] | None = None
        self._public: _Public = ()
        self._last: object = None  # the PastTrick self._previous is the view of
        self._previous: TrickView | None = None

    def view(self, seat: int) -> SeatView:
        """The view of ``seat`` now (equal to ``seat_view(match, seat)``)."""
        snap = self._match.snapshot()
        deal = snap.deal
        if deal is not self._deal or snap.levels != self._levels:
            if deal.previous is not self._last or deal.previous is None:
                self._last, self._previous = deal.previous, _previous(deal)
            self._public = _public(snap, self._previous)
            self._deal, self._levels = deal, snap.levels
        return _assemble(seat, self._public, _hand(deal, seat), _kitty(deal, seat))


def view_position(view: SeatView, rules: RuleSet) -> Position:
    """What ``view``'s seat knows, as a position: its own hand (the others' unknown),
    the trick in progress, the kitty if it may see it. The built-in bots judge their
    candidate plays against it with the legality API."""
    hands: list[tuple[Card, ...] | None] = [None, None, None, None]
    hands[view.seat] = view.hand
    h0, h1, h2, h3 = hands
    current = view.current
    return Position(
        (h0, h1, h2, h3),
        view.level,
        view.trump,
        view.dealer,
        view.kitty or None,
        current.leader if current is not None else view.seat,
        tuple(cards for _, cards in current.plays) if current is not None else (),
        view.attacker_points,
        view.winning_bid,
        rules,
    )


def seat_events(events: Iterable[Event], seat: int) -> list[Event]:
    """The events ``seat`` may see: others' dealt cards are dropped, and the kitty's
    cards are blanked for everyone but the dealer (they become public in DealEnded)."""
    return [event for _, event in indexed_seat_events(events, seat)]


_KITTY = (KittyTaken, KittyBuried)  # a tuple: isinstance takes it faster than a union


def indexed_seat_events(
    events: Iterable[Event], seat: int, start: int = 0
) -> list[tuple[int, Event]]:
    """:func:`seat_events` with each event's index in the match (counting from ``start``)."""
    indices, seen = split_seat_events(events, seat, start)
    return list(zip(indices, seen, strict=True))


def split_seat_events(
    events: Iterable[Event], seat: int, start: int = 0
) -> tuple[list[int], list[Event]]:
    """:func:`indexed_seat_events` as two lists, the indices and the events (what a
    request keeps): the one filter of events for a seat."""
    indices: list[int] = []
    out: list[Event] = []
    i = start - 1
    for event in events:
        i += 1
        kind = type(event)
        if kind is CardsPlayed or kind is TrickWon:  # public, and the commonest by far
            pass
        elif isinstance(event, CardDealt):
            if event.seat != seat:
                continue
        elif isinstance(event, _KITTY) and event.seat != seat:
            event = dataclasses.replace(event, cards=())
        indices.append(i)
        out.append(event)
    return indices, out


def public_events(events: Iterable[Event]) -> list[Event]:
    """What a spectator may see: no dealt card and no kitty card before the deal ends."""
    return seat_events(events, seat=-1)


__all__ = [
    "SeatView",
    "SeatViews",
    "TrickView",
    "indexed_seat_events",
    "public_events",
    "seat_events",
    "seat_view",
    "split_seat_events",
    "view_position",
]
