"""Server CPU per round trip of the thread structures a trio referee can sit behind.

Issue 20 asks for the cheapest structure *by CPU* (earlier benches timed latency only).
Each structure runs in a fresh server process of its own, serving ``bench/bridge_pingpong.py``'s
client (another process: one small Action in, one Verdict out, strictly alternating, on
``--streams`` concurrent streams); the server measures its own process CPU time (every
thread: Python, grpc's C threads, the kernel's share) over the client's run:

- ``raw``: grpc.aio answers on its own asyncio loop, no trio (the yardstick);
- ``bridge``: arena today: trio on the main thread, grpc.aio in its own thread
  (:class:`arena.server.bridge.GrpcThread`), messages crossing by :class:`Hop` and
  :class:`AsyncioOutbox`, the answer built by a trio task;
- ``door``: arena's bridge as production has it since issue 20's third round (t22edge):
  the stream's reader resumed in gRPC's completion callback (``EAGER_WAKEUP``), each
  message handed to the stream's own trio task through its :class:`SeatDoor` (an
  eventfd the task waits on; the hop when it does not wait), the reply sent by a
  :class:`PlayWriter` whose write starts in the hop's callback. ``bridge`` above is the
  older shape (entry-queue hop, memory channel, outbox, a Play task that writes);
- ``guest``: one Python thread: trio as a guest on grpc.aio's asyncio loop
  (``trio.lowlevel.start_guest_run``); trio's own I/O wait runs in a helper thread;
- ``trio_asyncio``: one thread: an asyncio loop implemented on trio (the ``trio-asyncio``
  package, measuring only), grpc.aio on it, trio and asyncio tasks in one run.

Structures run in rotating order, ``--rounds`` times; the median per structure is printed,
with its ratio to ``raw``.

    .venv/bin/python bench/structures_cpu.py [--trips 2000] [--streams 4] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import trio

from arena.v1 import arena_pb2_grpc as pb_grpc

BENCH = Path(__file__).parent
sys.path.insert(0, str(BENCH))
import bridge_pingpong as bp  # noqa: E402 — the shared client and message
from remote_kit import through_door  # noqa: E402 — a Play stream's reader, as arena's

STRUCTURES = ("raw", "bridge", "door", "guest", "trio_asyncio")
EOF: object = grpc.aio.EOF  # type: ignore[attr-defined]


def run_client(target: str, trips: int, streams: int) -> tuple[float, float]:
    """(server CPU s over the client's run, the client's median µs); blocking."""
    argv = [sys.executable, str(BENCH / "bridge_pingpong.py"), "--client", target]
    cpu = time.process_time()
    done = subprocess.run([*argv, str(trips), str(streams)], capture_output=True, text=True)
    cpu = time.process_time() - cpu
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return cpu, float(done.stdout.strip())


# ---------------------------------------------------------------------------- raw


async def serve_raw(trips: int, streams: int) -> tuple[float, float]:
    server = grpc.aio.server()
    pb_grpc.add_ArenaServicer_to_server(bp.RawArena(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        return await asyncio.to_thread(run_client, f"127.0.0.1:{port}", trips, streams)
    finally:
        await server.stop(0.5)


# ---------------------------------------------------------------------------- the trio side


async def answerer(receive: trio.MemoryReceiveChannel[Any]) -> None:
    """The referee's stand-in: a trio task that answers each message."""
    async for message, reply in receive:
        reply(bp.verdict_for(message))


class ToTrio(pb_grpc.ArenaServicer):
    """Hands each message to the trio task by ``deliver``; writes what comes back."""

    def __init__(self, deliver: Any, outbox: Any) -> None:
        self.deliver = deliver  # (message, reply) -> None, from the asyncio side
        self.outbox = outbox  # () -> (queue-like with async get(), reply callable)

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        await context.send_initial_metadata(())
        box, reply = self.outbox()
        while True:
            message = await context.read()
            if message is EOF:
                break
            self.deliver(message, reply)
            await context.write(await box.get())


