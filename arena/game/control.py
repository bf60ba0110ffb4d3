"""Time control and fault policy: frozen values, like python-chess's ``Limit``.

They live in ``game`` (below the referee) because records carry them in their header and
resume rebuilds the referee from them: the referee, the record writer and reader, and
resume all hold these values, never dicts. Each has one JSON form, :meth:`to_dict`, and
one forgiving reader, :meth:`from_dict`, whose defaults are the class's own.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from arena.errors import InvalidRules


@dataclasses.dataclass(frozen=True, slots=True)
class TimeControl:
    """Per-decision limit, per-seat bank, reconnect grace and network allowance (ms).

    A decision may take ``decision_ms`` plus the ``allowance_ms`` the network is granted;
    time beyond that is taken from the seat's bank, and a decision that exhausts the
    bank is a timeout (:meth:`bank_after`, the one statement of that rule). A disconnected
    seat has ``grace_ms`` to come back before its decisions are played by fallback.
    """

    decision_ms: int = 1000
    bank_ms: int = 30_000
    grace_ms: int = 10_000
    allowance_ms: int = 50

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidRules(f"time control {field.name} must be a whole number ≥ 0")

    @property
    def limit(self) -> float:
        """Seconds a decision may take without touching the bank (limit + allowance)."""
        return (self.decision_ms + self.allowance_ms) / 1000

    @property
    def bank(self) -> float:
        """Each seat's bank at the start of the match, in seconds."""
        return self.bank_ms / 1000

    def bank_after(self, bank: float, latency: float) -> float:
        """The bank (s) left after a decision that took ``latency`` s with ``bank`` s
        left: time beyond :attr:`limit` comes from the bank. Below zero: a timeout."""
        overrun = latency - (self.decision_ms + self.allowance_ms) / 1000  # beyond the limit
        return bank - overrun if overrun > 0 else bank

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TimeControl:
        """Forgiving: missing keys take the defaults, numbers may be floats, unknown keys
        are ignored (older records wrote fewer keys, or none at all).

        Raises:
            InvalidRules: a value that is not a number ≥ 0.
        """
        values: dict[str, int] = {}
        for field in dataclasses.fields(cls):
            if field.name in data:
                values[field.name] = _whole(data[field.name], f"time_control.{field.name}")
        return cls(**values)


class PolicyKind(enum.StrEnum):
    LENIENT = "lenient"
    STRICT = "strict"


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
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
    def parse(
        cls,
        kind: str | None = None,
        penalty_points: int | None = None,
        max_faults: int | None = None,
    ) -> FaultPolicy:
        """From text (the CLI, config, the wire); ``None`` takes the default."""
        default = _DEFAULT_POLICY
        try:
            policy_kind = default.kind if kind is None else PolicyKind(kind)
        except ValueError:
            raise InvalidRules(f"unknown fault policy {kind!r}: lenient or strict") from None
        return cls(
            policy_kind,
            default.penalty_points if penalty_points is None else penalty_points,
            default.max_faults if max_faults is None else max_faults,
        )

    @property
    def strict(self) -> bool:
        return self.kind is PolicyKind.STRICT

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "penalty_points": self.penalty_points,
            "max_faults": self.max_faults,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FaultPolicy:
        """Forgiving like :meth:`TimeControl.from_dict`: missing keys take the defaults."""
        points, most = data.get("penalty_points"), data.get("max_faults")
        return cls.parse(
            None if data.get("kind") is None else str(data["kind"]),
            None if points is None else _whole(points, "policy.penalty_points"),
            None if most is None else _whole(most, "policy.max_faults"),
        )

    def __repr__(self) -> str:
        return (
            f"FaultPolicy(PolicyKind.{self.kind.name}, penalty_points={self.penalty_points}, "
            f"max_faults={self.max_faults})"
        )


_DEFAULT_POLICY = FaultPolicy()


def _whole(value: Any, what: str) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidRules(f"{what} must be a number, not {value!r}") from None
    if isinstance(value, bool) or number != number or number < 0 or number == float("inf"):
        raise InvalidRules(f"{what} must be a number ≥ 0, not {value!r}")
    return int(number)
