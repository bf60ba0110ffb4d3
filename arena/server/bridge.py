"""The asyncio ⇄ trio bridge: grpc.aio in its own thread, the referee in trio.

DESIGN.md, "Process and thread model": the referee runs in trio on the main thread;
``grpc.aio`` runs on its own asyncio loop in one daemon thread (:class:`GrpcThread`,
from :mod:`arena.server.grpc_thread`, re-exported here: the one exception to "tasks
start only in nurseries", STYLE.md habit 11). Thread-safe hops cross between them; a
producer calls ``*_nowait`` or ``call`` (never blocks, any thread) and the consumer runs
the call in its own loop:

- trio → asyncio: :class:`AsyncioOutbox`, one per stream, whose items cross by the loop's
  :class:`Hop` (``loop.call_soon_threadsafe``);
- asyncio → trio: a :class:`Hop` on the trio token (``TrioToken.run_sync_soon``), or,
  for a remote seat's answers while its ask waits, the seat's own door
  (:mod:`arena.server.door`: an eventfd the waiting task itself waits on).

A :class:`Hop` batches: the calls made while a wake-up is pending ride on it, so a burst
(a bid window's four requests, 250 matches' answers arriving together) costs one wake-up
of the other thread, not one each. Measured against the alternatives in
docs/architecture.md ("The bridge, measured").

The outboxes are **unbounded**: safe because every producer is paced by its peer (a bot
answers one request at a time, the referee sends a message or two per decision) and
gRPC flow control bounds what a client can push. Either side may finish first: a hop
into a finished trio run or a closed loop returns ``False`` (and is counted as dropped)
instead of raising, and nothing scheduled into trio can raise there (an exception in a
``run_sync_soon`` callback would crash the whole trio run). This module does not log:
``run_sync_soon`` callbacks carry no structlog context; read ``statistics()`` instead.

From trio, run the server with :func:`open_grpc_server`.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar, TypeVarTuple

import trio

from arena.server.grpc_thread import (
    GrpcServerConfig,
    GrpcServerError,
    GrpcThread,
    GrpcThreadStatistics,
    Registration,
)

__all__ = [
    "AsyncioOutbox",
    "BoxStatistics",
    "GrpcServerConfig",
    "GrpcServerError",
    "GrpcThread",
    "GrpcThreadStatistics",
    "Hop",
    "Registration",
    "call_in_asyncio_nowait",
    "call_in_trio_nowait",
    "open_grpc_server",
]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


# --------------------------------------------------------------------------- the hops


def call_in_trio_nowait(
    token: trio.lowlevel.TrioToken, fn: Callable[[*Ts], object], *args: *Ts
) -> bool:
    """Schedule ``fn(*args)`` in ``token``'s trio run, FIFO; callable from any thread.

    ``fn`` must neither block nor raise (trio would turn the exception into
    ``TrioInternalError`` and cancel the whole run). Returns ``False`` if the run has
    finished (``fn`` never runs); ``True`` guarantees ``fn`` runs before ``trio.run`` ends.
    """
    try:
        token.run_sync_soon(fn, *args)
    except trio.RunFinishedError:
        return False
    return True


async def run_in_trio(token: trio.lowlevel.TrioToken, fn: Callable[..., T], *args: Any) -> T:
    """Run the synchronous ``fn(*args)`` on the trio thread; await its result here."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def job() -> None:
        try:
            result = fn(*args)
        except Exception as exc:
            loop.call_soon_threadsafe(settle, False, exc)
        else:
            loop.call_soon_threadsafe(settle, True, result)

    if not call_in_trio_nowait(token, job):
        raise RuntimeError("the referee has stopped")
    return await future


def call_in_asyncio_nowait(
    loop: asyncio.AbstractEventLoop, fn: Callable[[*Ts], object], *args: *Ts
) -> bool:
    """Schedule ``fn(*args)`` on ``loop``; callable from any thread.

    Returns ``False`` if the loop is closed (``fn`` never runs). A loop that has stopped
    but is not yet closed accepts the call and never runs it.
    """
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # "Event loop is closed"
        return False
    return True


class Hop:
    """Calls into another thread's loop, batched: one wake-up per burst.

    ``schedule(run)`` is how one wake-up is scheduled over there
    (:func:`call_in_trio_nowait` or :func:`call_in_asyncio_nowait` with the token or
    loop bound); :meth:`call` queues ``fn(*args)`` and schedules a wake-up only if none
    is pending, so calls made while one is pending run on it, in order. The queued calls
    must not block; an exception is caught and counted (``errors``), since in trio it
    would end the whole run. Use :meth:`to_trio` and :meth:`to_asyncio`.
    """

    def __init__(self, schedule: Callable[[Callable[[], None]], bool]) -> None:
        self._schedule = schedule
        self._calls: deque[tuple[Callable[..., object], tuple[Any, ...]]] = deque()
        self._armed = False
        self.calls = 0
        self.wakeups = 0
        self.errors = 0

    @classmethod
    def to_trio(cls, token: trio.lowlevel.TrioToken) -> Hop:
        return cls(lambda run: call_in_trio_nowait(token, run))

    @classmethod
    def to_asyncio(cls, loop: asyncio.AbstractEventLoop) -> Hop:
        """The loop's one hop (shared by every outbox on it, so a burst is one wake-up)."""
        hop = _LOOP_HOPS.get(loop)
        if hop is None:
            hop = _LOOP_HOPS[loop] = cls(_asyncio_waker(loop))
        return hop

    def call(self, fn: Callable[[*Ts], object], *args: *Ts) -> bool:
        """Queue ``fn(*args)`` over there (any thread). ``False``: the other side has
        finished (the trio run, the loop closed) and it will never run."""
        self._calls.append((fn, args))
        self.calls += 1
        if self._armed:
            return True
        self._armed = True
        if self._schedule(self._run):
            self.wakeups += 1
            return True
        self._armed = False
        self._calls.clear()
        return False

    def _run(self) -> None:
        # Runs over there. Disarm first: a call queued while draining either is drained
        # here or (if it saw the hop disarmed) schedules the next wake-up itself.
        self._armed = False
        calls = self._calls
        while calls:
            fn, args = calls.popleft()
            try:
                fn(*args)
            except Exception:
                self.errors += 1


