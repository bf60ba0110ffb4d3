"""Carrying on a match whose record was cut off (a killed server, a full disk).

A record holds the seed and every input, so replaying it rebuilds the exact match
state (:func:`restore`). :func:`reopen` drops a cut-off last line, if any, and returns a
writer that appends to the record, its line numbers and digest carrying on, so the
finished record verifies as if nothing had happened.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from arena.game import AnswerFault, MatchMachine
from arena.records.format import RecordError
from arena.records.lines import (
    AnswerLine,
    CancelLine,
    DeckLine,
    EventLine,
    ForfeitLine,
    PenaltyLine,
)
from arena.records.reader import Record
from arena.records.replay import verify
from arena.records.writer import RecordWriter


@dataclasses.dataclass(frozen=True)
class Restored:
    """A match rebuilt from its incomplete record."""

    record: Record
    match: MatchMachine
    seq: int  # the last sequence number the record holds
    team_faults: tuple[int, int]  # penalties charged so far, per team
    bank_used_ms: tuple[float, float, float, float]  # time-bank use per seat
    written: tuple[int, int]  # (events, decks) already in the record
    faults: tuple[AnswerFault, ...]  # every faulted answer, in order (penalty_points: what
    # the penalty line just before it charged, 0 if none)
    clock_ms: float  # the last request time recorded (ms since the match started)


def restore(record: Record) -> Restored:
    """Rebuild the match of an incomplete record by replaying its inputs.

    Raises:
        RecordError: the record is complete, has no header, or does not replay.
    """
    if record.complete:
        raise RecordError(f"{record.path}: the record is complete; nothing to resume")
    header = record.header
    if header is None:
        raise RecordError(f"{record.path}: no readable header; cannot resume")
    check = verify(record)
    if check.line is not None and not check.message.startswith("incomplete"):
        raise RecordError(f"{record.path}: line {check.line}: {check.message}")
    match = MatchMachine(header.setup)
    if match.finished:  # pragma: no cover - a new machine is never finished
        raise RecordError(f"{record.path}: nothing to resume")
    tc = header.time_control
    limit = float(tc.get("decision_ms", 1000)) + float(tc.get("allowance_ms", 50))
    seq = 0
    team_faults = [0, 0]
    bank = [0.0, 0.0, 0.0, 0.0]
    events = decks = 0
    faults: list[AnswerFault] = []
    charged = 0
    clock = 0.0
    for item in record.items():
        if isinstance(item, EventLine):
            events += 1
        elif isinstance(item, DeckLine):
            decks += 1
        elif isinstance(item, PenaltyLine):
            team_faults[item.team] += 1
            charged = item.points
            match.penalize(item.team, item.points, item.reason)
        elif isinstance(item, ForfeitLine):
            match.forfeit(item.team, item.reason)
        elif isinstance(item, CancelLine):
            match.cancel(item.reason)
        elif isinstance(item, AnswerLine):
            seq = max(seq, item.seq)
            clock = max(clock, item.requested_at_ms + item.latency_ms)
            bank[item.seat] += max(0.0, item.latency_ms - limit)
            if item.fault:
                deal = match.deal
                faults.append(AnswerFault(
                    item.seat, item.fault_kind or "", item.fault_reason or "", deal.deal,
                    deal.trick, item.seq, charged, item.played,
                ))  # fmt: skip
            charged = 0
            if not match.finished:
                match.answer(item.seat, item.played)
    if match.finished:
        raise RecordError(f"{record.path}: the match is over; only its footer is missing")
    return Restored(
        record, match, seq, (team_faults[0], team_faults[1]),
        (bank[0], bank[1], bank[2], bank[3]), (events, decks), tuple(faults), clock,
    )  # fmt: skip


def reopen(record: Record, *, fsync: bool = False) -> RecordWriter:
    """Append to ``record``'s file: drop a cut-off last line, carry on numbering and digest."""
    header = record.header
    if header is None:
        raise RecordError(f"{record.path}: no readable header")
    path = Path(record.path)
    size = path.stat().st_size - record.tail_bytes
    with path.open("r+b") as cut:
        cut.truncate(size)
        data = cut.read(size)
    return RecordWriter(path.open("ab"), header, fsync=fsync, continuing=data)
