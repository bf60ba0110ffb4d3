"""``arena replay RECORD [--verify]``: check a match record, and with ``--verify``
re-simulate it from its seed and inputs, comparing every event (docs/records.md).

Exit status: 0 the record is complete (and, with ``--verify``, replays identically);
1 a problem or divergence, named by its line; 2 the file cannot be read; 3 the record
is incomplete (cut off), though consistent as far as it goes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from arena.records import Record, read_record, verify
from arena.rules import team_of
from arena.text import MAX_NAME, MAX_REASON, printable

INCOMPLETE = 3


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="check a match record; --verify re-simulates it and compares every event",
        description="Reads a match record and prints a summary. With --verify, rebuilds the "
        "match from the header's rules and seed, feeds it the recorded answers, penalties "
        "and forfeits, and compares every deck and event with the record, stopping at the "
        "first divergence. Exit 0: complete (and verified); 1: a problem, named by its line; "
        "2: unreadable; 3: incomplete.",
    )
    p.add_argument("record", metavar="RECORD", help="the record file (.jsonl)")
    p.add_argument("--verify", action="store_true", help="re-simulate and compare every event")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    record = load(args.record, "replay")
    if record is None:
        return 2
    for line in summary(record):
        _say(line)
    if args.verify:
        result = verify(record)
        if result.ok:
            _say(str(result))
            return 0
        if not result.complete and result.message.startswith("incomplete"):
            _say(f"{result.message} (consistent with the replay up to there)")
            return INCOMPLETE
        _say(f"divergence at {result}")
        return 1
    if record.problems:
        _say(f"problem at {record.problems[0]}")
        for problem in record.problems[1:5]:
            _say(f"  also {problem}")
        return 1
    if not record.complete:
        _say(_incomplete(record))
        return INCOMPLETE
    _say("complete; not re-simulated (use --verify)")
    return 0


def load(path: str, command: str) -> Record | None:
    """The record at ``path``, or ``None`` after one line on stderr saying why it cannot
    be used: unreadable, or not a match record at all (its first line is no header)."""
    try:
        record = read_record(path)
    except OSError as exc:
        print(
            printable(f"arena {command}: cannot read {path}: {exc.strerror or exc}"),
            file=sys.stderr,
        )
        return None
    if record.header is None and (record.lines or record.problems):
        first = record.problems[0] if record.problems else "no header"
        print(
            printable(
                f"arena {command}: {path} is not a match record: its first line is not a "
                f"record header ({first}; the format: docs/records.md)"
            ),
            file=sys.stderr,
        )
        return None
    return record


def _say(text: str) -> None:
    """Print a line built from a record: whatever a bot wrote in it is escaped."""
    print(printable(text))


def summary(record: Record, seat: int | None = None) -> list[str]:
    """A few lines on who played what, and how it ended (with ``seat``: as that seat saw
    it, so its own answers and faults only)."""
    out = [f"record: {record.path} ({len(record.lines)} lines)"]
    header = record.header
    if header is not None:
        variants = header.rules.changes()
        rules = ", ".join(f"{k}={v}" for k, v in variants.items()) or "competition rules"
        out.append(
            f"match {printable(header.match_id, MAX_NAME)} · seed {header.seed} · "
            f"arena {printable(header.arena_version, MAX_NAME)} · {rules}"
        )
        for i, s in enumerate(header.seats):
            # every text a bot chose is escaped: a name must not drive the terminal
            name, bot = printable(s.name, MAX_NAME), printable(s.bot, 2 * MAX_NAME)
            version = f" {printable(s.version, MAX_NAME)}" if s.version else ""
            out.append(f"  seat {i} (team {team_of(i)}): {name} [{bot}{version}]")
    result = record.result
    if result is not None:
        winner = "a draw" if result.winner is None else f"team {result.winner} wins"
        levels = "/".join(r.code for r in result.levels)
        detail = printable(result.detail, MAX_REASON)
        out.append(
            f"result: {winner} ({printable(result.reason)}{': ' + detail if detail else ''}) "
            f"after {result.deals} deals; levels {levels}"
        )
    answers = [a for a in record.answers() if seat is None or a.seat == seat]
    faults = [a for a in answers if a.fault]
    mine = f"seat {seat}'s " if seat is not None else ""
    out.append(f"{mine}answers: {len(answers)}, faults: {len(faults)}")
    if seat is not None:
        out.append(f"as seen by seat {seat}")
    return out


def _incomplete(record: Record) -> str:
    last = record.last_complete_line
    if last < 0:
        return "incomplete: no complete line"
    return f"incomplete: last complete line {last}"
