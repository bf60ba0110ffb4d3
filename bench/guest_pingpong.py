"""An experiment for the next step of docs/architecture.md: trio in *guest mode*.

Today the referee (trio, main thread) and grpc.aio (its own thread and asyncio loop)
talk through two cross-thread hops, and both threads contend for one GIL. In guest mode
(``trio.lowlevel.start_guest_run``) trio runs on grpc.aio's own asyncio loop, in the
same thread. This measures one round trip — client → servicer → trio task → servicer →
client — three ways in one run, with the same client process and messages:

- raw: the servicer answers on the asyncio loop (the floor);
- guest: the servicer hands each message to a trio task running as a guest on the same
  loop (``TrioToken.run_sync_soon`` in, ``loop.call_soon`` out);
- bridge: today's arena bridge (trio on another thread), from ``bench/bridge_pingpong.py``.

    .venv/bin/python bench/guest_pingpong.py [round_trips]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import trio

from arena.v1 import arena_pb2, arena_pb2_grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bridge_pingpong

Reply = asyncio.Queue[arena_pb2.RefereeMessage]


class GuestArena(arena_pb2_grpc.ArenaServicer):
    """Each message goes to trio (a guest on this loop) and the answer comes back."""

    def __init__(self, token: trio.lowlevel.TrioToken, send: Any) -> None:
        self.token = token
        self.send = send

    async def Play(self, request_iterator: Any, context: Any) -> AsyncIterator[Any]:
        await context.send_initial_metadata(())
        replies: Reply = asyncio.Queue()
        async for message in request_iterator:
            self.token.run_sync_soon(self.send.send_nowait, (message, replies))
            yield await replies.get()


async def trio_answerer(receive: Any, loop: asyncio.AbstractEventLoop) -> None:
    async for message, replies in receive:
        loop.call_soon(replies.put_nowait, bridge_pingpong.verdict_for(message))


async def serve_guest(round_trips: int) -> float:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    token_box: asyncio.Future[tuple[trio.lowlevel.TrioToken, Any]] = loop.create_future()

    async def trio_main() -> None:
        send, receive = trio.open_memory_channel[Any](1000)
        token_box.set_result((trio.lowlevel.current_trio_token(), send))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio_answerer, receive, loop)
            await trio.sleep_forever()

    trio.lowlevel.start_guest_run(
        trio_main,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        run_sync_soon_not_threadsafe=loop.call_soon,
        done_callback=lambda _outcome: done.done() or done.set_result(None),
        host_uses_signal_set_wakeup_fd=True,
    )
    token, send = await token_box
    server = grpc.aio.server()
    arena_pb2_grpc.add_ArenaServicer_to_server(GuestArena(token, send), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        median = await asyncio.to_thread(bridge_pingpong.measure, f"127.0.0.1:{port}", round_trips)
    finally:
        await server.stop(0.5)
        token.run_sync_soon(_cancel_all)
        await asyncio.wait_for(done, 5)
    return median


def _cancel_all() -> None:
    raise KeyboardInterrupt  # ends the guest run: trio turns it into a clean shutdown


async def raw_and_bridge(round_trips: int) -> tuple[float, float]:
    """bench/bridge_pingpong.py's raw server and arena's bridge, measured by the same client."""
    spawn, wait_all = bridge_pingpong._spawn, bridge_pingpong._wait_all
    raw_us = await bridge_pingpong.measure_one("raw", round_trips, 1, spawn, wait_all)
    bridge_us = await bridge_pingpong.measure_one("batched", round_trips, 1, spawn, wait_all)
    return raw_us, bridge_us


def main() -> None:
    round_trips = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rows: dict[str, list[float]] = {
        "raw grpc.aio": [],
        "trio guest mode": [],
        "arena bridge (threads)": [],
    }
    for _ in range(3):  # interleaved, so machine noise hits all three alike
        rows["trio guest mode"].append(asyncio.run(serve_guest(round_trips)))
        raw, bridge = trio.run(raw_and_bridge, round_trips)
        rows["raw grpc.aio"].append(raw)
        rows["arena bridge (threads)"].append(bridge)
    floor = statistics.median(rows["raw grpc.aio"])
    print(f"round trips: 3 × {round_trips}, one ~20-byte message each way; median of medians:")
    for name, values in rows.items():
        median = statistics.median(values)
        print(f"  {name:<24} {median:7.0f} µs   {median / floor:4.2f}× raw")


if __name__ == "__main__":
    main()
