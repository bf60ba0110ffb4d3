"""Match records: write them as the match goes, read them back, replay and verify them.

The format is specified in docs/records.md (``"format": "arena-record", "version": 2``).
Other layers import from here, never from a module inside (STYLE.md habit 3).
"""

from arena.records.format import FORMAT, VERSION, RecordError, RecordHeader, SeatRecord
from arena.records.lines import (
    AnswerLine,
    CancelLine,
    DeckLine,
    EventLine,
    Footer,
    ForfeitLine,
    PenaltyLine,
)
from arena.records.reader import Line, Record, parse_record, read_record
from arena.records.replay import VerifyResult, verify
from arena.records.resume import Restored, reopen, restore
from arena.records.summary import DealFault, DealRecord, TrickRecord
from arena.records.writer import NullRecorder, RecordWriter

__all__ = [
    "FORMAT",
    "VERSION",
    "AnswerLine",
    "CancelLine",
    "DealFault",
    "DealRecord",
    "DeckLine",
    "EventLine",
    "Footer",
    "ForfeitLine",
    "Line",
    "NullRecorder",
    "PenaltyLine",
    "Record",
    "RecordError",
    "RecordHeader",
    "RecordWriter",
    "Restored",
    "SeatRecord",
    "TrickRecord",
    "VerifyResult",
    "parse_record",
    "read_record",
    "reopen",
    "restore",
    "verify",
]
