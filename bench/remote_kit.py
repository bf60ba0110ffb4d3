"""The parts of ``bench/remote.py``: child processes, the raw replay server, the same
replay through arena's bridge (``door4``; a load level is ``bench/remote_level.py``).

Kept apart so that ``remote.py`` reads as the experiment and its table.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import grpc
import trio

from arena.game import Action, Event, MatchEnded, Request
from arena.referee import Fault, Referee, SeatVerdict
from arena.server import convert
from arena.server.bridge import GrpcServerConfig, open_grpc_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

if TYPE_CHECKING:  # imported where used: an older arena (a baseline's) may not have them
    from arena.server.play_writer import PlayWriter

BENCH = Path(__file__).parent
BOT = BENCH / "bots" / "fallback_bot.py"
PY = sys.executable
EOF_MARK: object = grpc.aio.EOF  # type: ignore[attr-defined]


def door_available() -> bool:
    """Whether the arena on the path has the bridge ``door4`` drives (an older checkout,
    given by ``PYTHONPATH`` for a baseline, may not): imported where used, not here."""
    try:
        from arena.server.door import SeatDoor  # noqa: F401
        from arena.server.loop_clock import EAGER_WAKEUP  # noqa: F401
        from arena.server.play_writer import PlayWriter  # noqa: F401
        from arena.server.wire import add_arena_service  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------------ processes


def die_with_parent() -> None:
    """In a child started by :class:`Spawner`: end when the parent does (Linux), by a
    SIGTERM taken as Ctrl-C so that this child's own children are ended too."""
    parent = os.environ.get("BENCH_PARENT_PID")
    if parent and sys.platform == "linux":
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != int(parent):  # the parent was already gone
            os._exit(1)


