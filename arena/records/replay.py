"""Re-simulating a record: ``arena replay --verify``.

:func:`verify` rebuilds the match machine from the header (rules, seed, stacked decks),
feeds it the recorded inputs in order and compares every deck and event it produces with
the recorded lines. It stops at the first divergence and names its line; problems the
reader found (numbering, the footer's line count and digest, broken lines) count too,
and whichever comes first in the file is reported. A record verifies only if it is
complete and every check passes.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from typing import Any

from arena.errors import ArenaError
from arena.game import Event, FaultKind, MatchEnded, MatchMachine, RecordFeed
from arena.records.format import RecordHeader
from arena.records.lines import (
    AnswerLine,
    CancelLine,
    DeckLine,
    EventLine,
    Footer,
    ForfeitLine,
    Input,
    PenaltyLine,
)
from arena.records.reader import Record
from arena.rules import Card, codes, format_cards


@dataclasses.dataclass(frozen=True, slots=True)
class VerifyResult:
    """``ok``: complete and identical on replay. Otherwise ``line`` and ``message`` say
    where and what the first problem is (for an incomplete but consistent record,
    ``line`` is the last complete line and ``message`` starts with "incomplete")."""

    ok: bool
    complete: bool
    line: int | None
    message: str
    events: tuple[Event, ...]  # what the replay produced
    inputs: int  # inputs fed to the machine
    result: MatchEnded | None

    def __str__(self) -> str:
        if self.ok:
            return (
                f"verified: {len(self.events)} events from {self.inputs} inputs replay identically"
            )
        if self.line is None or self.message.startswith("incomplete"):
            return self.message
        return f"line {self.line}: {self.message}"


class Divergence(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class _Expected:
    """Collects what the replayed machine emits, as the lines a record should hold."""

    def __init__(self) -> None:
        self.queue: deque[tuple[str, Any]] = deque()

    def deck(self, deal: int, attempt: int, cards: Sequence[Card]) -> None:
        self.queue.append(("deck", (deal, attempt, tuple(cards))))

    def events(self, events: Sequence[Event]) -> None:
        self.queue.extend(("event", e) for e in events)


def verify(record: Record) -> VerifyResult:
    """Replay ``record`` and compare; never raises on a bad record."""
    header = record.header
    found: list[tuple[int, str]] = list(record.issues)
    events: list[Event] = []
    inputs = 0
    match: MatchMachine | None = None
    if header is not None:
        match = MatchMachine(header.setup)
        expected = _Expected()
        feed = RecordFeed(match, expected)
        feed.flush()
        try:
            inputs = _replay(record, match, feed, expected)
        except Divergence as exc:
            found.append((exc.line, exc.message))
        events = list(match.events)
    elif not found and record.lines:
        found.append((0, "no readable header"))
    result = match.result if match is not None else None
    if found:
        line, message = min(found, key=lambda f: f[0])
        return VerifyResult(False, record.complete, line, message, tuple(events), inputs, result)
    if not record.complete:
        last = record.last_complete_line
        message = (
            f"incomplete: last complete line {last}"
            if last >= 0
            else "incomplete: no complete line"
        )
        at = last if last >= 0 else None
        return VerifyResult(False, False, at, message, tuple(events), inputs, result)
    return VerifyResult(True, True, None, "", tuple(events), inputs, result)


def _replay(record: Record, match: MatchMachine, feed: RecordFeed, expected: _Expected) -> int:
    queue = expected.queue
    inputs = 0
    last = 0
    for line in record.lines[1:]:
        item, last = line.item, line.n
        if item is None or isinstance(item, RecordHeader):
            raise Divergence(line.n, "an unreadable line" if item is None else "a second header")
        if isinstance(item, Footer):
            _check_footer(record, item, match, queue)
            return inputs
        if isinstance(item, DeckLine | EventLine):
            if not queue:
                waiting = _waiting(match)
                raise Divergence(line.n, f"recorded {_describe(item)}, but the replay {waiting}")
            kind, want = queue.popleft()
            _compare(line.n, item, line.data, kind, want)
            continue
        if queue:
            kind, want = queue[0]
            raise Divergence(
                line.n,
                f"recorded {_describe(item)}, but the replay first emits {_name(kind, want)}",
            )
        inputs += _apply(item, match)
        feed.flush()
    if record.complete:  # pragma: no cover - a complete record ends with its footer
        raise Divergence(last, "no footer")
    return inputs


def _apply(item: Input, match: MatchMachine) -> int:
    """Feed one input to the machine; 1 if applied, 0 for a fault answered after the end."""
    n = item.n
    try:
        if isinstance(item, PenaltyLine):
            match.penalize(item.team, item.points, item.reason)
        elif isinstance(item, ForfeitLine):
            match.forfeit(item.team, item.reason)
        elif isinstance(item, CancelLine):
            match.cancel(item.reason)
        else:
            if match.finished and item.fault:
                return 0  # the fault whose forfeit ended the match: recorded, never applied
            _check_answer(item, match)
            match.answer(item.seat, item.played)
    except ArenaError as exc:
        raise Divergence(n, f"the replay refuses this {_describe(item)}: {exc}") from None
    return 1


def _check_answer(a: AnswerLine, match: MatchMachine) -> None:
    asked = {d.seat: d for d in match.pending()}
    decision = asked.get(a.seat)
    if decision is None:
        raise Divergence(a.n, f"seat {a.seat} answered, but the replay {_waiting(match)}")
    if decision.kind is not a.kind:
        raise Divergence(
            a.n, f"seat {a.seat} answered a {a.kind.value}, but was asked to {decision.kind.value}"
        )
    if not a.fault and not a.absent:
        if a.sent is None or tuple(a.sent) != tuple(a.played):
            raise Divergence(a.n, "an accepted answer whose played cards differ from those sent")
        return
    if a.absent and a.sent is not None:
        raise Divergence(a.n, "an absent seat's answer with cards sent")
    fallback = match.fallback(a.seat)
    if tuple(a.played) != tuple(fallback):
        raise Divergence(
            a.n,
            f"a {a.verdict} answer played [{format_cards(a.played)}], not the fallback "
            f"[{format_cards(fallback)}]",
        )
    sent = a.sent
    if (
        a.fault_kind is FaultKind.ILLEGAL_ACTION
        and sent is not None
        and match.check(a.seat, sent).legal
    ):
        raise Divergence(a.n, f"faulted as illegal, but [{format_cards(sent)}] is legal here")


def _compare(
    n: int, item: DeckLine | EventLine, data: dict[str, Any], kind: str, want: Any
) -> None:
    """Compare a recorded line (its raw JSON ``data``, so only the standard form passes)
    with what the replay emitted."""
    if isinstance(item, DeckLine):
        if kind != "deck":
            raise Divergence(n, f"recorded a deck, but the replay emits {_name(kind, want)}")
        deal, attempt, cards = want
        if (item.deal, item.attempt) != (deal, attempt):
            raise Divergence(
                n, f"recorded the deck of deal {item.deal} attempt {item.attempt}, but the "
                   f"replay starts deal {deal} attempt {attempt}"
            )  # fmt: skip
        if data["cards"] != codes(cards):
            at = next(
                (i for i, (x, y) in enumerate(zip(item.cards, cards, strict=False)) if x != y),
                min(len(item.cards), len(cards)),
            )
            raise Divergence(n, f"the deck of deal {deal} differs from the replay at card {at}")
        return
    if kind != "event":
        raise Divergence(n, f"recorded {_describe(item)}, but the replay emits a deck first")
    got, exp = data["event"], want.to_dict()
    if got == exp:
        return
    if got["type"] != exp["type"]:
        raise Divergence(n, f"recorded {_describe(item)}, but the replay emits {_name(kind, want)}")
    diffs = [k for k in exp if got.get(k) != exp[k]] + [k for k in got if k not in exp]
    key = diffs[0]
    raise Divergence(
        n,
        f"{exp['type']} differs from the replay: {key} is {_show(got.get(key))} "
        f"in the record, {_show(exp.get(key))} on replay",
    )


def _check_footer(record: Record, footer: Footer, match: MatchMachine, queue: deque[Any]) -> None:
    n = footer.n
    if queue:
        kind, want = queue[0]
        raise Divergence(n, f"the footer comes, but the replay still emits {_name(kind, want)}")
    if match.result is None:
        raise Divergence(
            n, f"the footer comes, but the match is not over: the replay {_waiting(match)}"
        )
    if footer.result.to_dict() != match.result.to_dict():
        raise Divergence(n, f"the footer result {_result(footer.result)} differs from the replay's "
                            f"{_result(match.result)}")  # fmt: skip
    faulted = [a for a in record.answers() if a.fault]
    if len(footer.faults) != len(faulted):
        raise Divergence(
            n, f"the footer lists {len(footer.faults)} faults, the answers hold {len(faulted)}"
        )
    for entry, answer in zip(footer.faults, faulted, strict=True):
        mine = {"seat": answer.seat, "seq": answer.seq, "kind": answer.fault_kind,
                "reason": answer.fault_reason, "played": codes(answer.played)}  # fmt: skip
        for key, value in mine.items():
            if entry.get(key) != value:
                raise Divergence(
                    n, f"footer fault of seq {answer.seq} (line {answer.n}): {key} is "
                       f"{_show(entry.get(key))}, the answer says {_show(value)}"
                )  # fmt: skip


def _waiting(match: MatchMachine) -> str:
    if match.finished:
        return "has ended the match"
    asked = ", ".join(f"seat {d.seat} to {d.kind.value}" for d in match.pending())
    return f"waits for {asked}"


def _describe(item: Any) -> str:
    if isinstance(item, EventLine):
        return f"a {item.event.type} event"
    if isinstance(item, DeckLine):
        return f"the deck of deal {item.deal} attempt {item.attempt}"
    if isinstance(item, AnswerLine):
        return f"a {item.kind.value} by seat {item.seat} (seq {item.seq})"
    return f"a {type(item).__name__.removesuffix('Line').lower()} line"


def _name(kind: str, want: Any) -> str:
    if kind == "deck":
        return f"the deck of deal {want[0]} attempt {want[1]}"
    return f"a {want.type} event"


def _result(result: MatchEnded) -> str:
    return f"(winner {result.winner}, {result.reason}, {result.deals} deals)"


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + " ".join(str(v) for v in value) + "]"
    return repr(value)


__all__ = ["Divergence", "VerifyResult", "verify"]
