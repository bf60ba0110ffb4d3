"""The nouns of a match: decisions asked, actions answered, events emitted.

Events are frozen values. Some are private (a dealt card, the kitty): who may see what
is decided in one place only, :mod:`arena.game.views`. ``to_dict`` gives each event's
JSON form (records and the wire use it); cards appear as their 2-character codes.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, ClassVar

from arena.game.domain import Termination
from arena.rules import SEATS, Card, Rank, Seat, Side, Suit, Trump, codes, quick_init


class Kind(enum.Enum):
    """What a decision asks for."""

    BID = "bid"
    BURY = "bury"
    PLAY = "play"

    # Hashed by identity (members are singletons): the transition tables are looked up
    # by (phase, input) at every answer, and Enum's own __hash__ is a Python call.
    __hash__ = object.__hash__


Action = tuple[Card, ...]
"""An answer: the cards shown, buried or played. The empty action passes a bid."""
PASS: Action = ()


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """A seat must answer: which kind, and the frame of legal answers.

    ``options`` lists every legal bid for a BID; ``lead`` is the landed lead when
    following (empty when leading); ``count`` is how many cards the answer must hold
    (0 when leading: any legal lead).
    """

    seat: int
    kind: Kind
    count: int = 0
    options: tuple[Action, ...] = ()
    lead: Action = ()


def jsonable(v: Any) -> Any:
    """Cards and ranks as codes, tuples as lists, enums as values: JSON-ready."""
    kind = type(v)  # the usual kinds first, by type (every event line passes here)
    if kind is int or kind is str or v is None:
        return v
    if kind is Seat:  # a plain int: JSON writes it without a hook (the same digits)
        return int(v)
    if kind is Card:
        return v.code
    if kind is tuple:  # mostly cards
        return [x.code if type(x) is Card else jsonable(x) for x in v]
    if isinstance(v, Card):
        return v.code
    if isinstance(v, Rank):
        return v.code
    if isinstance(v, tuple | list):
        return [jsonable(x) for x in v]
    if isinstance(v, enum.Enum):
        return v.value
    return v


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    """Base of all events. ``type`` names the event in records and on the wire."""

    type: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        names: tuple[str, ...] = self.__match_args__  # the fields in order, like
        for name in names:  # dataclasses.fields (which is slow: it builds them per call)
            out[name] = jsonable(getattr(self, name))
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class DealStarted(Event):
    type: ClassVar[str] = "deal_started"
    deal: int  # from 1
    attempt: int  # redeals of the first deal count up from 0
    dealer: int | None  # None until the first deal's bidding is won
    level: Rank  # the rank bid with, and the deal's level rank
    first_seat: int  # who is dealt the first card
    levels: tuple[Rank, Rank]  # team 0 (seats 0+2), team 1 (seats 1+3)


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class CardDealt(Event):
    """Private to ``seat``."""

    type: ClassVar[str] = "card_dealt"
    seat: int
    card: Card

    def to_dict(self) -> dict[str, Any]:  # Event.to_dict written out: the commonest lines
        return {"type": "card_dealt", "seat": int(self.seat), "card": self.card.code}


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class BidMade(Event):
    type: ClassVar[str] = "bid_made"
    seat: int
    cards: tuple[Card, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Redealt(Event):
    type: ClassVar[str] = "redealt"
    attempt: int
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class TrumpDeclared(Event):
    type: ClassVar[str] = "trump_declared"
    level: Rank
    suit: Suit | None  # None for no trump
    dealer: int
    source: str  # "bid", "kitty" (no bid: kitty cards revealed), "redeal_fallback"
    bidder: int | None
    revealed: tuple[Card, ...] = ()  # kitty cards shown to decide trump without a bid

    @property
    def trump(self) -> Trump:
        return Trump(self.level, self.suit)


@dataclasses.dataclass(frozen=True, slots=True)
class KittyTaken(Event):
    """The kitty's cards are private to the dealer until the deal ends."""

    type: ClassVar[str] = "kitty_taken"
    seat: int
    cards: tuple[Card, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class KittyBuried(Event):
    """The buried cards are private to the dealer until the deal ends."""

    type: ClassVar[str] = "kitty_buried"
    seat: int
    cards: tuple[Card, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class ThrowFailed(Event):
    type: ClassVar[str] = "throw_failed"
    seat: int
    attempted: tuple[Card, ...]
    played: tuple[Card, ...]  # the forced unit
    returned: tuple[Card, ...]  # back to the hand, shown to all
    blocker: int
    penalty: int  # the attackers' point change


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class CardsPlayed(Event):
    type: ClassVar[str] = "cards_played"
    seat: int
    trick: int
    cards: tuple[Card, ...]

    def to_dict(self) -> dict[str, Any]:  # Event.to_dict written out: a line per play
        cards = codes(self.cards)
        return {"type": "cards_played", "seat": int(self.seat), "trick": self.trick, "cards": cards}


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class TrickWon(Event):
    type: ClassVar[str] = "trick_won"
    trick: int
    winner: int
    points: int
    attacker_points: int  # running total, before the kitty and penalties

    def to_dict(self) -> dict[str, Any]:  # Event.to_dict written out: a line per trick
        return {
            "type": "trick_won", "trick": self.trick, "winner": int(self.winner),
            "points": self.points, "attacker_points": self.attacker_points,
        }  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class PenaltyApplied(Event):
    """A referee-imposed point penalty (a fault under the lenient policy)."""

    type: ClassVar[str] = "penalty_applied"
    team: int  # the offending team
    points: int  # charged against that team: attackers lose them, or the dealer team
    # gives them to the attackers
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class DealEnded(Event):
    type: ClassVar[str] = "deal_ended"
    deal: int
    dealer: int
    trick_points: int  # attackers' points from tricks
    kitty: tuple[Card, ...]  # the buried cards, now public
    kitty_multiplier: int  # 0 when the dealer team won the last trick
    kitty_bonus: int
    penalty_points: int  # failed-throw penalties: the attackers' change
    attacker_points: int  # the total that decides the result
    winner: Side
    levels_gained: int
    levels: tuple[Rank, Rank]  # after the deal
    next_dealer: int
    fault_penalty_points: int = 0  # referee penalties (faults): the attackers' change


@dataclasses.dataclass(frozen=True, slots=True)
class DealRevealed(Event):
    """Right after ``deal_ended``: every hand as dealt and the kitty as dealt, public
    now that the deal is over (spectators see no ``card_dealt`` but their own)."""

    type: ClassVar[str] = "deal_revealed"
    deal: int
    hands: tuple[tuple[Card, ...], ...]  # by seat, in the order dealt
    kitty: tuple[Card, ...]  # as dealt, before the dealer took it

    @classmethod
    def of_deck(
        cls, deal: int, deck: tuple[Card, ...], first_seat: int, hand_size: int
    ) -> DealRevealed:
        """The hands and kitty a deck in dealing order gave, dealt from ``first_seat``."""
        size = 4 * hand_size
        hands = tuple(deck[seat.places_after(first_seat) : size : 4] for seat in SEATS)
        return cls(deal, hands, deck[size:])


@dataclasses.dataclass(frozen=True, slots=True)
class MatchEnded(Event):
    type: ClassVar[str] = "match_ended"
    winner: int | None  # the winning team, None for a draw
    levels: tuple[Rank, Rank]
    deals: int
    reason: Termination
    forfeited: int | None = None  # the team that forfeited
    detail: str = ""  # why it was forfeited or cancelled


EVENTS: tuple[type[Event], ...] = (
    DealStarted, CardDealt, BidMade, Redealt, TrumpDeclared, KittyTaken, KittyBuried,
    ThrowFailed, CardsPlayed, TrickWon, PenaltyApplied, DealEnded, DealRevealed, MatchEnded,
)  # fmt: skip
"""Every kind of event a match emits: what records hold and what the wire carries
(``arena.server.event_table`` maps each to its protobuf message, and fails at import if
one is missing)."""


def landed(events: list[Event], sent: Action) -> Action:
    """What an accepted answer put on the table, from the events it caused: the whole
    answer, or after a failed throw only the forced unit (what ``Verdict.played`` says)."""
    for event in events:
        if isinstance(event, ThrowFailed):
            return event.played
    return sent
