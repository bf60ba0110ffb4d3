"""An event match's result, read from its record (the one source, also after a crash)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.records import RecordError, read_record


def result_of_record(path: str | Path) -> dict[str, Any]:
    """Winner, reason and per-seat decisions, faults and latency of a complete record.

    Raises:
        ArenaError: the record is missing, unreadable or incomplete.
    """
    try:
        record = read_record(path)
    except (RecordError, OSError) as exc:
        raise ArenaError(f"cannot read the record {path}: {exc}") from None
    ended = record.result
    if not record.complete or ended is None:
        raise ArenaError(f"the record {path} is incomplete")
    decisions, faults, answers = [0] * 4, [0] * 4, [0] * 4
    latency = [0.0] * 4
    for answer in record.answers():
        decisions[answer.seat] += 1
        if answer.fault:
            faults[answer.seat] += 1
        else:
            answers[answer.seat] += 1
            latency[answer.seat] += answer.latency_ms
    return {
        "winner": ended.winner,
        "reason": ended.reason,
        "deals": ended.deals,
        "decisions": decisions,
        "faults": faults,
        "answers": answers,
        "latency_sum_ms": [round(x, 3) for x in latency],
        "order": time.time_ns(),
    }
