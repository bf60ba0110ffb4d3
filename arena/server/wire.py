"""The gRPC edge's conversions (asyncio thread): bridge traffic ⇄ wire messages.

The referee's thread hands over plain values (:mod:`arena.server.traffic`); this module
builds the protobuf messages, once:

- :class:`EventCache` converts each event of a match once for all its seats and
  spectators. A seat's request and a ``Watch`` stream ask for the event at an index; the
  one redaction path (:mod:`arena.game.views`) has already decided what each of them
  gets, and the cache hands back the converted message only for the very event object
  it converted (a redacted copy, e.g. a kitty's blanked cards, is converted on its own).
- :class:`SeatWire` turns one stream's outgoing items into ``RefereeMessage`` and its
  ``BotMessage`` into :class:`~arena.server.traffic.Answer`, and keeps the stream's edge
  clock: when the latest request was written, so the bot is charged its own time from
  that write to its answer's arrival, not the referee's queueing on either side of the
  bridge (docs/architecture.md, "Fair clocks").
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Sequence

import grpc

from arena.errors import ProtocolError
from arena.game import Action, CardDealt, Event
from arena.referee import FaultKind
from arena.server import convert, request_wire
from arena.server.event_table import event_to_pb
from arena.server.limits import Limits, string_problem
from arena.server.loop_clock import IterationClock, running_clock
from arena.server.receive_clock import Receipt, receipt_for
from arena.server.traffic import (
    PROTOCOL,
    Answer,
    Ask,
    Candidate,
    CheckVerdict,
    Ended,
    Judged,
    Malformed,
    Outgoing,
    Told,
    VerdictMode,
    Welcome,
)
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

# Faults a client may report against itself (Action.fault); anything else is MALFORMED.
_SELF_REPORTED = {
    pb.TIMEOUT: FaultKind.TIMEOUT,
    pb.ILLEGAL_ACTION: FaultKind.ILLEGAL_ACTION,
    pb.MALFORMED: FaultKind.MALFORMED,
}
# Events kept converted per match (up to twice as many between trims); older ones are
# converted again if asked. A converted event holds ~0.9 KiB of protobuf arena: keeping
# a whole one-deal match's (~540 events) cost up to 0.47 MiB per live match (issue 20,
# RSS per match). Its four seats read an event within a round of decisions of each
# other, so the newest 16 give every hit that keeping them all gave (8 nearly would).
KEEP = 16


class _Kept:
    """One event of the cache, in whichever forms were asked for so far."""

    __slots__ = ("entry", "event", "message")

    def __init__(self, event: Event) -> None:
        self.event = event
        self.message: pb.Event | None = None  # for Watch streams and Notices
        self.entry: bytes | None = None  # a ``Request.events`` entry, for requests


class EventCache:
    """One match's events as wire messages, converted once (asyncio thread only).

    Two forms, each made on first use: the ``Event`` message (``Watch``, Notices) and the
    encoded ``Request.events`` entry (every request: :mod:`arena.server.request_wire`
    joins it into the request's bytes, so a seat's request neither parses nor copies it).
    """

    __slots__ = ("__weakref__", "_by_index", "hits", "misses")

    def __init__(self) -> None:
        self._by_index: dict[int, _Kept] = {}
        self.hits = 0
        self.misses = 0

    def _kept(self, index: int, event: Event) -> _Kept:
        found = self._by_index.get(index)
        if found is not None and found.event is event:
            return found
        kept = _Kept(event)
        by_index = self._by_index
        by_index[index] = kept
        if len(by_index) > 2 * KEEP:  # keep the newest: readers lag a few events at most
            for old in sorted(by_index)[:-KEEP]:
                del by_index[old]
        return kept

    def get(self, index: int, event: Event) -> pb.Event:
        """The wire form of ``event`` (the match's event ``index``, as redacted for its
        viewer). Never mutate the result: it is shared."""
        if isinstance(event, CardDealt):  # one reader (its seat; spectators see none)
            self.misses += 1
            return event_to_pb(event, index)
        kept = self._kept(index, event)
        message = kept.message
        if message is None:
            self.misses += 1
            message = kept.message = event_to_pb(event, index)
        else:
            self.hits += 1
        return message

    def entry(self, index: int, event: Event) -> bytes:
        """``event`` encoded as one ``Request.events`` entry (same redaction rule as
        :meth:`get`: only for the very object converted)."""
        if isinstance(event, CardDealt):  # by table, not kept (one reader)
            self.misses += 1
            return request_wire.event_entry(index, event)
        kept = self._kept(index, event)
        entry = kept.entry
        if entry is None:
            self.misses += 1
            entry = kept.entry = request_wire.event_entry(index, event)
        else:
            self.hits += 1
        return entry

    def entries(self, indices: Sequence[int], events: Sequence[Event]) -> list[bytes]:
        """:meth:`entry` of each event (a request's several, most of them hits: the
        look-up is inlined, a request carries about six)."""
        by_index = self._by_index
        out = []
        for index, event in zip(indices, events, strict=True):
            kept = by_index.get(index)
            entry = None if kept is None or kept.event is not event else kept.entry
            if entry is None:
                entry = self.entry(index, event)
            else:
                self.hits += 1
            out.append(entry)
        return out

    def __len__(self) -> int:
        """How many events are kept converted."""
        return len(self._by_index)

    def many(self, events: Iterable[tuple[int, Event]]) -> list[pb.Event]:
        return [self.get(index, event) for index, event in events]


class SeatWire:
    """One Play stream's conversions and edge clock (asyncio thread only)."""

    __slots__ = ("cache", "clock", "limits", "mode", "receipt", "sent_at", "sent_seq")

    def __init__(
        self, cache: EventCache, mode: VerdictMode, limits: Limits, peer: str = ""
    ) -> None:
        self.cache = cache
        self.mode = mode
        self.limits = limits
        self.sent_seq = 0  # the latest request written, and when (perf_counter s)
        self.sent_at = 0.0
        # made on the gRPC thread's loop: when an answer surely reached it (loop_clock)
        self.clock: IterationClock | None = running_clock()
        # the kernel's receive time on the bot's TCP connection (receive_clock)
        self.receipt: Receipt | None = receipt_for(peer)

    def encode(self, item: Outgoing) -> bytes:
        """``item`` as the bytes to write (the Play stream writes bytes as they are). A
        request, once per decision, is joined from encoded parts
        (:func:`request_wire.request_message`), never built as a message; the rarer
        items go through :meth:`message`. Call it just before the write, as :meth:`message`."""
        if type(item) is not Ask:
            return self.message(item).SerializeToString()
        request = item.request
        events = self.cache.entries(request.event_indices, request.events)
        data = request_wire.request_message(
            item.seq, request, item.deadline_ms, item.bank_ms, events, item.acked
        )
        self.sent_seq, self.sent_at = item.seq, time.perf_counter()
        return data

    def message(self, item: Outgoing) -> pb.RefereeMessage:
        """``item`` as the message to write. For a request, call it just before the write:
        it starts the bot's clock."""
        if isinstance(item, Ask):
            request = item.request
            events = self.cache.many(zip(request.event_indices, request.events, strict=True))
            message = convert.request_to_pb(
                item.seq, item.request, item.deadline_ms, item.bank_ms, events
            )
        elif isinstance(item, Judged):
            message = convert.verdict_to_pb(item.verdict)
        elif isinstance(item, Told):
            message = pb.RefereeMessage()
            message.notice.events.extend(self.cache.many(item.events))
        elif isinstance(item, Ended):
            message = pb.RefereeMessage()
            end = message.match_end
            end.result.CopyFrom(convert.result_to_pb(item.result, item.faults))
            end.faults.extend([convert.fault_to_pb(f) for f in item.faults])
            end.record = item.record
        else:
            message = welcome_to_pb(item, self.mode)
        if item.acked:
            message.accepted_seq = item.acked
        if isinstance(item, Ask):
            self.sent_seq, self.sent_at = item.seq, time.perf_counter()
        return message

    def answer(self, message: pb.BotMessage) -> Answer | Malformed:
        """A bot's message as the referee reads it, bounded (docs/limits.md): more than
        ``max_cards`` cards or a string over ``max_string`` is MALFORMED, as is anything
        but an Action. Stamped with the bot's time if it answers the latest request: from
        the request's write to the answer's arrival at the loop, not to this read's turn
        on a busy loop (:meth:`IterationClock.arrived`), never less than nothing."""
        clock = self.clock
        arrived = clock.arrived() if clock is not None else time.perf_counter()
        kind = message.WhichOneof("kind")
        if kind != "action":
            what = "a second Hello" if kind == "hello" else "an empty message"
            return Malformed(f"expected an Action, got {what}")
        action = message.action
        limits = self.limits
        if len(action.cards) > limits.max_cards:
            n, most = len(action.cards), limits.max_cards
            return Malformed(f"{n} cards in one action (at most {most})")
        if len(action.reason) > limits.max_string:  # its one string (string_problem's words)
            return Malformed(f"Action.{string_problem(action, limits)}")
        seq = action.seq
        latency = None
        if seq == self.sent_seq:
            received = self.receipt.at() if self.receipt is not None else None
            if received is not None and received < arrived:
                arrived = received  # it reached the machine before the loop could tell
            latency = max(arrived - self.sent_at, 0.0)
        size = action.ByteSize()
        if action.fault != pb.FAULT_NONE:
            kind_ = _SELF_REPORTED.get(action.fault, FaultKind.MALFORMED)
            return Answer(seq, None, fault=kind_, reason=action.reason, latency=latency, size=size)
        try:
            cards = convert.cards_from_pb(action.cards)
        except ProtocolError as exc:
            return Answer(seq, None, problem=str(exc), latency=latency, size=size)
        return Answer(seq, cards, latency=latency, size=size)


