"""Round-trip latency: raw grpc.aio against the ways a trio referee can sit behind it.

Every server runs in this process; only who answers, and how a message crosses between
the gRPC thread and trio, differs (docs/architecture.md, "The bridge, measured"):

- ``raw``: the grpc.aio servicer answers each BotMessage itself, on its asyncio loop;
- ``per_message``: each message hops to trio by its own ``TrioToken.run_sync_soon`` and
  each answer back by its own ``loop.call_soon_threadsafe`` into the stream's queue (the
  bridge before issue 20);
- ``batched``: arena's :class:`arena.server.bridge.Hop` both ways (one wake-up per
  burst) and the stream's :class:`~arena.server.bridge.AsyncioOutbox` (today's bridge);
- ``direct``: trio schedules the stream's ``write`` itself on the loop
  (``call_soon_threadsafe`` → a task; nothing awaited on the trio side, no queue);
- ``sync``: grpcio's synchronous server (a thread per stream) calling into trio with
  ``trio.from_thread.run_sync`` (blocking the stream's thread for the answer).

The client is a separate process (grpc.aio; one Action in, one Verdict out, strictly
alternating) with 1 stream, then 4 concurrent streams. Prints medians; compare ratios
within one run, the numbers are noisy.

    .venv/bin/python bench/bridge_pingpong.py [round_trips]
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent import futures
from functools import partial
from typing import Any

import grpc
import trio

from arena.server.bridge import GrpcServerConfig, open_grpc_server
from arena.v1 import arena_pb2, arena_pb2_grpc

CARD = arena_pb2.Card(suit=arena_pb2.HEARTS, rank=arena_pb2.KING)
CONFIG = GrpcServerConfig(service_names=("arena.v1.Arena",))
STRUCTURES = ("raw", "per_message", "batched", "direct", "sync")


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


class PerMessageArena(arena_pb2_grpc.ArenaServicer):
    """One ``run_sync_soon`` per message in, one ``call_soon_threadsafe`` per answer out."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self.token = token

    async def Play(self, request_iterator: Any, context: Any) -> AsyncIterator[Any]:
        await context.send_initial_metadata(())
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[arena_pb2.RefereeMessage] = asyncio.Queue()

        def referee(message: arena_pb2.BotMessage) -> None:  # in trio
            loop.call_soon_threadsafe(queue.put_nowait, verdict_for(message))

        async for message in request_iterator:
            self.token.run_sync_soon(referee, message)
            yield await queue.get()


class BatchedArena(arena_pb2_grpc.ArenaServicer):
    """arena's own bridge: :class:`Hop` into trio, :class:`AsyncioOutbox` back."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        from arena.server.bridge import Hop

        self.hop = Hop.to_trio(token)

    async def Play(self, request_iterator: Any, context: Any) -> AsyncIterator[Any]:
        from arena.server.bridge import AsyncioOutbox

        await context.send_initial_metadata(())
        outbox = AsyncioOutbox[arena_pb2.RefereeMessage]()
        async for message in request_iterator:
            self.hop.call(lambda m: outbox.send_nowait(verdict_for(m)), message)
            yield await outbox.get()


class DirectArena(arena_pb2_grpc.ArenaServicer):
    """trio starts the write itself: ``call_soon_threadsafe`` → ``create_task(write)``."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self.token = token

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        await context.send_initial_metadata(())
        loop = asyncio.get_running_loop()
        last: list[asyncio.Task[None]] = []  # a stream takes one write at a time: chain them

        async def chained(previous: asyncio.Task[None] | None, reply: Any) -> None:
            if previous is not None:
                await previous
            await context.write(reply)

        def write(reply: arena_pb2.RefereeMessage) -> None:  # on the loop
            last[:] = [loop.create_task(chained(last[0] if last else None, reply))]

        def referee(message: arena_pb2.BotMessage) -> None:  # in trio
            loop.call_soon_threadsafe(write, verdict_for(message))

        while True:
            message = await context.read()
            if message is grpc.aio.EOF:  # type: ignore[attr-defined]
                break
            self.token.run_sync_soon(referee, message)
        if last:
            await last[0]


