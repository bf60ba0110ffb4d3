"""Bridge helpers only the tests (and the bridge benchmarks) use.

Moved out of :mod:`arena.server.bridge` (issue 15): production code hands messages to
trio through :class:`arena.server.bridge.Hop` and runs the server with
:func:`arena.server.bridge.open_grpc_server`; these wrap the same primitives for tests.

- :class:`TrioInbox`: asyncio → trio as an async iterator (a trio memory channel fed by
  the hop), for a test servicer that forwards everything to a trio task;
- :func:`serve_grpc`: the server as a ``nursery.start`` task.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Generic, Self, TypeVar

import trio

from arena.server.bridge import (
    BoxStatistics,
    GrpcServerConfig,
    GrpcThread,
    Registration,
    call_in_trio_nowait,
    open_grpc_server,
)

T = TypeVar("T")


class TrioInbox(Generic[T]):
    """asyncio → trio, in order per producing thread; unbounded.

    Create it in trio (it captures the trio token; ``RuntimeError`` outside a run)::

        inbox = TrioInbox[BotMessage]()   # in trio
        inbox.put_nowait(msg)             # in the gRPC thread (any thread)
        async for msg in inbox: ...       # in trio
    """

    def __init__(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._send, self._receive = trio.open_memory_channel[T](math.inf)
        self._ended = False
        self._delivered = 0
        self._dropped = 0

    def put_nowait(self, msg: T) -> bool:
        """Hand ``msg`` to trio. ``False`` if the inbox was ended or trio has finished."""
        if self._ended or not call_in_trio_nowait(self._token, self._deliver, msg):
            self._dropped += 1
            return False
        return True

    def close_nowait(self) -> bool:
        """Producer: end the stream after what was put. Idempotent; ``False`` if trio ended."""
        self._ended = True
        return call_in_trio_nowait(self._token, self._send.close)

    async def receive(self) -> T:
        """The next message; ``trio.EndOfChannel`` once ended and drained."""
        return await self._receive.receive()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Consumer: stop receiving; buffered and later messages are dropped."""
        while True:
            try:
                self._receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
            self._dropped += 1
        self._receive.close()

    def statistics(self) -> BoxStatistics:
        stats = self._send.statistics()
        return BoxStatistics(
            delivered=self._delivered,
            dropped=self._dropped,
            buffered=stats.current_buffer_used,
            closed=self._ended or stats.open_receive_channels == 0,
        )

    def _deliver(self, msg: T) -> None:
        # Runs in trio via run_sync_soon: must never raise.
        try:
            self._send.send_nowait(msg)
        except (trio.ClosedResourceError, trio.BrokenResourceError, trio.WouldBlock):
            self._dropped += 1
        else:
            self._delivered += 1


async def serve_grpc(
    registrations: Sequence[Registration],
    config: GrpcServerConfig | None = None,
    *,
    task_status: trio.TaskStatus[GrpcThread] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until cancelled; ``await nursery.start(serve_grpc, ...)`` returns the
    listening :class:`GrpcThread`. Raises ``GrpcServerError``."""
    async with open_grpc_server(registrations, config) as server:
        task_status.started(server)
        await trio.sleep_forever()