def welcome_to_pb(welcome: Welcome, mode: VerdictMode) -> pb.RefereeMessage:
    message = pb.RefereeMessage()
    w = message.welcome
    w.SetInParent()
    w.seat = welcome.seat
    w.match_id = welcome.match_id
    w.rules.update(convert.rules_to_pb(welcome.rules))
    w.time_control.CopyFrom(convert.time_control_to_pb(welcome.time_control))
    w.seat_names.extend(welcome.seat_names)
    w.protocol = PROTOCOL
    w.resumed = welcome.resumed
    w.deals = welcome.deals
    w.policy = welcome.policy
    w.max_faults = welcome.max_faults
    w.verdicts = pb.VerdictMode.ValueType(int(mode))
    return message


def events_to_pb(cache: EventCache, events: Sequence[tuple[int, Event]]) -> list[pb.Event]:
    """A spectator's batch of public events, through the match's cache."""
    return cache.many(events)


class EventCaches:
    """The per-match :class:`EventCache` of a server, shared by its ``Play`` and
    ``Watch`` streams; a match's cache goes when its last stream does."""

    def __init__(self) -> None:
        self._caches: weakref.WeakValueDictionary[str, EventCache] = weakref.WeakValueDictionary()

    def of(self, match_id: str) -> EventCache:
        cache = self._caches.get(match_id)
        if cache is None:
            cache = self._caches[match_id] = EventCache()
        return cache


