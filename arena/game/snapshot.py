"""Frozen pictures of the machines: what views, checks and tests read.

The deal and match machines keep their state private and hand out a
:class:`DealSnapshot` / :class:`MatchSnapshot`: immutable values, made at most once per
change (the machines cache them), safe to keep and to compare. A snapshot is the
referee's picture — every hand, the kitty, the undealt deck — so nothing but
:mod:`arena.game.views` turns one into what a seat or a spectator may see.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple

from arena.game.events import Action, DealEnded, MatchEnded
from arena.rules import Bid, Card, CardOrder, Position, Rank, RuleSet, Trump, Unit, quick_init

Hand = tuple[Card, ...]
Play = tuple[int, Action]  # (seat, the cards that landed)


class Phase(enum.Enum):
    """Where a deal is (RULES.md §5–§8); the deal machine's transition table is keyed by it."""

    BIDDING = "bidding"
    BURYING = "burying"
    PLAYING = "playing"
    OVER = "over"

    # Hashed by identity (members are singletons): the transition tables are looked up
    # by (phase, input) at every answer, and Enum's own __hash__ is a Python call.
    __hash__ = object.__hash__


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class PastTrick:
    """The last finished trick: who led it, the plays in order, who won it."""

    leader: int
    plays: tuple[Play, ...]
    winner: int


class DealSnapshot(NamedTuple):  # a tuple: immutable, and cheap to make at every change
    """Everything about one deal as of now (the referee's picture: nothing hidden)."""

    rules: RuleSet
    deal: int  # from 1
    attempt: int
    phase: Phase
    dealer: int | None
    level: Rank
    levels: tuple[Rank, Rank]
    first_seat: int
    deck: Hand  # in dealing order
    dealt: int  # rounds dealt so far
    hands: tuple[Hand, Hand, Hand, Hand]  # in the order received
    kitty: Hand  # empty until dealt; the buried cards after the burial
    bids: tuple[Bid, ...]
    winning: Bid | None
    trump: Trump | None
    order: CardOrder | None
    trick: int  # numbered from 1
    leader: int
    plays: tuple[Play, ...]  # the trick in progress
    winning_seat: int | None  # who is winning it so far (None before the lead)
    lead_units: tuple[Unit, ...]  # the units of the lead as landed
    previous: PastTrick | None
    played: Hand  # the cards of finished tricks
    revealed: tuple[Hand, Hand, Hand, Hand]  # failed-throw cards still in each hand
    trick_points: int  # the attackers' card points from tricks
    points_by_seat: tuple[int, int, int, int]
    throw_penalties: int  # the attackers' change from failed throws
    team_penalties: tuple[int, int]  # referee penalties charged to each team
    result: DealEnded | None
    match_won: bool
    redeal: bool  # the first deal ended without a bid: deal again
    held: tuple[Hand, Hand, Hand, Hand]  # the hands sorted by the card order once known

    @property
    def position(self) -> Position:
        """The rules' view of the same moment (its text form is the repr)."""
        plays = self.plays
        return Position(
            self.hands, self.level, self.trump, self.dealer,
            None if self.phase is Phase.BIDDING else self.kitty, self.leader,
            tuple(cards for _, cards in plays), self.trick_points, self.winning, self.rules,
            self.lead_units if plays else None,
        ).knowing(self.order)  # fmt: skip

    @property
    def undealt(self) -> Hand:
        """The cards not dealt yet, the kitty's included (during the bidding)."""
        return self.deck[4 * self.dealt :]

    def __repr__(self) -> str:
        return f"<DealSnapshot deal {self.deal} {self.phase.value}: {self.position}>"


class MatchSnapshot(NamedTuple):
    """A match as of now: its levels and the current deal's snapshot."""

    levels: tuple[Rank, Rank]
    dealer: int | None
    deals_played: int
    result: MatchEnded | None
    deal: DealSnapshot

    def __repr__(self) -> str:
        a, b = self.levels
        return f"<MatchSnapshot levels {a.code}/{b.code} {self.deal!r}>"


__all__ = ["DealSnapshot", "Hand", "MatchSnapshot", "PastTrick", "Phase", "Play"]
