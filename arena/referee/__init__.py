"""The referee: one synchronous core (policy, record) and its trio wrapper (deadlines)."""

from arena.game import FaultKind, FaultPolicy, PolicyKind, TimeControl
from arena.referee.core import Answerer, Ask, Outcome, RefereeCore, Tally, play
from arena.referee.faults import BotError, BotGone, Fault, SeatVerdict
from arena.referee.referee import MatchReport, Referee, RefereeStatistics
from arena.referee.resume import Restored, restore
from arena.referee.seats import LocalSeat, Seat
from arena.referee.selfplay import UNTIMED, bot_seat, play_match

__all__ = [
    "UNTIMED",
    "Answerer",
    "Ask",
    "BotError",
    "BotGone",
    "Fault",
    "FaultKind",
    "FaultPolicy",
    "LocalSeat",
    "MatchReport",
    "Outcome",
    "PolicyKind",
    "Referee",
    "RefereeCore",
    "RefereeStatistics",
    "Restored",
    "Seat",
    "SeatVerdict",
    "Tally",
    "TimeControl",
    "bot_seat",
    "play",
    "play_match",
    "restore",
]