def candidate_of(action: pb.Action) -> Candidate:
    """A ``Check`` call's action in the referee's terms."""
    try:
        cards: Action | None = convert.cards_from_pb(action.cards)
        problem = ""
    except ProtocolError as exc:
        cards, problem = None, str(exc)
    return Candidate(action.seq, cards, problem, len(action.cards))


def check_verdict_to_pb(verdict: CheckVerdict) -> pb.Verdict:
    fault = convert.FAULT_TO_PB[verdict.fault] if verdict.fault else pb.FAULT_NONE
    return pb.Verdict(
        seq=verdict.seq,
        accepted=verdict.accepted,
        fault=fault,
        reason=verdict.reason,
        played=convert.cards_to_pb(verdict.played),
    )


ARENA = "arena.v1.Arena"  # the bots' service, by its full name


def add_arena_service(servicer: pb_grpc.ArenaServicer, server: grpc.aio.Server) -> None:
    """Register ``servicer`` as the generated ``add_ArenaServicer_to_server`` does, but
    with Play's replies written as the bytes :meth:`SeatWire.encode` made (no response
    serializer): a request is joined from encoded parts (:mod:`.request_wire`), so
    building a ``RefereeMessage`` only for gRPC to serialize it again is skipped."""
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=pb.BotMessage.FromString,
            response_serializer=None,
        ),
        "Check": grpc.unary_unary_rpc_method_handler(
            servicer.Check,
            request_deserializer=pb.CheckRequest.FromString,
            response_serializer=pb.Verdict.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(ARENA, handlers),))
    server.add_registered_method_handlers(ARENA, handlers)  # type: ignore[attr-defined]
