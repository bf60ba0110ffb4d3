"""The sans-IO deal and match state machines, seat views, and the bot interface.

No trio, no gRPC, no clocks, no randomness: a seed and the answers fix the match.
"""

from arena.errors import StateError
from arena.game.control import FaultPolicy, PolicyKind, TimeControl
from arena.game.deal import TRANSITIONS, DealMachine, Step
from arena.game.domain import FaultKind, Ruling, Termination
from arena.game.events import (
    EVENTS,
    PASS,
    Action,
    BidMade,
    CardDealt,
    CardsPlayed,
    DealEnded,
    DealRevealed,
    DealStarted,
    Decision,
    Event,
    Kind,
    KittyBuried,
    KittyTaken,
    MatchEnded,
    PenaltyApplied,
    Redealt,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
    jsonable,
    landed,
)
from arena.game.fallback import FallbackBasis
from arena.game.match import MATCH_TRANSITIONS, MatchMachine, MatchPhase, MatchSetup
from arena.game.recorder import EventSink, FaultNote, Recorder, RecordFeed
from arena.game.requests import Bot, Request, SeatFeed
from arena.game.selfplay import SelfplayStats, check_cards, tally_events
from arena.game.shuffle import first_seat, shuffled_deck
from arena.game.snapshot import DealSnapshot, MatchSnapshot, PastTrick, Phase
from arena.game.stacking import hands_of, seed_for_first_seat, stack
from arena.game.views import (
    SeatView,
    SeatViews,
    TrickView,
    indexed_seat_events,
    public_events,
    seat_events,
    seat_view,
)
from arena.rules import CardOrder, card_order, team_of


def order_for(request: Request) -> CardOrder:
    """The card order of the deal a request belongs to (trump must be declared)."""
    trump = request.view.trump
    if trump is None:
        raise StateError("no trump declared yet")
    return card_order(trump, request.rules)


__all__ = [
    "EVENTS",
    "MATCH_TRANSITIONS",
    "PASS",
    "TRANSITIONS",
    "Action",
    "BidMade",
    "Bot",
    "CardDealt",
    "CardsPlayed",
    "DealEnded",
    "DealMachine",
    "DealRevealed",
    "DealSnapshot",
    "DealStarted",
    "Decision",
    "Event",
    "EventSink",
    "FallbackBasis",
    "FaultKind",
    "FaultNote",
    "FaultPolicy",
    "Kind",
    "KittyBuried",
    "KittyTaken",
    "MatchEnded",
    "MatchMachine",
    "MatchPhase",
    "MatchSetup",
    "MatchSnapshot",
    "PastTrick",
    "PenaltyApplied",
    "Phase",
    "PolicyKind",
    "RecordFeed",
    "Recorder",
    "Redealt",
    "Request",
    "Ruling",
    "SeatFeed",
    "SeatView",
    "SeatViews",
    "SelfplayStats",
    "Step",
    "Termination",
    "ThrowFailed",
    "TimeControl",
    "TrickView",
    "TrickWon",
    "TrumpDeclared",
    "check_cards",
    "first_seat",
    "hands_of",
    "indexed_seat_events",
    "jsonable",
    "landed",
    "order_for",
    "public_events",
    "seat_events",
    "seat_view",
    "seed_for_first_seat",
    "shuffled_deck",
    "stack",
    "tally_events",
    "team_of",
]
