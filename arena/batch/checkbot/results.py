"""What a check-bot run found: faults with their positions, per scenario and in all."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.batch.checkbot.positions import Position
from arena.batch.checkbot.scenarios import Scenario
from arena.batch.sandbox import SandboxLimits
from arena.game import Kind
from arena.referee import FaultKind, FaultPolicy, TimeControl
from arena.rules import Card, format_cards

FAULT_LABELS = {
    "timeout": "timeout",
    "illegal_action": "illegal action",
    "malformed": "protocol error (malformed message)",
    "unknown_sequence": "protocol error (unknown sequence number)",
    "disconnected": "crash or disconnection",
    "memory_limit": "killed by the sandbox's memory limit",
    "cpu_limit": "killed by the sandbox's CPU limit",
    "output_limit": "stopped by the sandbox's output limit",
    "process_limit": "refused a process or thread by the sandbox's limit",
    "crashed": "the bot's process ended during the match",
}


def plural(n: int) -> str:
    return "" if n == 1 else "s"


# the faults charged when a bot's process ended: they name the cause
PROCESS_ENDINGS = frozenset(
    k.value
    for k in (FaultKind.MEMORY_LIMIT, FaultKind.CPU_LIMIT, FaultKind.OUTPUT_LIMIT,
              FaultKind.PROCESS_LIMIT, FaultKind.CRASHED)
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class FaultReport:
    """One fault charged to the bot, with its position."""

    kind: str
    reason: str
    deal: int
    trick: int
    seq: int
    sent: tuple[Card, ...] | None
    played: tuple[Card, ...]
    latency_ms: float
    position: Position | None

    @property
    def headline(self) -> str:
        """One line: the kind, the position and the reason."""
        pos = self.position
        if pos is None:
            return f"{self.kind} in deal {self.deal}, trick {self.trick} (seq {self.seq}): " + (
                self.reason
            )
        deal = f"deal {pos.deal}" + (f" (redeal {pos.attempt})" if pos.attempt else "")
        return f"{self.kind} in {deal}, {pos.what} (seq {self.seq}): {self.reason}"

    def details(self, seat: int) -> list[str]:
        pos = self.position
        label = FAULT_LABELS.get(self.kind, self.kind)
        kind = self.kind if label == self.kind else f"{self.kind} ({label})"
        lines = [f"fault:   {kind} — {self.reason}"]
        if pos is not None:
            deal = f"deal {pos.deal}" + (f" (redeal {pos.attempt})" if pos.attempt else "")
            lines.append(f"where:   {deal}: {pos.what}; seat {seat}, seq {self.seq}")
            trump = pos.trump or "not declared yet"
            dealer = "not decided" if pos.dealer is None else f"seat {pos.dealer}"
            lines.append(f"trump:   {trump}; dealer {dealer}")
            n = len(pos.hand)
            lines.append(f"hand:    {format_cards(pos.hand) or '(empty)'} ({n} card{plural(n)})")
            if pos.kind is Kind.PLAY:
                so_far = "; ".join(f"seat {s}: {format_cards(c)}" for s, c in pos.plays)
                lines.append(f"trick:   {so_far or '(the bot leads)'}")
        else:
            lines.append(
                f"where:   deal {self.deal}, trick {self.trick}; seat {seat}, seq {self.seq}"
            )
        sent = "nothing usable" if self.sent is None else (format_cards(self.sent) or "(pass)")
        played = format_cards(self.played) or "(pass)"
        lines.append(f"sent:    {sent}; played instead: {played}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "reason": self.reason,
            "deal": self.deal,
            "trick": self.trick,
            "seq": self.seq,
            "sent": None if self.sent is None else format_cards(self.sent),
            "played": format_cards(self.played),
            "latency_ms": self.latency_ms,
            "position": self.position.to_dict() if self.position else None,
        }


@dataclasses.dataclass
class ScenarioResult:
    scenario: Scenario
    state: str = "not run"  # the match's final state: finished, cancelled, failed
    match_id: str = ""
    faults: list[FaultReport] = dataclasses.field(default_factory=list)
    uncharged: int = 0  # decisions played by fallback while the bot stayed away
    other_faults: list[str] = dataclasses.field(default_factory=list)  # not the bot's
    latencies: list[float] = dataclasses.field(default_factory=list)  # seconds
    decisions: int = 0  # the bot's
    reached: list[str] = dataclasses.field(default_factory=list)
    connected: bool = True
    result: str = ""
    record: str = ""
    log: str = ""
    log_tail: list[str] = dataclasses.field(default_factory=list)
    error: str = ""
    seconds: float = 0.0

    @property
    def cause(self) -> FaultReport:
        """The fault that says why the bot failed: its process's end when the sandbox
        judged one (a bot dying of a limit often drops its stream first, so a
        ``disconnected`` may be charged a moment before it), else the first fault."""
        return next((f for f in self.faults if f.kind in PROCESS_ENDINGS), self.faults[0])

    @property
    def status(self) -> str:
        """``pass``, ``fail`` (the bot faulted), ``error`` (the match did not complete)
        or ``skipped``. A built-in opponent's fault is only a warning: it says the
        machine is too busy for the time limit, not that the bot is wrong."""
        if self.faults:
            return "fail"
        if self.state == "skipped":
            return "skipped"
        if self.state != "finished" or self.error:
            return "error"
        return "pass"

    @property
    def missed(self) -> list[str]:
        return [t for t in self.scenario.targets if t not in self.reached]

    def to_dict(self) -> dict[str, Any]:
        s = self.scenario
        return {
            "name": s.name,
            "kind": s.kind,
            "description": s.description,
            "seat": s.seat,
            "seed": s.seed,
            "deals": s.deals,
            "opponents": s.opponents,
            "status": self.status,
            "state": self.state,
            "match_id": self.match_id,
            "result": self.result,
            "connected": self.connected,
            "faults": [f.to_dict() for f in self.faults],
            "uncharged_fallbacks": self.uncharged,
            "other_faults": self.other_faults,
            "decisions": self.decisions,
            "latency_ms": latency_summary(self.latencies),
            "targets": list(s.targets),
            "reached": list(self.reached),
            "missed": self.missed,
            "record": self.record,
            "log": self.log,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1) of values already sorted."""
    if not values:
        return 0.0
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def latency_summary(seconds: Sequence[float]) -> dict[str, float | int]:
    ms = sorted(x * 1000 for x in seconds)
    return {
        "n": len(ms),
        "p50": round(percentile(ms, 0.5), 3),
        "p99": round(percentile(ms, 0.99), 3),
        "max": round(ms[-1], 3) if ms else 0.0,
    }


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    time_limit_ms: int = 1000
    time_bank_ms: int = 0
    grace_ms: int = 1000
    connect_timeout: float = 15.0
    max_faults: int = 5
    parallel: int = 2
    out: Path = Path("records/check-bot")
    fail_fast: bool = False
    sandbox: SandboxLimits | None = None  # run the bot in the sandbox, under these limits

    def time_control(self) -> TimeControl:
        return TimeControl(self.time_limit_ms, self.time_bank_ms, self.grace_ms)

    def policy(self) -> FaultPolicy:
        return FaultPolicy.parse("lenient", 10, self.max_faults)


@dataclasses.dataclass
class CheckReport:
    command: str
    options: CheckOptions
    results: list[ScenarioResult]
    seconds: float

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.status == "pass" for r in self.results)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def latencies(self) -> list[float]:
        return [x for r in self.results for x in r.latencies]

    def fault_counts(self) -> dict[str, int]:
        return dict(Counter(f.kind for r in self.results for f in r.faults))

    def to_dict(self) -> dict[str, Any]:
        o = self.options
        return {
            "bot": self.command,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "scenarios": [r.to_dict() for r in self.results],
            "faults": self.fault_counts(),
            "latency_ms": latency_summary(self.latencies()),
            "time_control": o.time_control().to_dict(),
            "max_faults": o.max_faults,
            "sandbox": o.sandbox.describe() if o.sandbox else None,
            "out": str(o.out),
            "seconds": round(self.seconds, 3),
        }


__all__ = [
    "FAULT_LABELS",
    "CheckOptions",
    "CheckReport",
    "FaultReport",
    "ScenarioResult",
    "latency_summary",
    "percentile",
    "plural",
]
