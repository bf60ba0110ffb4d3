"""The deal machine's private state, and how it freezes into a snapshot.

Only :class:`~arena.game.deal.DealMachine` holds a :class:`DealState` and writes it;
everyone else reads :meth:`DealState.freeze`'s :class:`~arena.game.snapshot.DealSnapshot`.
Keeping the fields in one value (rather than thirty attributes of the machine) is what
lets the machine cache one snapshot per change and lets a test compare the whole state.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import Final, NamedTuple

from arena.game.events import Action, DealEnded, Decision
from arena.game.snapshot import DealSnapshot, Hand, PastTrick, Phase
from arena.rules import (
    SEATS,
    Bid,
    Card,
    CardOrder,
    Leading,
    Position,
    Rank,
    RuleSet,
    Trump,
    Unit,
    Verdict,
)

_NOBODY: Final = Leading(0, 0, (), 0)
# a NamedTuple made from its values at once, without its Python-level __new__ (33 args)
_snapshot: Final = tuple.__new__


class Step(enum.Enum):
    """The inputs the machine gives itself when a phase's work is done."""

    NO_BID = "no bid in the first deal"  # deal again
    TRUMP_SET = "trump settled"  # the dealer takes the kitty
    LAST_TRICK = "the last trick was won"  # settle the deal

    __hash__ = object.__hash__  # by identity, as Phase's (arena.game.snapshot) says why


class Answer(NamedTuple):
    """A seat's answer, judged: the decision it answers, the cards, the verdict."""

    decision: Decision
    action: Action
    verdict: Verdict


def _four_hands() -> list[Hand]:
    return [(), (), (), ()]


def without(hand: Hand, cards: Sequence[Card]) -> Hand:
    """``hand`` less ``cards`` (each one copy; they must be in it), the order kept: a
    sorted hand stays sorted, so a held hand never needs sorting again."""
    if len(cards) == 1:
        i = hand.index(cards[0])
        return hand[:i] + hand[i + 1 :]
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return tuple(rest)


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
    # Each hand is a tuple, replaced at a change (never copied to freeze): in the order
    # received, and ``held`` the same cards as a seat holds them, sorted by the card
    # order once it is known (the order received before) — the seat view's hand.
    hands: list[Hand] = dataclasses.field(default_factory=_four_hands)
    held: list[Hand] = dataclasses.field(default_factory=_four_hands)
    kitty: Hand = ()
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
    revealed: list[Hand] = dataclasses.field(default_factory=_four_hands)
    trick_points: int = 0
    points_by_seat: list[int] = dataclasses.field(default_factory=lambda: [0, 0, 0, 0])
    throw_penalties: int = 0
    team_penalties: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    ended: tuple[DealEnded, bool] | None = None  # the result, and whether it won the match

    def take_out(self, seat: int, cards: Sequence[Card]) -> None:
        """``cards`` leave ``seat``'s hand: its tuple as received, its held (sorted)
        tuple, and the shown cards among them (a failed throw's) are shown no more."""
        hands, held = self.hands, self.held
        if len(cards) == 1:  # (most plays: without's slices, without its frames)
            card = cards[0]
            hand = hands[seat]
            i = hand.index(card)
            hands[seat] = hand[:i] + hand[i + 1 :]
            hand = held[seat]
            i = hand.index(card)
            held[seat] = hand[:i] + hand[i + 1 :]
        else:
            hands[seat] = without(hands[seat], cards)
            held[seat] = without(held[seat], cards)
        shown = self.revealed[seat]
        if shown:
            left = list(shown)
            for card in cards:
                if card in left:
                    left.remove(card)
            self.revealed[seat] = tuple(left)

    def winning_seat(self) -> int:
        """The seat winning the trick in progress so far (the leader before any follow)."""
        if not self.plays:
            return self.leader
        return SEATS[(self.leader + self.leading.place) & 3]  # Seat(leader).after(place)

    def position(self, current: DealSnapshot | None = None) -> Position:
        """The rules' view of the deal now (the legality API judges against it); the
        hands of ``current``, the snapshot of this same moment, if there is one."""
        plays = self.plays
        h0, h1, h2, h3 = current.hands if current is not None else self.hands
        return Position(
            (h0, h1, h2, h3), self.level, self.trump,
            self.dealer, None if self.phase is Phase.BIDDING else self.kitty,
            self.leader, tuple(cards for _, cards in plays), self.trick_points,
            self.winning, self.rules, self.lead_units if plays else None,
        ).knowing(self.order)  # fmt: skip

    def freeze(self) -> DealSnapshot:
        """The snapshot of the state now."""
        h0, h1, h2, h3 = self.hands
        o0, o1, o2, o3 = self.held if self.order is not None else self.hands
        r0, r1, r2, r3 = self.revealed
        plays = tuple(self.plays)
        s, t = self.points_by_seat, self.team_penalties
        ended, won = self.ended or (None, False)
        return _snapshot(DealSnapshot, (
            self.rules, self.deal, self.attempt, self.phase, self.dealer, self.level,
            self.levels, self.first_seat, self.deck, self.dealt, (h0, h1, h2, h3), self.kitty,
            self.bids, self.winning, self.trump, self.order, self.trick,
            self.leader, plays, self.winning_seat() if plays else None, self.lead_units,
            self.previous, self.played, (r0, r1, r2, r3), self.trick_points,
            (s[0], s[1], s[2], s[3]), self.throw_penalties, (t[0], t[1]), ended, won,
            self.redeal, (o0, o1, o2, o3),
        ))  # fmt: skip


__all__ = ["Answer", "DealState", "Step", "without"]
