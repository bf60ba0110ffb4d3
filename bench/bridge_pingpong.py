"""Round-trip latency: raw grpc.aio versus grpc.aio + the trio bridge (DESIGN.md table).

Both servers run in this process on the same GrpcThread; only who answers differs:

- raw: the servicer answers each BotMessage itself, on the asyncio loop;
- bridge: each message hops to a trio task (TrioInbox), which answers through the
  stream's AsyncioOutbox, as the referee will.

The client is a separate process (grpc.aio, one Action in, one Verdict out, strictly
alternating). Prints medians; compare ratios within one run, the numbers are noisy.

    .venv/bin/python bench/bridge_pingpong.py [round_trips]
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import trio

from arena.server.bridge import AsyncioOutbox, GrpcServerConfig, TrioInbox, open_grpc_server
from arena.v1 import arena_pb2, arena_pb2_grpc

CARD = arena_pb2.Card(suit=arena_pb2.HEARTS, rank=arena_pb2.KING)
Job = tuple[arena_pb2.BotMessage | None, AsyncioOutbox[arena_pb2.RefereeMessage]]


def verdict_for(message: arena_pb2.BotMessage) -> arena_pb2.RefereeMessage:
    action = message.action
    return arena_pb2.RefereeMessage(
        verdict=arena_pb2.Verdict(seq=action.seq, accepted=True, played=action.cards)
    )


class RawArena(arena_pb2_grpc.ArenaServicer):
    async def Play(self, request_iterator: Any, context: Any) -> AsyncIterator[Any]:
        await context.send_initial_metadata(())
        async for message in request_iterator:
            yield verdict_for(message)


class BridgedArena(arena_pb2_grpc.ArenaServicer):
    def __init__(self, inbox: TrioInbox[Job]) -> None:
        self.inbox = inbox

    async def Play(self, request_iterator: Any, context: Any) -> AsyncIterator[Any]:
        await context.send_initial_metadata(())
        outbox = AsyncioOutbox[arena_pb2.RefereeMessage]()

        async def pump() -> None:
            try:
                async for message in request_iterator:
                    self.inbox.put_nowait((message, outbox))
            finally:
                self.inbox.put_nowait((None, outbox))

        reader = asyncio.create_task(pump())
        try:
            async for reply in outbox:
                yield reply
        finally:
            reader.cancel()


async def trio_referee(inbox: TrioInbox[Job]) -> None:
    async for message, outbox in inbox:
        if message is None:
            outbox.close_nowait()
        else:
            outbox.send_nowait(verdict_for(message))


# ----------------------------------------------------------------------------- client


async def client(target: str, round_trips: int) -> None:
    import grpc.aio

    async with grpc.aio.insecure_channel(target) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.initial_metadata()
        samples = []
        for seq in range(round_trips):
            message = arena_pb2.BotMessage(action=arena_pb2.Action(seq=seq, cards=[CARD] * 4))
            started = time.perf_counter()
            await call.write(message)
            await call.read()
            samples.append(time.perf_counter() - started)
        await call.done_writing()
    warm = samples[len(samples) // 10 :]
    print(f"{statistics.median(warm) * 1e6:.0f}")


def measure(target: str, round_trips: int) -> float:
    argv = [sys.executable, __file__, "--client", target, str(round_trips)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


# ----------------------------------------------------------------------------- main


async def main(round_trips: int) -> None:
    config = GrpcServerConfig(service_names=("arena.v1.Arena",))
    raw = [partial(arena_pb2_grpc.add_ArenaServicer_to_server, RawArena())]
    async with open_grpc_server(raw, config) as server:
        raw_us = await trio.to_thread.run_sync(measure, server.target, round_trips)
    inbox = TrioInbox[Job]()
    bridged = [partial(arena_pb2_grpc.add_ArenaServicer_to_server, BridgedArena(inbox))]
    async with trio.open_nursery() as nursery, open_grpc_server(bridged, config) as server:
        nursery.start_soon(trio_referee, inbox)
        bridge_us = await trio.to_thread.run_sync(measure, server.target, round_trips)
        nursery.cancel_scope.cancel()
    print(f"round trip medians over {round_trips} ping-pongs (client in another process):")
    print(f"  raw grpc.aio server            {raw_us:7.0f} µs")
    print(f"  grpc.aio thread + trio bridge  {bridge_us:7.0f} µs  ({bridge_us / raw_us:.2f}×)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--client":
        asyncio.run(client(sys.argv[2], int(sys.argv[3])))
    else:
        trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 3000)