class Spawner:
    """Child processes that end with this one: terminated (then killed) when the ``with``
    block is left however it is left (Ctrl-C included); children that honour
    ``BENCH_PARENT_PID`` also ask the kernel to end them if this process dies first."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def __enter__(self) -> Spawner:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        live = [p for p in self.procs if p.poll() is None]
        for p in live:
            p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 3
        for p in live:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def spawn(self, argv: Sequence[str], stdin: str | None = None) -> subprocess.Popen[str]:
        """Start ``argv`` (from the trio thread itself: PR_SET_PDEATHSIG follows the
        thread that forked), writing ``stdin`` to it if given."""
        env = {**os.environ, "BENCH_PARENT_PID": str(os.getpid())}
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.procs.append(proc)
        if stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            proc.stdin.close()
            proc.stdin = None  # so that communicate() leaves it alone
        return proc

    async def wait_all(
        self, procs: Sequence[subprocess.Popen[str]], timeout: float = 120
    ) -> list[str]:
        """Each process's last line of output, once all have exited.

        Raises ``RuntimeError`` if one printed nothing (its stderr attached), and
        ``trio.TooSlowError`` after ``timeout`` (the processes are then left to ``__exit__``).
        """
        lines = []
        with trio.fail_after(timeout):
            for p in procs:
                out, err = await trio.to_thread.run_sync(p.communicate, abandon_on_cancel=True)
                if not out.strip():
                    raise RuntimeError(f"{p.args!r} exited {p.returncode}:\n{err[-3000:]}")
                lines.append(out.strip().splitlines()[-1])
        return lines


# ------------------------------------------------------------------------ CPU pinning

#: part A's servers keep their Python threads on one CPU, as ``arena serve`` does by
#: default (``--cpu-pinning auto``; :mod:`arena.server.placement`): set by bench/remote.py
PIN = {"on": True}


@contextlib.contextmanager
def on_one_cpu(server: Any, with_this_thread: bool) -> Iterator[None]:
    """While the block runs, ``server``'s loop thread (a ``GrpcThread``'s) on one CPU and,
    ``with_this_thread``, the calling (trio) thread with it, by arena's own
    :func:`~arena.server.placement.keep_on_cpu`, as ``arena serve`` keeps its two Python
    threads (the raw replays' server has one: it goes alone); the calling thread's CPUs
    are given back after. Nothing where the arena under test has no placement (a
    baseline's) or with ``PIN['on']`` off."""
    placement = None
    if PIN["on"]:
        with contextlib.suppress(ImportError):
            from arena.server import placement  # type: ignore[no-redef]
    cpu = placement.cpu_for(placement.AUTO) if placement is not None else None
    if placement is None or cpu is None:
        yield
        return
    mine = os.sched_getaffinity(0)
    if with_this_thread:
        placement.keep_on_cpu(cpu, server.thread)
    else:
        os.sched_setaffinity(server.thread.native_id, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, mine)


# ------------------------------------------------------------------------ in-process seats


@contextlib.contextmanager
def timed_asks(into: list[float]) -> Iterator[None]:
    """Append each ``Referee._ask``'s duration on trio's clock (the referee's own
    turnaround: ask → answer through the bridge and edge both ways) to ``into``."""
    ask = Referee._ask

    async def timed(self: Referee, *args: Any) -> Any:
        start = trio.current_time()
        try:
            return await ask(self, *args)
        finally:
            into.append(trio.current_time() - start)

    Referee._ask = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        Referee._ask = ask  # type: ignore[method-assign]


class LatencyRecorder:
    """A match recorder that keeps only the kind, request time and latency (seconds) of
    each accepted answer."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, float, float]] = []

    def answer(
        self, *, kind: str, requested_at_ms: float, latency_ms: float, fault: object, **_: Any
    ) -> None:
        if fault is None:
            self.answers.append((kind, requested_at_ms / 1000, latency_ms / 1000))

    def span(self) -> float:
        """Seconds from the first request to the last answer."""
        if not self.answers:
            return 0.0
        return max(t + x for _, t, x in self.answers) - min(t for _, t, _ in self.answers)

    def hold(self) -> None: ...
    def release(self) -> None: ...
    def deck(self, *_: Any) -> None: ...
    def events(self, *_: Any) -> None: ...
    def penalty(self, *_: Any) -> None: ...
    def forfeit(self, *_: Any) -> None: ...
    def cancel(self, *_: Any) -> None: ...
    def close(self, *_: Any) -> None: ...


@dataclasses.dataclass
class Step:
    """One decision as the wire saw it: the seat asked, its request, the verdict after."""

    seat: int
    request: pb.RefereeMessage
    verdict: pb.RefereeMessage | None = None


class ScriptSeat:
    """An in-process seat that answers with the fallback, converting each request to its
    wire message exactly as ``RemoteSeat`` does, and keeping them as a replay script."""

    name = "script"
    version = "bench"

    def __init__(self, seat: int, script: list[Step]) -> None:
        self.seat = seat
        self.script = script
        self._open: dict[int, Step] = {}

    async def ask(self, seq: int, request: Request, deadline_ms: int, bank_ms: int) -> Action:
        step = Step(self.seat, convert.request_to_pb(seq, request, deadline_ms, bank_ms))
        self.script.append(step)
        self._open[seq] = step
        await trio.lowlevel.checkpoint()
        return request.fallback

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        self._open.pop(verdict.seq).verdict = convert.verdict_to_pb(verdict)

    def tell_events(self, events: Sequence[Event]) -> None:
        return None

    async def finish(self, result: MatchEnded, faults: Sequence[Fault], record: str) -> None:
        await trio.lowlevel.checkpoint()


# ------------------------------------------------------------------------ raw replay


class ReplayArena(pb_grpc.ArenaServicer):
    """A raw grpc.aio Arena: replays a script's requests to ``clients`` streams (seat mod
    clients) on the asyncio loop, timing each request written → answer read.

    Each answer's verdict is written before the next request; with ``overlap`` it is not
    awaited first, so that it travels alongside the next request, as the referee's does.
    With ``encoded`` every message is written as bytes encoded beforehand (registered by
    :func:`add_arena_service`, as arena's Play writes): the protobuf encoding that raw4
    pays per request, taken out to compare with ``door4``'s bytes.
    """

    def __init__(
        self,
        script: list[Step],
        clients: int,
        overlap: bool = False,
        verdicts: bool = True,
        encoded: bool = False,
    ) -> None:
        self.script = script
        self.wire: Callable[[pb.RefereeMessage], Any] = (
            pb.RefereeMessage.SerializeToString if encoded else lambda m: m
        )
        self.requests = [self.wire(step.request) for step in script]
        self.verdict_msgs = [None if s.verdict is None else self.wire(s.verdict) for s in script]
        self.clients = clients
        self.overlap = overlap
        self.verdicts = verdicts  # False: request and answer only (VERDICT_FAULTS_ONLY's shape)
        self.streams: dict[int, Any] = {}
        self.latencies: list[float] = []
        self.wall = 0.0
        self.error = ""
        self._done: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        await context.send_initial_metadata(())
        hello = await context.read()
        seat = int(hello.hello.token)
        await context.write(self.wire(pb.RefereeMessage(welcome=pb.Welcome(seat=seat))))
        if self._done is None:
            self._done = asyncio.Event()
        self.streams[seat] = context
        if len(self.streams) == self.clients:
            self._runner = asyncio.create_task(self._replay())
        await self._done.wait()

    async def _replay(self) -> None:
        assert self._done is not None
        writing: dict[int, asyncio.Task[None]] = {}  # one write at a time per stream
        try:
            started = time.perf_counter()
            for step, request, verdict in zip(
                self.script, self.requests, self.verdict_msgs, strict=True
            ):
                stream = self.streams[step.seat % self.clients]
                t = time.perf_counter()
                if step.seat % self.clients in writing:
                    await writing.pop(step.seat % self.clients)
                await stream.write(request)
                await stream.read()
                self.latencies.append(time.perf_counter() - t)
                if verdict is None or not self.verdicts:
                    continue
                if self.overlap:
                    writing[step.seat % self.clients] = asyncio.ensure_future(stream.write(verdict))
                else:
                    await stream.write(verdict)
            self.wall = time.perf_counter() - started
            for task in writing.values():
                await task
            for stream in self.streams.values():
                await stream.write(self.wire(pb.RefereeMessage(match_end=pb.MatchEnd())))
        except Exception as exc:  # a client went away: the caller finds it gone too
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._done.set()


async def replay_raw(
    script: list[Step],
    clients: int,
    spawner: Spawner,
    overlap: bool = False,
    verdicts: bool = True,
    encoded: bool = False,
) -> tuple[list[float], float, float]:
    """(latencies s, wall s, server CPU s) of one replay."""
    servicer = ReplayArena(script, clients, overlap, verdicts, encoded)
    add: Callable[[Any, Any], None] = pb_grpc.add_ArenaServicer_to_server
    if encoded:  # imported here: an older arena (a baseline's) may not have it
        from arena.server.wire import add_arena_service as add
    registrations = [partial(add, servicer)]
    config = GrpcServerConfig(service_names=("arena.v1.Arena",))
    async with open_grpc_server(registrations, config) as server:
        argv = [PY, str(BOT), "--server", server.target]
        cpu = time.process_time()
        procs = [spawner.spawn([*argv, f"--token={s}"]) for s in range(clients)]
        with on_one_cpu(server, with_this_thread=False):  # bots spawned free
            await spawner.wait_all(procs)
        cpu = time.process_time() - cpu
    if servicer.error:
        raise RuntimeError(f"raw replay failed: {servicer.error}")
    return servicer.latencies, servicer.wall, cpu


# ------------------------------------------------------------------------ through the bridge


class DoorSeat:
    """One stream's trio side, as a :class:`~arena.server.remote.RemoteSeat`'s: its
    :class:`~arena.server.door.DoorInbox` (the production one, filled through the seat's
    door, or the hop when nobody waits at it) and the stream's :class:`PlayWriter`,
    without the game: what a referee that costs nothing still has to do per decision."""

    def __init__(self, writer: PlayWriter[bytes]) -> None:
        from arena.server.door import DoorInbox  # here: an older arena (a baseline's) has none

        self.inbox = DoorInbox[pb.BotMessage | None]()  # None: the stream ended
        self.door = self.inbox.door
        self.writer = writer

    def put(self, message: pb.BotMessage | None) -> None:
        """Trio thread: queue an answer and wake the task if it waits the usual way."""
        self.inbox.put(message)

    async def receive(self) -> pb.BotMessage | None:
        """The next answer: waiting at the door if it can, else to be woken by the hop."""
        return await self.inbox.get()


class DoorArena(pb_grpc.ArenaServicer):
    """The gRPC side of ``door4``, as ``ArenaService.Play`` has it: registered by
    :func:`add_arena_service` (replies written as bytes), each answer read in a task
    resumed in gRPC's completion callback (``EAGER_WAKEUP``) and handed to the seat's
    trio side through its door, each request written by the seat's :class:`PlayWriter`
    (its write started in the hop's callback). No answer is converted or checked."""

    def __init__(self, hop: Any, attach: Callable[[int, DoorSeat], None]) -> None:
        self.hop = hop  # to trio
        self.attach = attach  # (seat, its DoorSeat), run on the trio thread

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        from arena.server.play_writer import PlayWriter

        await context.send_initial_metadata(())
        hello = await context.read()
        seat_no = int(hello.hello.token)
        await context.write(pb.RefereeMessage(welcome=pb.Welcome(seat=seat_no)).SerializeToString())
        writer = PlayWriter[bytes](context.write)
        seat = DoorSeat(writer)
        self.hop.call(self.attach, seat_no, seat)

        await through_door(context, writer, self.hop, seat.door, seat.put)


async def through_door(context: Any, writer: Any, hop: Any, door: Any, put: Any) -> None:
    """A Play stream's life as ``ArenaService.Play`` has it, past its opening: each message
    read in a task resumed in gRPC's completion callback (``EAGER_WAKEUP``) and handed to
    ``put`` on the trio thread through ``door`` (``None`` at the stream's end), while
    ``writer`` (a :class:`PlayWriter`) writes what trio sends (bench/structures_cpu.py's
    ``door`` too)."""
    from arena.server.loop_clock import EAGER_WAKEUP

    async def read() -> None:
        EAGER_WAKEUP.set(True)
        while True:
            message = await context.read()
            ended = message is EOF_MARK
            door.call(hop, put, None if ended else message)
            if ended:
                return

    reader = asyncio.create_task(read())
    try:
        await writer.run()
    finally:
        reader.cancel()


async def replay_door(
    script: list[Step], clients: int, spawner: Spawner
) -> tuple[list[float], float, float]:
    """(latencies s, wall s, server CPU s) of one replay through arena's bridge
    (``door4``): :func:`replay_raw`'s script, bot program and clients, served by a trio
    task in place of the referee. It sends each request (bytes encoded beforehand) to
    its seat's writer and waits for the answer at the seat's door, timed on trio's clock
    around that as ``timed_asks`` times the referee's ask: both hops and the edge."""
    from arena.server.wire import add_arena_service

    data = [step.request.SerializeToString() for step in script]
    end = pb.RefereeMessage(match_end=pb.MatchEnd()).SerializeToString()
    seats: dict[int, DoorSeat] = {}
    ready = trio.Event()
    latencies: list[float] = []
    wall = 0.0

    def attach(seat_no: int, seat: DoorSeat) -> None:
        seats[seat_no] = seat
        if len(seats) == clients:
            ready.set()

    async def replay() -> None:
        nonlocal wall
        await ready.wait()
        started = trio.current_time()
        for step, request in zip(script, data, strict=True):
            seat = seats[step.seat % clients]
            t = trio.current_time()
            seat.writer.send_nowait(request)
            if await seat.receive() is None:
                raise RuntimeError(f"door replay: seat {step.seat % clients} went away")
            latencies.append(trio.current_time() - t)
        wall = trio.current_time() - started
        for seat in seats.values():
            seat.writer.send_nowait(end)
            seat.writer.close_nowait()
            seat.door.close()

    from arena.server.bridge import Hop  # here: an older arena (a baseline's) has none

    servicer = DoorArena(Hop.to_trio(trio.lowlevel.current_trio_token()), attach)
    registrations = [partial(add_arena_service, servicer)]
    config = GrpcServerConfig(service_names=("arena.v1.Arena",))
    async with trio.open_nursery() as nursery:
        async with open_grpc_server(registrations, config) as server:
            argv = [PY, str(BOT), "--server", server.target]
            nursery.start_soon(replay)
            cpu = time.process_time()  # from before the spawns, as replay_raw's
            procs = [spawner.spawn([*argv, f"--token={s}"]) for s in range(clients)]
            with on_one_cpu(server, with_this_thread=True):  # bots spawned free
                await spawner.wait_all(procs)
            cpu = time.process_time() - cpu
        nursery.cancel_scope.cancel()  # the replay is over unless a bot failed
    if len(latencies) != len(script):
        raise RuntimeError(f"door replay: {len(latencies)} of {len(script)} round trips")
    return latencies, wall, cpu


async def bridge_pingpong(round_trips: int, spawner: Spawner) -> dict[str, float]:
    """``bench/bridge_pingpong.py``'s servers and client: median µs per structure."""
    sys.path.insert(0, str(BENCH))
    import bridge_pingpong as bp

    return await bp.measure_all(round_trips, spawner.spawn, spawner.wait_all)