# ---------------------------------------------------------------------------- bridge


async def serve_bridge(trips: int, streams: int) -> tuple[float, float]:
    from arena.server.bridge import AsyncioOutbox, GrpcServerConfig, Hop, open_grpc_server

    send, receive = trio.open_memory_channel[Any](float("inf"))
    hop = Hop.to_trio(trio.lowlevel.current_trio_token())

    def outbox() -> tuple[Any, Any]:
        box = AsyncioOutbox[Any]()
        return box, box.send_nowait

    servicer = ToTrio(lambda m, r: hop.call(send.send_nowait, (m, r)), outbox)
    registration = partial(pb_grpc.add_ArenaServicer_to_server, servicer)
    config = GrpcServerConfig(service_names=("arena.v1.Arena",))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(answerer, receive)
        async with open_grpc_server([registration], config) as server:
            result = await trio.to_thread.run_sync(run_client, server.target, trips, streams)
        nursery.cancel_scope.cancel()
    return result


# ---------------------------------------------------------------------------- door


class _Stream:
    """One stream's trio side, as a remote seat's: arena's :class:`DoorInbox` (its door,
    its parked task) and the stream's writer."""

    def __init__(self, writer: Any) -> None:
        from arena.server.door import DoorInbox

        self.inbox = DoorInbox[Any]()
        self.door = self.inbox.door
        self.put = self.inbox.put  # trio thread (RemoteSeat._put's way)
        self.writer = writer

    async def serve(self) -> None:  # the referee's stand-in: answer each message
        try:
            while (message := await self.inbox.get()) is not None:
                self.writer.send_nowait(bp.verdict_for(message))
        finally:
            self.door.close()
            self.writer.close_nowait()


class ThroughDoor(pb_grpc.ArenaServicer):
    def __init__(self, hop: Any, start: Any) -> None:
        self.hop = hop  # to trio
        self.start = start  # (stream) -> None, on the trio thread: starts its task

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        from arena.server.play_writer import PlayWriter

        await context.send_initial_metadata(())
        writer = PlayWriter[Any](context.write)
        stream = _Stream(writer)
        self.hop.call(self.start, stream)

        await through_door(context, writer, self.hop, stream.door, stream.put)


async def serve_door(trips: int, streams: int) -> tuple[float, float]:
    from arena.server.bridge import GrpcServerConfig, Hop, open_grpc_server

    hop = Hop.to_trio(trio.lowlevel.current_trio_token())
    async with trio.open_nursery() as nursery:
        servicer = ThroughDoor(hop, lambda stream: nursery.start_soon(stream.serve))
        registration = partial(pb_grpc.add_ArenaServicer_to_server, servicer)
        config = GrpcServerConfig(service_names=("arena.v1.Arena",))
        async with open_grpc_server([registration], config) as server:
            result = await trio.to_thread.run_sync(run_client, server.target, trips, streams)
        nursery.cancel_scope.cancel()
    return result


# ---------------------------------------------------------------------------- guest


async def serve_guest(trips: int, streams: int) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    ready: asyncio.Future[tuple[Any, Any]] = loop.create_future()

    async def trio_main() -> None:
        send, receive = trio.open_memory_channel[Any](float("inf"))
        ready.set_result((trio.lowlevel.current_trio_token(), send))
        await answerer(receive)

    trio.lowlevel.start_guest_run(
        trio_main,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        run_sync_soon_not_threadsafe=loop.call_soon,
        done_callback=lambda _: done.done() or done.set_result(None),
        host_uses_signal_set_wakeup_fd=True,
    )
    token, send = await ready

    def outbox() -> tuple[Any, Any]:
        box: asyncio.Queue[Any] = asyncio.Queue()
        return box, lambda reply: loop.call_soon(box.put_nowait, reply)

    servicer = ToTrio(lambda m, r: token.run_sync_soon(send.send_nowait, (m, r)), outbox)
    server = grpc.aio.server()
    pb_grpc.add_ArenaServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        return await asyncio.to_thread(run_client, f"127.0.0.1:{port}", trips, streams)
    finally:
        await server.stop(0.5)
        token.run_sync_soon(send.close)
        await asyncio.wait_for(done, 5)


