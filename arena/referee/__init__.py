"""The trio referee: runs matches, asks seats under deadlines, applies the fault policy."""

from arena.referee.control import FaultPolicy, PolicyKind, TimeControl
from arena.referee.faults import BotError, BotGone, Fault, FaultKind, SeatVerdict
from arena.referee.referee import MatchReport, Referee, RefereeStatistics, Resume
from arena.referee.seats import LocalSeat, Seat

__all__ = [
    "BotError",
    "BotGone",
    "Fault",
    "FaultKind",
    "FaultPolicy",
    "LocalSeat",
    "MatchReport",
    "PolicyKind",
    "Referee",
    "RefereeStatistics",
    "Resume",
    "Seat",
    "SeatVerdict",
    "TimeControl",
]
