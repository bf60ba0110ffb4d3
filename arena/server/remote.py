"""A seat played by a remote bot over one gRPC stream (the trio side of it).

The asyncio servicer hands this object what it hears, through the bridge: a stream
attached (:meth:`RemoteSeat.attach`), a message (:meth:`deliver`), a stream gone
(:meth:`detach`). All three run on the trio thread and never block. The referee calls
:meth:`ask`, which sends the request on the current stream and waits for the answer
with the same sequence number: late answers (an older number) are dropped and
counted, a number never issued is a fault, and a disconnection waits up to the grace
period (at most the decision's own time) for the bot to come back with its token, then
gives up with :class:`BotGone`, charged once per absence.

While :meth:`ask` waits, the stream's calls reach it through the seat's
:class:`~arena.server.door.SeatDoor` (an eventfd the waiting task itself waits on),
not through trio's entry queue: one task step fewer per decision.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import structlog
import trio

from arena.game import Action, Event, MatchEnded, Request
from arena.referee import BotError, BotGone, Fault, FaultKind, SeatVerdict
from arena.server.door import DoorInbox
from arena.server.traffic import (
    Answer,
    Ask,
    Ended,
    Inbound,
    Judged,
    Malformed,
    Outgoing,
    Signal,
    Told,
    VerdictMode,
    Welcome,
    with_ack,
)

log = structlog.get_logger()

Send = Callable[[Outgoing], bool]
Close = Callable[[], bool]
FLOOD_LIMIT = 256  # unrequested messages kept at most; more are dropped and counted
LOGGED_LATE = 20  # late answers logged one by one; after that, one line per thousand
MATCH_OVER = "the match is over"  # attach's refusal once the match has ended (FAILED_PRECONDITION)


@dataclasses.dataclass(slots=True)
class Connection:
    """One live stream: its id, how to write to it and close it (thread-safe), and the
    Verdicts its bot asked for."""

    id: int
    send: Send
    close: Close
    name: str
    version: str
    verdicts: VerdictMode = VerdictMode.EVERY_ANSWER


__all__ = ["MATCH_OVER", "Connection", "Malformed", "RemoteSeat", "Signal"]


class RemoteSeat:
    """The referee's handle on one remote seat of one match."""

    def __init__(
        self,
        seat: int,
        match_id: str,
        grace_ms: int,
        welcome: Callable[[bool], Welcome],
        resumed: bool = False,
        away: bool = False,
    ) -> None:
        """``away``: a restored match's seat whose disconnection the record already
        charged; until it comes back, its decisions are played by fallback, uncharged."""
        self.seat = seat
        self.match_id = match_id
        self.name = f"seat{seat}"
        self.version = ""
        self.grace = grace_ms / 1000
        self._welcome = welcome
        self._resumed = resumed  # a match restored from its record: every hello is a return
        self.on_attach: Callable[[], None] | None = None
        self.conn: Connection | None = None
        self.ever_connected = trio.Event()
        self.disconnected_at: float | None = None
        self._absent_reported = away
        # What the bridge delivered, and the referee's task while it waits for it: a
        # deque and a parked task cost a third of a memory channel's send + receive
        # (no statistics object per look, no extra yield when an item is waiting).
        self._inbox = DoorInbox[Inbound]()
        self.door = self._inbox.door  # the stream's calls reach a waiting ask directly
        self._pending: Ask | None = None
        self._unacked = 0  # an accepted answer whose acknowledgement rides on the next message
        # (seq, seconds) of the latest answer: the bot's own time, measured at the gRPC edge
        # (only for a request asked and answered on one stream)
        self.answered_in: tuple[int, float] | None = None
        self._one_stream = False
        self.late_answers = 0
        self.dropped = 0
        self._finished = False
        self.buffer_limit = 256 * 1024  # unrequested bytes kept (Limits.seat_buffer_bytes)
        self._buffered = 0  # bytes of messages waiting in the inbox
        self.ended: BotError | None = None  # the bot's process is gone, and why
        self.timeouts = 0  # decisions it let time out (its sandbox's watcher reads this)
        self._ended_reported = False

    @property
    def finished(self) -> bool:
        """The match is over for this seat: it asks nothing more (its door closes)."""
        return self._finished

    @finished.setter
    def finished(self, value: bool) -> None:
        self._finished = value
        if value:
            self.door.close()

    # -- called from the asyncio side through the bridge (trio thread, never blocks) -----

    def attach(self, conn: Connection) -> str | None:
        """A stream presented this seat's token. Returns an error, or ``None`` if taken."""
        if self.finished:
            return f"{MATCH_OVER}: {self.match_id}"
        if self.conn is not None:
            return "this seat is already connected (a seat token admits one stream)"
        resumed = self._resumed or self.ever_connected.is_set()
        if self.on_attach is not None and self.ever_connected.is_set():
            self.on_attach()
        self.conn = conn
        self.name = conn.name or self.name
        self.version = conn.version
        self.disconnected_at = None
        self._absent_reported = False
        self.ever_connected.set()
        conn.send(self._welcome(resumed))
        pending = self._pending
        if pending is not None:  # a request in flight when it went away: ask again
            self._one_stream = False  # its time away is its own: the edge clock won't do
            if pending.acked:  # its acknowledgement went with the first sending
                pending = Ask(pending.seq, pending.request, pending.deadline_ms, pending.bank_ms)
            self._send(pending)
        self._put(Signal.ATTACHED)
        log.info(
            "seat_connected", match_id=self.match_id, seat=self.seat, resumed=resumed, bot=self.name
        )
        return None

    def deliver(self, conn_id: int, message: Answer | Malformed) -> None:
        if self.conn is None or self.conn.id != conn_id:
            return
        size = message.size if isinstance(message, Answer) else 0
        if self._pending is None and (
            len(self._inbox) >= FLOOD_LIMIT or self._buffered + size > self.buffer_limit
        ):
            self.dropped += 1
            return
        self._buffered += size
        self._put(message)

    def _put(self, item: Inbound) -> None:
        """Queue ``item`` and wake the referee's task if it waits for one."""
        self._inbox.put(item)

    async def _receive(self) -> Inbound:
        """The next item; waits (cancellably) only if none is queued. One consumer.
        It waits at the seat's door if it can, else to be woken by the hop's call."""
        item = await self._inbox.get()
        if isinstance(item, Answer):
            self._buffered -= item.size
        return item

    def detach(self, conn_id: int) -> None:
        if self.conn is None or self.conn.id != conn_id:
            return
        self.conn = None
        self.disconnected_at = trio.current_time()
        self._put(Signal.DETACHED)
        if self.finished:
            log.debug("seat_left", match_id=self.match_id, seat=self.seat)
        else:
            log.warning("seat_disconnected", match_id=self.match_id, seat=self.seat)

    def process_ended(self, kind: FaultKind, reason: str) -> None:
        """The bot's process ended before the match did (the sandbox says why: a limit,
        or a crash with its exit status or signal). Decisions asked from now on, and the
        one pending if the stream is already gone, are faults of ``kind`` instead of a
        wait for a reconnection: nobody is coming back."""
        if self.finished or self.ended is not None:
            return
        self.ended = BotError(kind, reason)
        self._put(Signal.DETACHED)  # wakes a wait for the bot's return
        log.warning("seat_process_ended", match_id=self.match_id, seat=self.seat, kind=kind.value)

    @property
    def pending_seq(self) -> int | None:
        """The sequence number of the request waiting for this seat's answer, if any."""
        return self._pending.seq if self._pending is not None else None

    # -- the Seat interface (called by the referee) ---------------------------------------

    async def ask(self, seq: int, request: Request, deadline_ms: int, bank_ms: int) -> Action:
        conn = self.conn
        acked = 0  # the acknowledgement riding on it, taken here: the Ask is built once
        if conn is not None and self._unacked and conn.verdicts is VerdictMode.FAULTS_ONLY:
            acked, self._unacked = self._unacked, 0
        self._pending = asked = Ask(seq, request, deadline_ms, bank_ms, acked)
        self._one_stream = conn is not None
        until = trio.current_time() + (deadline_ms + bank_ms) / 1000  # this decision's time
        try:
            if conn is not None:
                conn.send(asked)
            while True:
                # what arrived before a disconnection still counts: read it first
                if self.conn is None and not self._inbox:
                    await self._wait_for_return(until)
                    continue
                item = await self._receive()
                answer = self._judge(seq, item)
                if answer is not None:
                    return answer
        finally:
            self._pending = None

    def _judge(self, seq: int, item: Inbound) -> Action | None:
        """One inbound item while ``seq`` is asked: an answer, nothing, or a fault."""
        if isinstance(item, Signal):
            return None
        if isinstance(item, Malformed):
            raise BotError(FaultKind.MALFORMED, item.reason)
        if item.seq < seq:
            self.late_answers += 1
            if self.late_answers <= LOGGED_LATE or self.late_answers % 1000 == 0:
                log.info(  # a flood of stale answers must not become a flood of log lines
                    "late_answer_discarded",
                    match_id=self.match_id,
                    seat=self.seat,
                    seq=item.seq,
                    current=seq,
                    late_so_far=self.late_answers,
                )
            return None
        if item.seq > seq:
            raise BotError(
                FaultKind.UNKNOWN_SEQUENCE, f"answer for seq {item.seq}, but seq {seq} was asked"
            )
        if item.fault is not None:  # the client reports it has no proper answer
            raise BotError(item.fault, item.reason[:500] or "the bot reported a fault")
        if item.cards is None:
            raise BotError(FaultKind.MALFORMED, item.problem)
        if item.latency is not None and self._one_stream:
            self.answered_in = (seq, item.latency)
        return item.cards

    async def _wait_for_return(self, until: float) -> None:
        """Disconnected: wait for a reconnection until the rest of the grace period or
        this decision's own time (``until``) runs out, whichever comes first.

        One absence is charged once: its first decision raises a charged
        :class:`BotGone` (or, if the referee's deadline fires first, is its timeout);
        later decisions raise an uncharged one at once until the bot is back.
        """
        self._raise_if_ended()
        now = trio.current_time()
        since = self.disconnected_at if self.disconnected_at is not None else now
        if self._absent_reported or since + self.grace <= now:
            first = not self._absent_reported
            self._absent_reported = True
            raise BotGone("disconnected" + ("" if first else " (still)"), charge=first)
        try:
            with trio.move_on_at(min(since + self.grace, until)):
                while self.conn is None and self.ended is None:
                    await self._receive()  # a Signal.ATTACHED arrives on reconnection
        except trio.Cancelled:
            self._absent_reported = True  # the decision timed out: that was the charge
            raise
        self._raise_if_ended()
        if self.conn is None:
            self._absent_reported = True
            waited = min(since + self.grace, until) - since
            raise BotGone(f"disconnected, no reconnection within {waited:.3f}s")

    def _raise_if_ended(self) -> None:
        """The process is gone: its fault, charged once (later ones are recorded)."""
        if self.ended is None:
            return
        first = not self._ended_reported
        self._ended_reported = self._absent_reported = True
        reason = self.ended.reason if first else f"{self.ended.reason} (still)"
        raise BotError(self.ended.kind, reason, charge=first)

    def _send(self, item: Outgoing) -> None:
        """Write ``item`` to the live stream, if any, with a pending acknowledgement."""
        conn = self.conn
        if conn is None:
            return
        if self._unacked and conn.verdicts is VerdictMode.FAULTS_ONLY:
            acked, self._unacked = self._unacked, 0
            if isinstance(item, Ask):  # most messages: built directly, not by replace()
                item = Ask(item.seq, item.request, item.deadline_ms, item.bank_ms, acked)
            else:
                item = with_ack(item, acked)
        conn.send(item)

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        """A fault is told at once; an accepted answer too, unless the bot asked for
        ``VERDICT_FAULTS_ONLY``: then its acknowledgement rides on the next message."""
        if verdict.fault is not None and verdict.fault.kind is FaultKind.TIMEOUT:
            self.timeouts += 1
        conn = self.conn
        if verdict.accepted and conn is not None and conn.verdicts is VerdictMode.FAULTS_ONLY:
            self._unacked = verdict.seq
            return
        self._send(Judged(verdict))

    def tell_events(self, events: Sequence[tuple[int, Event]]) -> None:
        if events:
            self._send(Told(tuple(events)))

    async def finish(self, result: MatchEnded, faults: Sequence[Fault], record: str) -> None:
        self.finished = True
        conn = self.conn
        if conn is not None:
            self._send(Ended(result, tuple(faults), record))
            conn.close()
        await trio.lowlevel.checkpoint()