class SyncArena(arena_pb2_grpc.ArenaServicer):
    """grpcio's thread-per-stream server; each answer from trio, the thread blocked."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self.token = token

    def Play(self, request_iterator: Any, context: Any) -> Iterator[Any]:  # type: ignore[override]
        context.send_initial_metadata(())
        for message in request_iterator:
            yield trio.from_thread.run_sync(verdict_for, message, trio_token=self.token)


# ----------------------------------------------------------------------------- client


async def client(target: str, round_trips: int, streams: int) -> None:
    async def one(channel: grpc.aio.Channel, samples: list[float]) -> None:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.initial_metadata()
        for seq in range(round_trips):
            message = arena_pb2.BotMessage(action=arena_pb2.Action(seq=seq, cards=[CARD] * 4))
            started = time.perf_counter()
            await call.write(message)
            await call.read()
            samples.append(time.perf_counter() - started)
        await call.done_writing()

    samples: list[float] = []
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(streams)]
    await asyncio.gather(*(one(c, samples) for c in channels))
    for c in channels:
        await c.close()
    warm = samples[len(samples) // 10 :]
    print(f"{statistics.median(warm) * 1e6:.0f}")


def measure(target: str, round_trips: int, streams: int = 1) -> float:
    """Run the client process against ``target``: its median µs (blocking)."""
    argv = [sys.executable, __file__, "--client", target, str(round_trips), str(streams)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


# ----------------------------------------------------------------------------- servers

Spawn = Callable[[list[str]], Any]
WaitAll = Callable[..., Any]


def _sync_server(servicer: SyncArena) -> tuple[grpc.Server, str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    arena_pb2_grpc.add_ArenaServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


async def measure_one(
    structure: str, round_trips: int, streams: int, spawn: Spawn, wait_all: WaitAll
) -> float:
    """Median µs per round trip through ``structure`` with ``streams`` client streams."""
    argv = [sys.executable, __file__, "--client"]
    token = trio.lowlevel.current_trio_token()
    if structure == "sync":
        server, target = await trio.to_thread.run_sync(_sync_server, SyncArena(token))
        try:
            (out,) = await wait_all([spawn([*argv, target, str(round_trips), str(streams)])])
        finally:
            await trio.to_thread.run_sync(server.stop, 0)
        return float(out)
    servicers = {
        "raw": RawArena,
        "per_message": PerMessageArena,
        "batched": BatchedArena,
        "direct": DirectArena,
    }
    servicer = servicers[structure]() if structure == "raw" else servicers[structure](token)
    registration = partial(arena_pb2_grpc.add_ArenaServicer_to_server, servicer)
    async with open_grpc_server([registration], CONFIG) as server:
        (out,) = await wait_all([spawn([*argv, server.target, str(round_trips), str(streams)])])
    return float(out)


async def measure_all(
    round_trips: int, spawn: Spawn, wait_all: WaitAll, rounds: int = 3
) -> dict[str, float]:
    """Every structure available in this code base, with 1 and 4 streams: the median of
    ``rounds`` medians (µs), the structures taken in rotating order each round so that
    load from elsewhere on the machine falls on all of them alike."""
    from arena.server import bridge

    cases = [
        (structure, streams)
        for structure in STRUCTURES
        if structure != "batched" or hasattr(bridge, "Hop")  # not before issue 20
        for streams in (1, 4)
    ]
    samples: dict[str, list[float]] = {}
    for r in range(rounds):
        for structure, streams in cases[r % len(cases) :] + cases[: r % len(cases)]:
            key = structure if streams == 1 else f"{structure}×4"
            try:
                us = await measure_one(structure, round_trips, streams, spawn, wait_all)
            except (RuntimeError, trio.TooSlowError, ValueError):
                us = float("nan")  # a structure that failed here: shown, not fatal
            samples.setdefault(key, []).append(us)
    return {key: statistics.median(samples[key]) for key in samples}


def _spawn(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)


async def _wait_all(procs: list[subprocess.Popen[str]]) -> list[str]:
    outs = []
    for p in procs:
        out, _ = await trio.to_thread.run_sync(p.communicate)
        outs.append(out.strip())
    return outs


async def main(round_trips: int) -> None:
    results = await measure_all(round_trips, _spawn, _wait_all)
    print(f"round trip medians over {round_trips} ping-pongs per stream (client: another process):")
    raw1, raw4 = results["raw"], results["raw×4"]
    for key, us in results.items():
        base = raw4 if key.endswith("×4") else raw1
        print(f"  {key:<16}{us:8.0f} µs  ({us / base:.2f}× raw)")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--client":
        asyncio.run(client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    else:
        trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 3000)
