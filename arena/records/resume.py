"""Appending to a record that was cut off (a killed server, a full disk).

:func:`reopen` cuts the file back to the bytes to keep and returns a writer that carries
on its line numbers and digest, so the finished record verifies as if nothing had
happened. Rebuilding the match itself is the referee's: :func:`arena.referee.restore`.
"""

from __future__ import annotations

from pathlib import Path

from arena.records.format import RecordError
from arena.records.reader import Record
from arena.records.writer import RecordWriter


def reopen(record: Record, keep: int | None = None, *, fsync: bool = False) -> RecordWriter:
    """Append to ``record``'s file after its first ``keep`` bytes (default: every complete
    line, dropping a cut-off last one); numbering and digest carry on."""
    header = record.header
    if header is None:
        raise RecordError(f"{record.path}: no readable header")
    path = Path(record.path)
    size = path.stat().st_size - record.tail_bytes if keep is None else keep
    with path.open("r+b") as cut:
        cut.truncate(size)
        data = cut.read(size)
    return RecordWriter(path.open("ab"), header, fsync=fsync, continuing=data)
