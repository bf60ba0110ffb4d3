"""The deal machine's private state, and how it freezes into a snapshot.

Only :class:`~arena.game.deal.DealMachine` holds a :class:`DealState` and writes it;
everyone else reads :meth:`DealState.freeze`'s :class:`~arena.game.snapshot.DealSnapshot`.
Keeping the fields in one value (rather than thirty attributes of the machine) is what
lets the machine cache one snapshot per change and lets a test compare the whole state.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from arena.game.events import Action, DealEnded, Decision
from arena.game.snapshot import DealSnapshot, PastTrick, Phase
from arena.rules import Bid, Card, CardOrder, Leading, Position, Rank, RuleSet, Seat, Trump, Unit

_NOBODY: Final = Leading(0, 0, (), 0)


def _four_lists() -> list[list[Card]]:
    return [[], [], [], []]


@dataclasses.dataclass(slots=True)
class DealState:
    """Everything a deal machine knows; mutable, and private to the machine."""

    rules: RuleSet
    deal: int
    attempt: int
    dealer: int | None
    levels: tuple[Rank, Rank]
    level: Rank
    first_seat: int
    redeal_fallback: bool
    deck: tuple[Card, ...]
    phase: Phase = Phase.BIDDING
    hands: list[list[Card]] = dataclasses.field(default_factory=_four_lists)
    kitty: list[Card] = dataclasses.field(default_factory=list)
    redeal: bool = False
    # bidding
    bids: tuple[Bid, ...] = ()
    winning: Bid | None = None
    dealt: int = 0  # rounds dealt
    seen: list[frozenset[Action]] = dataclasses.field(default_factory=lambda: [frozenset()] * 4)
    closing: bool = False
    window: dict[int, Decision] = dataclasses.field(default_factory=dict)
    answers: dict[int, Action] = dataclasses.field(default_factory=dict)
    # play
    trump: Trump | None = None
    order: CardOrder | None = None
    trick: int = 1  # numbered from 1 within the deal
    leader: int = 0
    plays: list[tuple[int, Action]] = dataclasses.field(default_factory=list)
    played: tuple[Card, ...] = ()  # cards of finished tricks (a tuple: frozen as it is)
    leading: Leading = _NOBODY  # the play winning the trick in progress
    lead_units: tuple[Unit, ...] = ()  # the units of the lead as landed
    previous: PastTrick | None = None
    revealed: list[list[Card]] = dataclasses.field(default_factory=_four_lists)
    trick_points: int = 0
    points_by_seat: list[int] = dataclasses.field(default_factory=lambda: [0, 0, 0, 0])
    throw_penalties: int = 0
    team_penalties: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    ended: tuple[DealEnded, bool] | None = None  # the result, and whether it won the match

    def winning_seat(self) -> int:
        """The seat winning the trick in progress so far (the leader before any follow)."""
        return Seat(self.leader).after(self.leading.place) if self.plays else self.leader

    def position(self, current: DealSnapshot | None = None) -> Position:
        """The rules' view of the deal now (the legality API judges against it); the
        hands of ``current``, the snapshot of this same moment, if there is one."""
        h, plays = self.hands, self.plays
        hands = current.hands if current is not None else (
            tuple(h[0]), tuple(h[1]), tuple(h[2]), tuple(h[3])
        )  # fmt: skip
        return Position(
            hands, self.level, self.trump,
            self.dealer, None if self.phase is Phase.BIDDING else tuple(self.kitty),
            self.leader, tuple(cards for _, cards in plays), self.trick_points,
            self.winning, self.rules, self.lead_units if plays else None,
        ).knowing(self.order)  # fmt: skip

    def freeze(self) -> DealSnapshot:
        """The snapshot of the state now."""
        h, r = self.hands, self.revealed
        hands = (tuple(h[0]), tuple(h[1]), tuple(h[2]), tuple(h[3]))
        plays = tuple(self.plays)
        s, t = self.points_by_seat, self.team_penalties
        ended, won = self.ended or (None, False)
        return DealSnapshot(
            self.rules, self.deal, self.attempt, self.phase, self.dealer, self.level,
            self.levels, self.first_seat, self.deck, self.dealt, hands, tuple(self.kitty),
            self.bids, self.winning, self.trump, self.order, self.trick,
            self.leader, plays, self.winning_seat() if plays else None, self.lead_units,
            self.previous, self.played, (tuple(r[0]), tuple(r[1]), tuple(r[2]),
            tuple(r[3])), self.trick_points, (s[0], s[1], s[2], s[3]),
            self.throw_penalties, (t[0], t[1]), ended, won, self.redeal,
        )  # fmt: skip


__all__ = ["DealState"]
