"""A finished match's record as the replay viewer's data, and ``arena show --html``.

The viewer steps through the record's events; each faulted answer becomes a ``fault``
item at its place among them, so the viewer can show faults as they happened. With a
seat (``arena show --seat S``), the events pass through
:func:`arena.game.views.seat_events`, the one redaction function: the file then holds
only what that seat saw.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from arena.game.views import seat_events
from arena.http.pages import replay_page, table_config
from arena.records import AnswerLine, EventLine, Record
from arena.rules import RuleSet


def replay_events(record: Record, seat: int | None = None) -> list[dict[str, Any]]:
    """The viewer's items: the record's events (for ``seat``, what it saw) and faults."""
    out: list[dict[str, Any]] = []
    for line in record.lines:
        item = line.item
        if isinstance(item, EventLine):
            shown = [item.event] if seat is None else seat_events([item.event], seat)
            out.extend(event.to_dict() for event in shown)
        elif isinstance(item, AnswerLine) and item.fault:
            out.append(
                {
                    "type": "fault",
                    "seat": item.seat,
                    "kind": item.fault_kind or "",
                    "reason": item.fault_reason or "",
                }
            )
    return out


def seat_names(record: Record) -> list[str]:
    header = record.header
    return [s.name for s in header.seats] if header else [f"seat {i}" for i in range(4)]


def replay_html(record: Record, seat: int | None = None, back: str = "") -> str:
    """One self-contained page that replays ``record`` (``seat``: only what it saw)."""
    header = record.header
    rules = header.rules if header else RuleSet()
    match_id = header.match_id if header else Path(record.path).stem
    title = f"Match {match_id}" + (f" as seat {seat} saw it" if seat is not None else "")
    config = table_config(rules, seat_names(record))
    return replay_page(title, config, replay_events(record, seat), back)


def write_replay(record: Record, out: str | Path, seat: int | None = None) -> int:
    """Write the single-file replay; its size in bytes."""
    text = replay_html(record, seat, back=f"<span>{html.escape(Path(record.path).name)}</span>")
    data = text.encode("utf-8")
    Path(out).write_bytes(data)
    return len(data)
