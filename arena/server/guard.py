"""The servicers' side of the bounds: what a request or a message may carry.

Small helpers the gRPC servicers call before anything reaches the referee, so that
:mod:`arena.server.service` stays a thin translation layer: strings over their bound
are refused (``INVALID_ARGUMENT``), a bot's message is cut down to what the referee
reads (at most ``max_cards`` cards, no unknown fields: its size in memory is bounded),
and a ``Watch`` stream whose reader lags too far is ended (``RESOURCE_EXHAUSTED``)
rather than buffered without end. The settings are :class:`~arena.server.limits.Limits`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NoReturn

import grpc
from google.protobuf.message import Message

from arena.server.bridge import AsyncioOutbox, call_in_trio_nowait
from arena.server.limits import ByteGauge, Counter, Limits, records_problem, string_problem
from arena.server.remote import RemoteSeat
from arena.server.traffic import Answer, Malformed

#: Hello fields that are cut to ``max_name`` rather than refused
CLIPPED: tuple[str, ...] = ()


async def strings(request: Message, limits: Limits, context: Any) -> None:
    """Refuse a request with a string over its bound (``INVALID_ARGUMENT``)."""
    problem = string_problem(request, limits, ("seat_names",))
    if problem is not None:
        await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, problem)


async def _abort(context: Any, code: grpc.StatusCode, details: str) -> NoReturn:
    await context.abort(code, details)
    raise AssertionError("unreachable: abort raises")


def deliver(
    seat: RemoteSeat, conn_id: int, item: Answer | Malformed, gauge: ByteGauge, size: int
) -> None:
    """Runs in trio (``run_sync_soon``): hand ``item`` to the seat, release its bytes.
    Never raises (an exception here would end the whole trio run)."""
    gauge.taken += size  # only this thread writes it
    try:
        seat.deliver(conn_id, item)
    except Exception:  # nothing may escape run_sync_soon (a try is cheaper than suppress)
        return


def records_ready(host: Any) -> str | None:
    """Why the records directory cannot take another match now, or ``None``."""
    folder = getattr(host, "records", None)
    if folder is None:
        return None
    return records_problem(folder, host.limits.min_free_bytes, probe=False)


@dataclasses.dataclass(frozen=True, slots=True)
class Overflow:
    """The marker that ends a ``Watch`` stream whose reader fell too far behind."""

    reason: str


class WatchForwarder:
    """The trio-side callback of one ``Watch`` stream: forwards batches to its outbox,
    and past ``watch_backlog`` unread batches unsubscribes and ends the stream."""

    def __init__(
        self,
        host: Any,
        match_id: str,
        outbox: AsyncioOutbox[Any],
        limits: Limits,
    ) -> None:
        self.host = host
        self.match_id = match_id
        self.outbox = outbox
        self.limit = limits.watch_backlog
        self.key = 0
        self.over = False
        self.released = False  # the stream ended: slot and subscription given back

    def on_release(self, trio_token: Any, counter: Counter, client: str) -> None:
        """What :meth:`gone` gives back: ``client``'s slot in ``counter``."""
        self._trio, self._counter, self._client = trio_token, counter, client

    def subscribe(self) -> list[Any]:
        """On the trio thread: subscribe, keep the key, return the events so far. A
        client that left meanwhile (:meth:`gone` ran first, saw no key) is unsubscribed
        here: a cancel can land while this runs, and no subscription may outlive it."""
        self.key, past = self.host.watch(self.match_id, self)
        if self.released and self.key:
            self.host.unwatch(self.match_id, self.key)
        return list(past)

    def gone(self, _context: Any = None) -> None:
        """The stream ended, however (a client's cancel need not reach the generator, so
        this is also the servicer context's done callback): release the client's slot
        and the subscription, once."""
        if self.released:
            return
        self.released = self.over = True
        self._counter.release(self._client)
        if self.key:
            call_in_trio_nowait(self._trio, self.host.unwatch, self.match_id, self.key)
        self.outbox.close()

    def __call__(self, batch: Any) -> None:
        if self.over:
            return
        if batch is not None and self.outbox.statistics().buffered >= self.limit:
            self.over = True
            why = f"{self.limit} batches of events unread: watcher too slow (--watch-backlog)"
            self.outbox.send_nowait(Overflow(why))
            if self.key:
                self.host.unwatch(self.match_id, self.key)
            return
        self.outbox.send_nowait(batch)


def watch_forwarder(
    host: Any, match_id: str, outbox: AsyncioOutbox[Any], limits: Limits
) -> WatchForwarder:
    return WatchForwarder(host, match_id, outbox, limits)


__all__ = [
    "CLIPPED",
    "Counter",
    "Overflow",
    "WatchForwarder",
    "deliver",
    "records_ready",
    "strings",
    "watch_forwarder",
]
