"""A Play stream's writes, started by the hop that brings them (issue 20, gRPC thread).

Why: with an outbox the Play task wrote, and every request cost the gRPC thread's loop
two passes of its own — the hop's callback woke the task (one pass), the task encoded
and wrote (the next), and when the write finished the task was resumed only to go back
to waiting (another pass after gRPC's completion callback). The raw grpc.aio server
writes from the task that read: four passes per round trip against arena's 5.5–5.7.

:class:`PlayWriter` takes the outbox's place (``send_nowait``/``close_nowait``, for a
:class:`~arena.server.remote.Connection`) and starts each write in the hop's callback
itself: ``context.write(data)`` is a coroutine whose first step starts gRPC's send batch
(``grpc_call_start_batch``, synchronous) and then waits on one loop future that gRPC's
completion sets. This module takes that step by hand and keeps the suspended coroutine.
It is not resumed when the future is set — that would cost a pass — but when it is next
needed: the next item for the stream finds the future done and finishes the coroutine
(its last step only records that the initial metadata went out) in the same callback,
then starts the next write. Only an item that comes while a write is still in flight
(gRPC refuses two, ``GRPC_CALL_ERROR_TOO_MANY_OPERATIONS``) waits for the future's done
callback; the last item, the end of the stream, too.

Driving a coroutine by hand is what a task does (``send(None)``, wait for the future it
yields, ``send(None)`` again, the future's result or error raised inside); the only
difference kept is *when* it resumes. Nothing else changes: the same coroutine, the same
batch, the same order (one hop per loop, FIFO, one write in flight), the bot's clock
started by ``encode`` just before the write as before. A failed write (the client went,
the call was cancelled) ends :meth:`run` with that error, as ``await context.write``
did; if the Play task is cancelled (the client cancelled) :meth:`close` cancels the
write's future and closes the coroutine, as a task's cancellation would.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

from arena.server.bridge import Hop

T = TypeVar("T")
_END: Any = object()  # the producer closed the stream: written after everything sent


class PlayWriter(Generic[T]):
    """trio → one stream's writes; ``send_nowait``/``close_nowait`` from any thread, the
    rest on the loop. ``write(item)`` starts writing ``item`` (``context.write`` of its
    bytes) and returns the coroutine; ``run()`` is awaited by the stream's handler."""

    __slots__ = (
        "_closed",
        "_done",
        "_ended",
        "_hopper",
        "_items",
        "_waited",
        "_watching",
        "_write",
        "_writing",
        "delivered",
        "dropped",
        "held",
    )

    def __init__(
        self,
        write: Callable[[T], Coroutine[Any, Any, None]],
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        loop = loop if loop is not None else asyncio.get_running_loop()
        self._hopper = Hop.to_asyncio(loop)
        self._write = write
        self._items: deque[T] = deque()
        self._writing: Coroutine[Any, Any, None] | None = None  # the write in flight
        self._waited: Any = None  # what it waits on (gRPC's loop future)
        self._watching = False  # a done callback is on ``_waited``
        self._ended = False  # the producer closed (``close_nowait``)
        self._closed = False  # the consumer stopped (``close``)
        self._done: asyncio.Future[None] = loop.create_future()
        self.delivered = 0  # items whose write was started
        self.dropped = 0
        self.held = 0  # times an item waited behind a write still in flight

    # ------------------------------------------------------------ the producer (trio)

    def send_nowait(self, item: T) -> bool:
        """Write ``item`` (after what was sent). ``False`` if closed or the loop is."""
        if self._ended or self._closed or not self._hopper.call(self._put, item):
            self.dropped += 1
            return False
        return True

    def close_nowait(self) -> bool:
        """End the stream after what was sent. Idempotent; ``False`` if the loop is closed."""
        if self._ended:
            return True
        self._ended = True
        return self._hopper.call(self._put, _END)

    # ------------------------------------------------------------ the loop

    def _put(self, item: T) -> None:
        if self._closed:
            if item is not _END:
                self.dropped += 1
            return
        self._items.append(item)
        self._pump()

    def _pump(self, _: object = None) -> None:
        """Finish the write in flight if it is done, then start the next one; stop at a
        write still in flight (its done callback pumps again) or at the end."""
        items = self._items
        while not self._closed:
            waited = self._waited
            if waited is not None:
                if not waited.done():
                    # Watched only when something waits behind it: otherwise the next
                    # item finishes it, and its completion costs the loop nothing more.
                    if items and not self._watching:
                        self._watching = True
                        self.held += 1
                        waited.add_done_callback(self._pump)
                    return
                self._watching = False
                if not self._step(self._writing):
                    return
                continue
            if not items:
                return
            item = items.popleft()
            if item is _END:
                self._settle(None)
                return
            self.delivered += 1
            try:
                coro = self._write(item)
            except Exception as exc:  # the item could not be encoded: our bug, the stream's end
                self._settle(exc)
                return
            if not self._step(coro):
                return

    def _step(self, coro: Coroutine[Any, Any, None] | None) -> bool:
        """One step of ``coro`` (what a task's step does). ``False``: it failed, and
        :meth:`run` ends with its error."""
        assert coro is not None
        self._writing = self._waited = None
        try:
            waited = coro.send(None)
        except StopIteration:
            return True
        except (Exception, asyncio.CancelledError) as exc:
            self._settle(exc)
            return False
        if waited is None:  # a bare yield (not gRPC's way): resume on the next pass
            waited = asyncio.get_running_loop().create_future()
            waited.set_result(None)
        self._writing, self._waited = coro, waited
        return True

    def _settle(self, error: BaseException | None) -> None:
        if self._done.done():
            return
        if error is None:
            self._done.set_result(None)
        else:
            self._done.set_exception(error)

    # ------------------------------------------------------------ the stream's handler

    async def run(self) -> None:
        """Until the producer's end has been written (every write finished); raises a
        write's error. Leaving it (cancelled too) closes the writer."""
        try:
            await self._done
        finally:
            self.close()

    def close(self) -> None:
        """Consumer: stop writing (the client left); buffered and later items drop; a
        write in flight is abandoned as a cancelled task's would be."""
        self._closed = True
        self.dropped += sum(1 for item in self._items if item is not _END)
        self._items.clear()
        coro, waited = self._writing, self._waited
        self._writing = self._waited = None
        if waited is not None:
            if not waited.done():
                waited.cancel()
            elif not waited.cancelled():
                waited.exception()  # retrieved: no "never retrieved" warning at collection
        if coro is not None:
            coro.close()
        if not self._done.done():
            self._done.cancel()
