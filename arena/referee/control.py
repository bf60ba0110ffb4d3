"""Time control and fault policy: frozen values, like python-chess's ``Limit``."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from arena.errors import InvalidRules


@dataclasses.dataclass(frozen=True, slots=True)
class TimeControl:
    """Per-decision limit, per-seat bank, reconnect grace and network allowance (ms).

    A decision may take ``decision_ms`` plus the ``allowance_ms`` the network is granted;
    time beyond that is taken from the seat's bank, and a decision that exhausts the
    bank is a timeout. A disconnected seat has ``grace_ms`` to come back before its
    decisions are played by fallback.
    """

    decision_ms: int = 1000
    bank_ms: int = 30_000
    grace_ms: int = 10_000
    allowance_ms: int = 50

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or value < 0:
                raise InvalidRules(f"time control {field.name} must be a whole number ≥ 0")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class PolicyKind(enum.StrEnum):
    LENIENT = "lenient"
    STRICT = "strict"


@dataclasses.dataclass(frozen=True, slots=True)
class FaultPolicy:
    """What a fault costs.

    ``lenient`` (default): each fault charges ``penalty_points`` against the offending
    team; its ``max_faults``-th fault disqualifies the bot and the team forfeits the match.
    ``strict``: the first fault forfeits the match.
    """

    kind: PolicyKind = PolicyKind.LENIENT
    penalty_points: int = 10
    max_faults: int = 10

    @classmethod
    def parse(cls, kind: str, penalty_points: int = 10, max_faults: int = 10) -> FaultPolicy:
        try:
            return cls(PolicyKind(kind), penalty_points, max_faults)
        except ValueError:
            raise InvalidRules(f"unknown fault policy {kind!r}: lenient or strict") from None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "penalty_points": self.penalty_points,
            "max_faults": self.max_faults,
        }
