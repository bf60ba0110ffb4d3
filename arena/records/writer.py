"""Writing a match record as the match goes (docs/records.md).

:class:`RecordWriter` appends one JSON line per call and flushes it to the operating
system before returning, so a record killed at any moment holds every line written so far
(with at most one partial last line, which the reader drops). ``fsync=True`` also forces
each batch to the disk (survives a power cut; costs a disk round trip per call). The
footer's digest is computed as the lines are written. Between :meth:`RecordWriter.hold`
and :meth:`RecordWriter.release` the lines are encoded as they come and written in one
``write`` at the release: the referee core holds its record for the length of one
answer (the events before it, its line, a penalty or forfeit it caused), so a decision
costs one system call, not two or three (issue 20).

:class:`NullRecorder` has the same methods and writes nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from arena.errors import StateError
from arena.game import Event, FaultNote, Kind, MatchEnded, Ruling
from arena.records.format import RecordHeader, dump_line
from arena.records.models import encode  # dump_line's own, called with a dict
from arena.rules import Card, codes


class RecordWriter:
    """Appends a match record to a file, one flushed line at a time.

    Open with :meth:`open`, which writes the header (line 0). Every method writes its
    lines and flushes them; :meth:`close` writes the footer and closes the file. Used as a
    context manager, leaving the block closes the file *without* a footer if
    :meth:`close` was not called (say, after a crash): the record then reads as
    incomplete, which is the truth.

    An ``OSError`` while writing (a full disk) propagates; the writer is then broken and
    every later call raises :class:`~arena.errors.StateError`. Calling anything after
    :meth:`close` also raises ``StateError`` (a bug in the caller).
    """

    def __init__(
        self,
        file: IO[bytes],
        header: RecordHeader,
        *,
        fsync: bool = False,
        continuing: bytes | None = None,
    ) -> None:
        """Write the header to ``file`` (open for binary writing), or, given
        ``continuing`` (the complete lines already in ``file``, which must be open for
        appending after exactly those bytes), carry on their numbering and digest
        without writing anything: how a resumed match keeps one verifiable record."""
        self.header = header
        self.fsync = fsync
        self.lines = 0  # lines written so far; the next line's number
        self._file: IO[bytes] | None = file
        self._digest = hashlib.sha256()
        self._broken = False
        self._result: MatchEnded | None = None
        self._held: list[bytes] | None = None  # encoded lines waiting for release()
        if continuing is None:
            self._write([{"type": "header", **header.to_dict()}])
        else:
            if continuing and not continuing.endswith(b"\n"):
                raise ValueError("continuing must hold complete lines only")
            self.lines = continuing.count(b"\n")
            self._digest.update(continuing)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        header: RecordHeader,
        *,
        fsync: bool = False,
        overwrite: bool = False,
    ) -> RecordWriter:
        """Create ``path`` and write the header. Refuses an existing file unless
        ``overwrite`` (a record is never silently replaced).

        Raises:
            FileExistsError: ``path`` exists and ``overwrite`` is false.
        """
        file = Path(path).open("wb" if overwrite else "xb")  # noqa: SIM115 - kept open
        try:
            return cls(file, header, fsync=fsync)
        except BaseException:
            file.close()
            raise

    # -- holding -----------------------------------------------------------------------

    def hold(self) -> None:
        """Keep the lines of the next calls (encoded, numbered and digested in order)
        and write them together at :meth:`release`: one ``write`` and flush for the
        lines of one answer. A killed process then loses at most those lines, as it
        would lose a line being written: the record stays whole up to the last release."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Write and flush what :meth:`hold` kept, and write each call's lines at once again."""
        held, self._held = self._held, None
        if held:
            self._put(held)

    # -- lines -------------------------------------------------------------------------

    def deck(self, deal: int, attempt: int, cards: Sequence[Card]) -> None:
        """The deck of a deal (redeal ``attempt``), in dealing order, as the deal starts."""
        self._write([{"type": "deck", "deal": deal, "attempt": attempt, "cards": codes(cards)}])

    def events(self, events: Sequence[Event]) -> None:
        """Match events, unredacted, in the order the machine emitted them."""
        if not events:
            return
        chunks = self._chunks()
        update = self._digest.update
        n = self.lines
        for event in events:  # (one loop per call: the lines of one answer's events)
            if type(event) is MatchEnded:
                self._result = event
            data = encode({"n": n, "type": "event", "event": event.to_dict()})
            update(data)
            chunks.append(data)
            n += 1
            self.lines = n
        if chunks is not self._held:
            self._put(chunks)

    def answer(
        self,
        *,
        seat: int,
        seq: int,
        kind: str | Kind,
        sent: Sequence[Card] | None,
        played: Sequence[Card],
        requested_at_ms: float = 0.0,
        latency_ms: float = 0.0,
        fault: FaultNote | None = None,
        absent: bool = False,
    ) -> None:
        """One answer fed to the machine: what the seat sent (``None``: nothing usable),
        what was played (its answer, or the fallback on a ``fault``, or while the seat
        is ``absent`` after its disconnection was charged), and when."""
        ruling = _FAULT if fault is not None else _ABSENT if absent else _ACCEPTED
        line: dict[str, Any] = {
            "n": self.lines,
            "type": "answer",
            "seat": int(seat),  # a Seat would take the encoder's hook: the same digits
            "seq": seq,
            "kind": kind if isinstance(kind, str) else kind.value,  # the core passes its word
            "sent": None if sent is None else codes(sent),
            "played": codes(played),
            "requested_at_ms": requested_at_ms,
            "latency_ms": latency_ms,
            "verdict": ruling,  # a Ruling's word (its member would cost a .value per line)
            "fault": None if fault is None else {"kind": str(fault.kind), "reason": fault.reason},
        }
        if self._file is None or self._broken or self._held is None:
            chunks = self._chunks()  # (raises if closed or broken)
        else:
            chunks = self._held
        data = encode(line)
        self._digest.update(data)
        chunks.append(data)
        self.lines += 1
        if chunks is not self._held:
            self._put(chunks)

    def penalty(self, team: int, points: int, reason: str) -> None:
        """A referee penalty fed to the machine (``MatchMachine.penalize``)."""
        self._write([{"type": "penalty", "team": team, "points": points, "reason": reason}])

    def forfeit(self, team: int, reason: str) -> None:
        """``team`` forfeits the match (``MatchMachine.forfeit``)."""
        self._write([{"type": "forfeit", "team": team, "reason": reason}])

    def cancel(self, reason: str) -> None:
        """The match is cancelled (``MatchMachine.cancel``)."""
        self._write([{"type": "cancel", "reason": reason}])

    def close(
        self, result: MatchEnded | None = None, faults: Sequence[FaultNote] | None = None
    ) -> None:
        """Write the footer and close the file.

        ``result`` defaults to the ``match_ended`` event written last; ``faults`` (each
        one's ``to_dict()``) to none.

        Raises:
            StateError: no result given and no ``match_ended`` event written.
        """
        self.release()
        result = result or self._result
        if result is None:
            raise StateError("a record's footer needs the match result")
        footer = {
            "type": "footer",
            "result": result.to_dict(),
            "faults": [f.to_dict() for f in faults or ()],
            "lines": self.lines,
            "digest": f"sha256:{self._digest.hexdigest()}",
        }
        self._write([footer], digest=False)
        self._close_file()

    @property
    def closed(self) -> bool:
        return self._file is None

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of every line so far (before the footer, once written)."""
        return f"sha256:{self._digest.hexdigest()}"

    # -- the file ----------------------------------------------------------------------

    def _chunks(self) -> list[bytes]:
        """Where the next lines go: the held lines, or a new batch written at once."""
        if self._file is None or self._broken:
            closed = self._file is None
            raise StateError("the record is closed" if closed else "the record is broken")
        held = self._held
        return [] if held is None else held

    def _write(self, lines: list[dict[str, Any]], digest: bool = True) -> None:
        first = self.lines
        self._write_numbered([{"n": first + i, **line} for i, line in enumerate(lines)], digest)

    def _write_numbered(self, lines: list[dict[str, Any]], digest: bool = True) -> None:
        """Write ``lines``, each already starting with its number ``n`` (the next ones)."""
        file = self._file
        if file is None or self._broken:
            raise StateError("the record is closed" if file is None else "the record is broken")
        held = self._held
        chunks = [] if held is None else held
        for line in lines:
            data = dump_line(line)
            if digest:
                self._digest.update(data)
            chunks.append(data)
            self.lines += 1
        if held is None:
            self._put(chunks)

    def _put(self, chunks: list[bytes]) -> None:
        file = self._file
        if file is None or self._broken:
            raise StateError("the record is closed" if file is None else "the record is broken")
        try:
            file.write(b"".join(chunks))
            file.flush()
            if self.fsync:
                os.fsync(file.fileno())
        except BaseException:
            self._broken = True
            raise

    def _close_file(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            file.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._held and self._file is not None and not self._broken:
            self.release()  # complete lines, numbered and digested: they belong in the file
        self._close_file()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.lines} lines"
        return f"<RecordWriter {self.header.match_id!r} {state}>"


_ACCEPTED, _FAULT, _ABSENT = Ruling.ACCEPTED.value, Ruling.FAULT.value, Ruling.ABSENT.value


class NullRecorder:
    """A recorder that records nothing: the same methods as :class:`RecordWriter`."""

    lines = 0
    closed = False

    def hold(self) -> None:
        pass

    def release(self) -> None:
        pass

    def deck(self, deal: int, attempt: int, cards: Sequence[Card]) -> None:
        pass

    def events(self, events: Sequence[Event]) -> None:
        pass

    def answer(
        self,
        *,
        seat: int,
        seq: int,
        kind: str | Kind,
        sent: Sequence[Card] | None,
        played: Sequence[Card],
        requested_at_ms: float = 0.0,
        latency_ms: float = 0.0,
        fault: FaultNote | None = None,
        absent: bool = False,
    ) -> None:
        pass

    def penalty(self, team: int, points: int, reason: str) -> None:
        pass

    def forfeit(self, team: int, reason: str) -> None:
        pass

    def cancel(self, reason: str) -> None:
        pass

    def close(
        self, result: MatchEnded | None = None, faults: Sequence[FaultNote] | None = None
    ) -> None:
        self.closed = True

    def __enter__(self) -> NullRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        pass