def _asyncio_waker(loop: asyncio.AbstractEventLoop) -> Callable[[Callable[[], None]], bool]:
    """:func:`call_in_asyncio_nowait` for a hop's wake-ups, two calls shorter: the
    loop's method bound once, and one empty context for every wake-up instead of a
    copy of the caller's (the hop's calls read no context variable; trio's is the
    referee's, with its structlog bindings)."""
    soon = loop.call_soon_threadsafe
    empty = contextvars.Context()

    def wake(run: Callable[[], None]) -> bool:
        try:
            soon(run, context=empty)
        except RuntimeError:  # "Event loop is closed"
            return False
        return True

    return wake


_LOOP_HOPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hop] = weakref.WeakKeyDictionary()


# --------------------------------------------------------------------------- the boxes


@dataclass(frozen=True, slots=True)
class BoxStatistics:
    """A snapshot of one box: messages handed to the consumer, dropped, and waiting."""

    delivered: int
    dropped: int
    buffered: int
    closed: bool


class _End(enum.Enum):
    END = enum.auto()


class AsyncioOutbox(Generic[T]):
    """trio → asyncio, in order per producing thread; unbounded.

    Typically one per stream, made by the servicer and handed to trio (in a Connection)
    (``loop`` defaults to the running loop; ``RuntimeError`` if there is none)::

        outbox = AsyncioOutbox[RefereeMessage]()   # in the gRPC thread
        outbox.send_nowait(msg)                    # in trio (any thread)
        async for msg in outbox: yield msg         # in the gRPC thread
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop if loop is not None else asyncio.get_running_loop()
        self._hopper = Hop.to_asyncio(self._loop)
        # A deque and the one consumer's waiting future: an asyncio.Queue does the same
        # with three times the Python per message (it serves many getters and putters).
        self._items: deque[T | _End] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._consumer_closed = False
        self._delivered = 0
        self._dropped = 0

    def send_nowait(self, msg: T) -> bool:
        """Hand ``msg`` to asyncio. ``False`` if the outbox or the loop is closed."""
        if self._ended or self._consumer_closed or not self._hop(msg):
            self._dropped += 1
            return False
        return True

    def close_nowait(self) -> bool:
        """Producer: end the stream after what was sent. Idempotent; ``False`` if the
        loop is closed."""
        if self._ended:
            return True
        self._ended = True
        return self._hop(_End.END)

    def _hop(self, item: T | _End) -> bool:
        return self._hopper.call(self._put, item)

    def _put(self, item: T | _End) -> None:
        """On the loop: queue ``item``, wake the consumer if it waits."""
        if self._consumer_closed:
            if item is not _End.END:
                self._dropped += 1
            return
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> T:
        """The next message; ``trio.EndOfChannel`` (on every call) once ended and drained.
        One consumer at a time."""
        if self._consumer_closed:
            raise trio.EndOfChannel
        items = self._items
        while not items:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = items[0]
        if item is _End.END:  # left in place: every later get() ends too
            raise trio.EndOfChannel
        items.popleft()
        self._delivered += 1
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.get()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Consumer: stop receiving (the client left); buffered and later messages drop."""
        self._consumer_closed = True
        while self._items:
            if self._items.popleft() is not _End.END:
                self._dropped += 1

    def statistics(self) -> BoxStatistics:
        return BoxStatistics(
            delivered=self._delivered,
            dropped=self._dropped,
            buffered=len(self._items),
            closed=self._ended or self._consumer_closed,
        )


# --------------------------------------------------------------------------- from trio


@asynccontextmanager
async def open_grpc_server(
    registrations: Sequence[Registration], config: GrpcServerConfig | None = None
) -> AsyncIterator[GrpcThread]:
    """Run a :class:`GrpcThread` for an ``async with`` block in trio::

        async with open_grpc_server([partial(add_ArenaServicer_to_server, s)]) as server:
            print(server.port)

    The server listens inside the block and has stopped, thread and loop gone, after
    it, however it is left (shielded from cancellation). Raises ``GrpcServerError``.
    """
    server = GrpcThread(registrations, config)
    await trio.to_thread.run_sync(server.start)
    try:
        yield server
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(server.stop)
