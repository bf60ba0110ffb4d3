"""Seat views: the one place that decides what a seat may know (RULES.md §6, §7).

:func:`seat_view` builds a seat's picture of the table and :func:`seat_events` filters
the event stream for it. Nothing else hands game data to a bot: the referee, the wire
and the built-in bots all go through these two functions. A seat sees its own hand,
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
    Event,
    KittyBuried,
    KittyTaken,
    jsonable,
)
from arena.game.match import MatchMachine
from arena.game.snapshot import Phase
from arena.rules import Bid, Card, Position, Rank, RuleSet, Seat, Suit, Trump, other_team


@dataclasses.dataclass(frozen=True, slots=True)
class TrickView:
    number: int
    leader: int
    plays: tuple[tuple[int, Action], ...]  # (seat, cards) in play order
    winner: int | None = None


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
    over = deal.phase is Phase.OVER
    kitty: tuple[Card, ...] = ()
    if over or (deal.dealer == seat and deal.phase is not Phase.BIDDING):
        kitty = deal.kitty
    order = deal.order
    current = None
    if deal.phase is Phase.PLAYING:
        plays = deal.plays
        current = TrickView(deal.trick, deal.leader, plays, deal.winning_seat)
    previous = None
    if deal.previous is not None:
        last = deal.previous
        previous = TrickView(deal.trick - 1, last.leader, last.plays, last.winner)
    hand = order.sort(list(deal.hands[seat])) if order else list(deal.hands[seat])
    faults = 0
    if deal.dealer is not None:
        team = Seat(deal.dealer).team
        faults = deal.team_penalties[team] - deal.team_penalties[other_team(team)]
    return SeatView(
        seat=seat,
        deal=deal.deal,
        phase=deal.phase,
        hand=tuple(hand),
        dealer=deal.dealer,
        level=deal.level,
        trump_suit=deal.trump.suit if deal.trump else None,
        trump_declared=deal.trump is not None,
        levels=snap.levels,
        bids=deal.bids,
        winning_bid=deal.winning,
        trick=deal.trick,
        current=current,
        previous=previous,
        attacker_points=deal.trick_points,
        penalty_points=deal.throw_penalties,
        fault_penalty_points=faults,
        revealed=deal.revealed,
        kitty=kitty,
        points_by_seat=deal.points_by_seat,
        hand_sizes=(len(deal.hands[0]), len(deal.hands[1]), len(deal.hands[2]), len(deal.hands[3])),
        first_seat=deal.first_seat,
    )


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


def indexed_seat_events(
    events: Iterable[Event], seat: int, start: int = 0
) -> list[tuple[int, Event]]:
    """:func:`seat_events` with each event's index in the match (counting from ``start``)."""
    out: list[tuple[int, Event]] = []
    for i, event in enumerate(events, start):
        if isinstance(event, CardDealt):
            if event.seat == seat:
                out.append((i, event))
        elif isinstance(event, KittyTaken | KittyBuried):
            out.append((i, event if event.seat == seat else dataclasses.replace(event, cards=())))
        else:
            out.append((i, event))
    return out


def public_events(events: Iterable[Event]) -> list[Event]:
    """What a spectator may see: no dealt card and no kitty card before the deal ends."""
    return seat_events(events, seat=-1)


__all__ = [
    "SeatView",
    "TrickView",
    "indexed_seat_events",
    "public_events",
    "seat_events",
    "seat_view",
    "view_position",
]
