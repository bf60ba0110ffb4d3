"""PlayWriter on a real grpc.aio server: writes started from the hop, not from a task.

:class:`arena.server.play_writer.PlayWriter` drives ``context.write``'s coroutine by
hand and resumes it only when the next item needs the stream (docs/architecture.md,
"The grpc.aio thread's cost per decision"). These tests run it the way the Play stream
does — trio hands items over from its own thread, the handler awaits ``run()`` — on the
embedded server over 127.0.0.1, with grpc's own client reading, and check what a task
would have guaranteed: every item written once, in order, one write in flight (a write
held back by HTTP/2 flow control makes the items behind it wait, then go); the end
written after everything before it; a client that cancels mid-stream ends ``run()``
with the cancellation and leaves no write half-driven and no unretrieved error behind.
The arena's own Play stream runs on it in every server test (test_hostile.py: crashes,
reconnections and garbage mid-match).
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import trio

from arena.server.bridge import GrpcServerConfig, open_grpc_server
from arena.server.play_writer import PlayWriter

CONFIG = GrpcServerConfig(thread_name="arena-grpc-writer-test")
BIG = 256 * 1024  # bytes per item: a few fill HTTP/2's window until the client reads
METHOD = "/writer.Test/Play"


class Handler:
    """A Play-like stream-stream handler of bytes: hands its writer to the test, then
    awaits ``run()`` and records how it ended."""

    def __init__(self) -> None:
        self.writer: PlayWriter[bytes] | None = None
        self.ready = threading.Event()
        self.ended: str | None = None
        self.finished = threading.Event()
        self.loop_errors: list[dict[str, Any]] = []

    async def play(self, request_iterator: Any, context: Any) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, ctx: self.loop_errors.append(ctx))
        self.writer = PlayWriter[bytes](context.write)
        self.ready.set()
        try:
            await self.writer.run()
            self.ended = "done"
        except asyncio.CancelledError:
            self.ended = "cancelled"
            raise
        except Exception as exc:
            self.ended = f"error: {type(exc).__name__}"
            raise
        finally:
            self.finished.set()

    def register(self, server: grpc.aio.Server) -> None:
        handler = grpc.stream_stream_rpc_method_handler(self.play)  # bytes in, bytes out
        generic = grpc.method_handlers_generic_handler("writer.Test", {"Play": handler})
        server.add_generic_rpc_handlers((generic,))


def item(n: int) -> bytes:
    return n.to_bytes(4, "big") * (BIG // 4)


def client(target: str, read_after: float, cancel_after: int | None) -> list[int]:
    """Open the stream, wait ``read_after`` s before reading (the server's writes wait
    on flow control meanwhile), read every item (or cancel after ``cancel_after``)."""

    def nothing() -> Iterator[bytes]:
        yield from ()
        time.sleep(30)  # keep our half open: the server ends the stream

    options = [("grpc.max_receive_message_length", 4 * BIG)]
    with grpc.insecure_channel(target, options=options) as channel:
        call = channel.stream_stream(METHOD)(nothing(), timeout=30)
        time.sleep(read_after)
        seen = []
        for message in call:
            seen.append(int.from_bytes(message[:4], "big"))
            if cancel_after is not None and len(seen) == cancel_after:
                call.cancel()
                break
        return seen


async def _with_server(handler: Handler, read_after: float, cancel_after: int | None) -> list[int]:
    async with open_grpc_server([handler.register], CONFIG) as server, trio.open_nursery() as n:
        seen: list[int] = []
        client_done = trio.Event()

        async def run_client() -> None:
            seen.extend(
                await trio.to_thread.run_sync(client, server.target, read_after, cancel_after)
            )
            client_done.set()

        n.start_soon(run_client)
        await trio.to_thread.run_sync(handler.ready.wait, 10)
        writer = handler.writer
        assert writer is not None
        for k in range(20):  # from the trio thread, as RemoteSeat sends
            assert writer.send_nowait(item(k))
        if cancel_after is not None:  # the stream's end comes only after the client left
            await client_done.wait()
        writer.close_nowait()
        await trio.to_thread.run_sync(handler.finished.wait, 20)
    return seen


async def test_items_held_back_by_flow_control_go_out_in_order_and_the_end_after_them() -> None:
    handler = Handler()
    seen = await _with_server(handler, read_after=0.5, cancel_after=None)
    assert seen == list(range(20))
    assert handler.ended == "done"
    writer = handler.writer
    assert writer is not None
    assert (writer.delivered, writer.dropped) == (20, 0)
    assert writer.held > 0  # some items did wait behind a write in flight
    assert not writer.send_nowait(item(99))  # closed by its producer: refused, counted
    assert writer.dropped == 1


async def test_a_client_cancelling_mid_stream_ends_run_and_leaves_nothing_behind() -> None:
    handler = Handler()
    seen = await _with_server(handler, read_after=0.3, cancel_after=2)
    assert seen == [0, 1]
    assert handler.ended in ("cancelled", "error: ExecuteBatchError", "error: AbortError")
    writer = handler.writer
    assert writer is not None
    assert writer.delivered + writer.dropped == 20
    gc.collect()  # a failed write's future, had nobody retrieved its error, would log here
    assert handler.loop_errors == []
