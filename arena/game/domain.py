"""The game's words as types: how a match ends and what a seat can do wrong.

Like python-chess's ``Termination``, these are enums the code compares by member. Their
values are the words records and the wire carry; they are ``StrEnum`` so those edges
write them as they are, and read them back with ``Termination(text)`` in one place each.
"""

from __future__ import annotations

import enum


class Termination(enum.StrEnum):
    """Why a match ended (``MatchEnded.reason``)."""

    LEVEL_A_KEPT = "level_a_kept"  # the dealer team kept the deal at A (RULES.md §8)
    PASSED_A = "passed_a"  # a team moved past A
    DEALS_PLAYED = "deals_played"  # the rule set's number of deals was played
    FORFEIT = "forfeit"  # a team forfeited (strict policy, or too many faults)
    CANCELLED = "cancelled"  # stopped by the organiser or the server
    FAILED = "failed"  # the server could not run the match (a bot never came, a crash)

    @property
    def played_out(self) -> bool:
        """Ended by the cards, not by the referee or the organiser."""
        return self in (Termination.LEVEL_A_KEPT, Termination.PASSED_A, Termination.DEALS_PLAYED)


class Ruling(enum.StrEnum):
    """How the referee judged one answer (an answer line's ``verdict``)."""

    ACCEPTED = "accepted"  # applied as sent
    FAULT = "fault"  # a fault: the fallback was played instead
    ABSENT = "absent"  # the seat is away, its disconnection already charged: fallback


class FaultKind(enum.StrEnum):
    """What a seat did wrong (a fault, kept apart from rule events like a failed throw)."""

    TIMEOUT = "timeout"
    ILLEGAL_ACTION = "illegal_action"
    MALFORMED = "malformed"
    UNKNOWN_SEQUENCE = "unknown_sequence"
    DISCONNECTED = "disconnected"
    # a sandboxed bot's process ended (arena.batch.sandbox judges why)
    MEMORY_LIMIT = "memory_limit"
    CPU_LIMIT = "cpu_limit"
    OUTPUT_LIMIT = "output_limit"
    PROCESS_LIMIT = "process_limit"
    CRASHED = "crashed"
