"""Faults: what a seat did wrong, kept apart from rule events such as a failed throw."""

from __future__ import annotations

import dataclasses
from typing import Any

from arena.errors import ArenaError
from arena.game import Action, FaultKind
from arena.rules import codes, quick_init
from arena.text import MAX_REASON, clip


class BotError(ArenaError):
    """A seat misbehaved at the protocol level (like python-chess's ``EngineError``)."""

    def __init__(self, kind: FaultKind, reason: str, charge: bool = True) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.charge = charge  # False: a seat still away, its absence already charged


class BotGone(BotError):
    """The seat is disconnected and did not come back within the grace period.

    Only the first decision of a disconnection is a fault; later ones (``charge=False``)
    are played by fallback and recorded with the verdict ``absent``, no fault, until the
    bot reconnects.
    """

    def __init__(self, reason: str = "disconnected", charge: bool = True) -> None:
        super().__init__(FaultKind.DISCONNECTED, reason, charge)


@dataclasses.dataclass(frozen=True, slots=True)
class Fault:
    seat: int
    kind: FaultKind
    reason: str
    deal: int
    trick: int
    seq: int
    penalty_points: int
    played: Action
    charged: bool = True  # always, now: a seat still away is "absent", not a fault

    def __post_init__(self) -> None:  # a 40,000-card play must not make a 120 kB reason
        object.__setattr__(self, "reason", clip(self.reason, MAX_REASON))

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind.value,
            "reason": self.reason,
            "deal": self.deal,
            "trick": self.trick,
            "seq": self.seq,
            "penalty_points": self.penalty_points,
            "played": codes(self.played),
            "charged": self.charged,
        }


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class SeatVerdict:
    """The judgement of one answer, as the seat is told it."""

    seq: int
    accepted: bool
    played: Action
    fault: Fault | None = None

    @property
    def reason(self) -> str:
        return self.fault.reason if self.fault else ""
