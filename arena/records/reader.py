"""The one reader of match records (docs/records.md), in the spirit of python-chess's pgn.

:func:`read_record` never gives up on a record: every line it can parse is kept, and
what is wrong is collected in :attr:`Record.problems`, each naming its line. Replay and
verify, ``arena show`` and the tests all read records through it.

A record cut off at any byte (a killed process, a full disk) reads up to its last
complete line and is :attr:`~Record.complete` = ``False`` with no problem: a partial
last line is not corruption. Only a record that ends with its footer is complete.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import msgspec

from arena.game import Event, MatchEnded
from arena.records.format import RecordError, RecordHeader
from arena.records.lines import (
    PARSERS,
    AnswerLine,
    CancelLine,
    DeckLine,
    EventLine,
    Footer,
    ForfeitLine,
    Input,
    Item,
    PenaltyLine,
)
from arena.records.summary import DealRecord, TrickRecord, summarize


@dataclasses.dataclass(frozen=True, slots=True)
class Line:
    """One complete line as read: its position, type, decoded object and exact bytes.
    ``item`` is its typed content, ``None`` when the line is broken (see problems)."""

    n: int
    type: str
    data: dict[str, Any]
    raw: bytes
    item: Item | None


@dataclasses.dataclass
class Record:
    """A match record as read. ``lines`` holds every complete line that decoded as a
    JSON object, in file order; ``issues`` the problems as (line number, message)."""

    path: str
    lines: list[Line]
    header: RecordHeader | None
    footer: Footer | None
    complete: bool
    issues: list[tuple[int, str]]
    last_complete_line: int  # -1 when not even the header is complete
    tail_bytes: int  # bytes after the last complete line (a cut-off line), dropped
    digest: str  # sha256 over the lines before the footer (all lines if none)

    @property
    def problems(self) -> list[str]:
        return [f"line {n}: {message}" for n, message in self.issues]

    def items(self) -> Iterator[Item]:
        return (line.item for line in self.lines if line.item is not None)

    def events(self) -> list[Event]:
        return [i.event for i in self.items() if isinstance(i, EventLine)]

    def decks(self) -> list[DeckLine]:
        return [i for i in self.items() if isinstance(i, DeckLine)]

    def answers(self) -> list[AnswerLine]:
        return [i for i in self.items() if isinstance(i, AnswerLine)]

    def inputs(self) -> list[Input]:
        kinds = (AnswerLine, PenaltyLine, ForfeitLine, CancelLine)
        return [i for i in self.items() if isinstance(i, kinds)]

    def deals(self, seat: int | None = None) -> list[DealRecord]:
        """Per deal attempt: deck, hands, bids, trump, kitty and burial, tricks, faults,
        result. With ``seat``, only what that seat saw (no deck, no other hands)."""
        return summarize(self.items(), seat)

    def tricks(self, seat: int | None = None) -> list[TrickRecord]:
        return [t for deal in self.deals(seat) for t in deal.tricks]

    @property
    def result(self) -> MatchEnded | None:
        """The footer's result, else the ``match_ended`` event if one was written."""
        if self.footer is not None:
            return self.footer.result
        ended = [e for e in self.events() if isinstance(e, MatchEnded)]
        return ended[-1] if ended else None

    def __repr__(self) -> str:
        state = "complete" if self.complete else "incomplete"
        return (
            f"<Record {self.path!r} {len(self.lines)} lines, {state}, {len(self.issues)} problems>"
        )


def read_record(path: str | os.PathLike[str]) -> Record:
    """Read a record file. Raises only ``OSError`` (the file cannot be read)."""
    return parse_record(Path(path).read_bytes(), os.fspath(path))


def parse_record(data: bytes, name: str = "<record>") -> Record:
    """Read a record from its bytes; never raises."""
    chunks = data.split(b"\n")
    tail = chunks.pop()  # b"" when the data ends with a newline; else a cut-off line
    lines: list[Line] = []
    issues: list[tuple[int, str]] = []
    header: RecordHeader | None = None
    footer: Footer | None = None
    footer_at = -1
    prev_n: int | None = None
    for index, chunk in enumerate(chunks):
        raw = chunk + b"\n"
        decoded = _decode(chunk)
        if isinstance(decoded, str):
            issues.append((index, decoded))
            prev_n = None
            continue
        n, kind = decoded.get("n"), decoded.get("type")
        if not isinstance(n, int) or isinstance(n, bool):
            issues.append((index, f"no line number (n is {n!r})"))
        elif n != index and (prev_n is None or n != prev_n + 1):
            issues.append(
                (index, f"numbered {n}, expected {index}: a line is missing, repeated or moved")
            )
        prev_n = n if isinstance(n, int) else None
        if footer_at >= 0 and footer_at == index - 1:
            issues.append((index, f"a line after the footer (line {footer_at})"))
        item = _parse(decoded, kind, index, issues)
        if index == 0 and not isinstance(item, RecordHeader) and kind != "header":
            issues.append((0, f"the first line is a {kind!r} line, not the header"))
        elif index > 0 and kind == "header":
            issues.append((index, "a second header"))
        if isinstance(item, RecordHeader) and index == 0:
            header = item
        if kind == "footer":
            footer_at = index
            footer = item if isinstance(item, Footer) else None
        lines.append(Line(index, str(kind), decoded, raw, item))
    before = chunks[:footer_at] if footer_at >= 0 else chunks
    digest = hashlib.sha256()
    for chunk in before:
        digest.update(chunk + b"\n")
    hexdigest = f"sha256:{digest.hexdigest()}"
    if footer is not None:
        if footer.lines != footer_at:
            issues.append(
                (footer_at, f"the footer counts {footer.lines} lines before it, not {footer_at}")
            )
        if footer.digest != hexdigest:
            issues.append(
                (footer_at, f"the footer digest {footer.digest} does not match the lines "
                            f"before it ({hexdigest})")
            )  # fmt: skip
    ends_with_footer = footer_at >= 0 and footer_at == len(chunks) - 1
    if tail and footer_at >= 0:
        issues.append((len(chunks), f"{len(tail)} bytes after the footer"))
    issues.sort(key=lambda issue: issue[0])
    return Record(
        path=name,
        lines=lines,
        header=header,
        footer=footer,
        complete=ends_with_footer and not tail,
        issues=issues,
        last_complete_line=len(chunks) - 1,
        tail_bytes=len(tail),
        digest=hexdigest,
    )


def _decode(chunk: bytes) -> dict[str, Any] | str:
    """The line's JSON object, or the reason it is not one. msgspec decodes (fast); a
    line it refuses goes to the stdlib, which reads lone surrogates (``"\\ud800"``, in a
    seat name escaped by the writer) and words the reason."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 (byte {exc.start})"
    try:
        data = _JSON.decode(text)
    except (msgspec.DecodeError, RecursionError):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"not valid JSON: {exc.msg} at column {exc.colno}"
        except RecursionError:
            return "not valid JSON: nested too deeply"
    if not isinstance(data, dict):
        return f"not a JSON object but {type(data).__name__}"
    return data


_JSON: Final = msgspec.json.Decoder()


def _parse(
    data: dict[str, Any], kind: Any, index: int, issues: list[tuple[int, str]]
) -> Item | None:
    parser = PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        issues.append((index, f"unknown line type {kind!r}"))
        return None
    try:
        return parser(data, index)
    except RecordError as exc:
        issues.append((index, f"{kind}: {exc}"))
        return None


__all__ = ["Line", "Record", "parse_record", "read_record"]
