"""Carrying on a match whose record was cut off (a killed server, a full disk).

A record holds the seed and every input, so running its answers through a
:class:`~arena.referee.RefereeCore` rebuilds the match *and* the referee's
:class:`~arena.referee.Tally` — faults, team fault counts, banks, the match clock,
sequence numbers, seats away — by the very code that produced them (:func:`restore`):
nothing is copied field by field, and penalties and forfeits are charged again by the
same policy rather than read back.

The record is kept up to its last complete input: an answer with everything before
it, or a cancel. A group cut in the middle — a fault's ``penalty`` whose ``answer``
line never made it to the disk — is dropped and happens again: the decision is asked
anew. The events after the last kept input are dropped too; the core writes them
again as it carries on, so the finished record verifies as if nothing had happened.
"""

from __future__ import annotations

import dataclasses

from arena.game import FaultKind
from arena.records import Record, RecordError, reopen, verify
from arena.records.lines import AnswerLine, CancelLine, DeckLine, EventLine
from arena.referee.core import RefereeCore
from arena.referee.faults import BotError, BotGone


@dataclasses.dataclass(frozen=True)
class Restored:
    """A match rebuilt from its incomplete record, ready to carry on (:meth:`resume`)."""

    record: Record
    core: RefereeCore  # the match and its Tally, as the referee left them
    keep: int  # bytes of the record kept: up to its last complete input
    written: tuple[int, int]  # (events, decks) in the kept lines

    @property
    def seq(self) -> int:
        return self.core.tally.seq

    def resume(self, *, fsync: bool = False) -> RefereeCore:
        """Cut the record back to what is kept and let the core append to it."""
        self.core.record_to(reopen(self.record, self.keep, fsync=fsync), *self.written)
        return self.core


def restore(record: Record) -> Restored:
    """Rebuild the match of an incomplete record by running its answers through a core.

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
    core = RefereeCore(header.setup, header.time_control, header.policy)
    lines = record.lines
    cut = max(
        (i for i, line in enumerate(lines) if isinstance(line.item, AnswerLine | CancelLine)),
        default=0,
    )
    events = decks = 0
    for line in lines[1 : cut + 1]:
        item = line.item
        if isinstance(item, EventLine):
            events += 1
        elif isinstance(item, DeckLine):
            decks += 1
        elif isinstance(item, AnswerLine):
            _answer(core, item, record.path)
        elif isinstance(item, CancelLine):
            core.cancel(item.reason)
        # penalty and forfeit lines: the core charges them again, by the same policy
    kept = [line.item.event for line in lines[: cut + 1] if isinstance(line.item, EventLine)]
    if core.match.events[:events] != kept:
        raise RecordError(f"{record.path}: the referee core does not rebuild the recorded events")
    keep = sum(len(line.raw) for line in lines[: cut + 1])
    return Restored(record, core, keep, (events, decks))


def _answer(core: RefereeCore, item: AnswerLine, path: str) -> None:
    """Feed one recorded answer through the core: asked when it was, answered as it was."""
    decision = next((d for d in core.match.pending() if d.seat == item.seat), None)
    if decision is None:
        raise RecordError(f"{path}: line {item.n}: seat {item.seat} was not asked")
    seq = core.tally.seq
    if item.seq <= 0:
        raise RecordError(f"{path}: line {item.n}: seq {item.seq}")
    core.tally.seq = item.seq - 1  # older records may list a bid window's answers out of order
    ask = core.ask(decision, item.requested_at_ms / 1000)
    core.tally.seq = max(seq, item.seq)  # the next one issued is new
    error: BotError | None = None
    if item.absent:
        error = BotGone("disconnected (still)", charge=False)
    elif item.fault_kind is not None and item.fault_kind is not FaultKind.ILLEGAL_ACTION:
        error = BotError(item.fault_kind, item.fault_reason or "")
    sent = None if error is not None else item.sent
    core.apply(core.settle(ask, sent, error, item.latency_ms / 1000))


__all__ = ["Restored", "restore"]