# ---------------------------------------------------------------------------- trio-asyncio


async def serve_trio_asyncio(trips: int, streams: int) -> tuple[float, float]:
    import trio_asyncio

    send, receive = trio.open_memory_channel[Any](float("inf"))
    async with trio_asyncio.open_loop() as loop, trio.open_nursery() as nursery:
        nursery.start_soon(answerer, receive)

        def outbox() -> tuple[Any, Any]:
            box: asyncio.Queue[Any] = asyncio.Queue()
            return box, lambda reply: loop.call_soon(box.put_nowait, reply)

        # asyncio callbacks run inside trio here: a trio channel takes the message directly
        servicer = ToTrio(lambda m, r: send.send_nowait((m, r)), outbox)

        async def start() -> Any:
            server = grpc.aio.server()
            pb_grpc.add_ArenaServicer_to_server(servicer, server)
            port = server.add_insecure_port("127.0.0.1:0")
            await server.start()
            return server, port

        server, port = await trio_asyncio.aio_as_trio(start)()
        try:
            target = f"127.0.0.1:{port}"
            return await trio.to_thread.run_sync(run_client, target, trips, streams)
        finally:
            await trio_asyncio.aio_as_trio(server.stop)(0.5)
            nursery.cancel_scope.cancel()


def serve(structure: str, trips: int, streams: int) -> tuple[float, float]:
    if structure == "raw":
        return asyncio.run(serve_raw(trips, streams))
    if structure == "guest":
        return asyncio.run(serve_guest(trips, streams))
    if structure == "bridge":
        return trio.run(serve_bridge, trips, streams)
    if structure == "door":
        return trio.run(serve_door, trips, streams)
    return trio.run(serve_trio_asyncio, trips, streams)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trips", type=int, default=2000, help="round trips per stream")
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--structures", nargs="*", default=list(STRUCTURES))
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        cpu, median = serve(args.serve, args.trips, args.streams)
        print(f"{cpu / (args.trips * args.streams) * 1e6:.1f} {median:.1f}")
        return
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average before: {load}")
    cpu: dict[str, list[float]] = {s: [] for s in args.structures}
    lat: dict[str, list[float]] = {s: [] for s in args.structures}
    order = list(args.structures)
    for r in range(args.rounds):
        for structure in order[r % len(order) :] + order[: r % len(order)]:
            argv = [sys.executable, __file__, "--serve", structure]
            argv += ["--trips", str(args.trips), "--streams", str(args.streams)]
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode:
                print(f"  {structure} failed: {done.stderr.strip()[-500:]}")
                continue
            c, m = map(float, done.stdout.split()[-2:])
            cpu[structure].append(c)
            lat[structure].append(m)
    base_cpu = statistics.median(cpu["raw"]) if cpu.get("raw") else float("nan")
    base_lat = statistics.median(lat["raw"]) if lat.get("raw") else float("nan")
    print(f"{args.streams} streams × {args.trips} round trips, {args.rounds} rounds, medians:")
    print(f"  {'structure':<14}{'CPU µs/trip':>12}{'× raw':>8}{'p50 µs':>9}{'× raw':>8}")
    for s in args.structures:
        if not cpu[s]:
            continue
        c, m = statistics.median(cpu[s]), statistics.median(lat[s])
        print(f"  {s:<14}{c:>12.0f}{c / base_cpu:>7.2f}×{m:>9.0f}{m / base_lat:>7.2f}×")
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average after: {load}")


if __name__ == "__main__":
    main()
