"""The asyncio ⇄ trio bridge: grpc.aio in its own thread, the referee in trio.

DESIGN.md, "Process and thread model": the referee runs in trio on the main thread;
the gRPC server is ``grpc.aio`` on its own asyncio loop in one daemon thread (the one
exception to "tasks start only in nurseries", STYLE.md habit 11). Only two
thread-safe hops cross between them:

- trio → asyncio: ``loop.call_soon_threadsafe(queue.put_nowait, msg)``
  (:func:`call_in_asyncio_nowait`, :class:`AsyncioOutbox`);
- asyncio → trio: ``TrioToken.run_sync_soon(send_channel.send_nowait, msg)``
  (:func:`call_in_trio_nowait`, :class:`TrioInbox`).

Each side uses its own vocabulary: the producer of a box calls ``*_nowait`` (never
blocks, safe from any thread), the consumer awaits in its own loop. No thread per
stream and no ``trio.from_thread.run`` per message (measured 1.6× slower).

Both boxes are **unbounded**: a hop never blocks and never fails for lack of space.
That is safe here because every producer is paced by its peer (a bot answers one
request at a time; the referee sends a handful of messages per decision), and gRPC's
own flow control bounds what a client can push into a stream. A box whose consumer
has gone away drops what it is sent and counts it (``statistics()``).

Either side may finish first: a hop into a finished trio run or a closed asyncio loop
returns ``False`` instead of raising, and nothing scheduled into trio can raise there
(a callback that raised inside ``run_sync_soon`` would crash the whole trio run).

Callbacks run by ``run_sync_soon`` carry no structlog context, so this module does not
log; callers count, or log from a trio task.
"""

from __future__ import annotations

import asyncio
import enum
import math
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Generic, Self, TypeVar, TypeVarTuple

import grpc
import trio
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

__all__ = [
    "AsyncioOutbox",
    "BoxStatistics",
    "GrpcServerConfig",
    "GrpcServerError",
    "GrpcThread",
    "GrpcThreadStatistics",
    "Registration",
    "TrioInbox",
    "call_in_asyncio_nowait",
    "call_in_trio_nowait",
    "open_grpc_server",
    "serve_grpc",
]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

#: Adds one service to a server, e.g. ``partial(add_ArenaServicer_to_server, servicer)``.
#: Called in the gRPC thread, before the server starts.
Registration = Callable[[grpc.aio.Server], object]

_HEALTH_SERVICE = "grpc.health.v1.Health"


# --------------------------------------------------------------------------- the hops


def call_in_trio_nowait(
    token: trio.lowlevel.TrioToken, fn: Callable[[*Ts], object], *args: *Ts
) -> bool:
    """Schedule ``fn(*args)`` in the trio run of ``token``; callable from any thread.

    ``fn`` runs soon, in trio's thread, in FIFO order with other calls; it must not
    raise (trio turns an exception there into ``TrioInternalError`` and cancels the
    whole run) and must not block.

    Returns:
        ``False`` if the trio run has finished (``fn`` will never run), else ``True``
        (``fn`` is guaranteed to run before ``trio.run`` returns).
    """
    try:
        token.run_sync_soon(fn, *args)
    except trio.RunFinishedError:
        return False
    return True


def call_in_asyncio_nowait(
    loop: asyncio.AbstractEventLoop, fn: Callable[[*Ts], object], *args: *Ts
) -> bool:
    """Schedule ``fn(*args)`` on ``loop``; callable from any thread.

    Returns:
        ``False`` if the loop is closed (``fn`` will never run), else ``True``. A loop
        that has stopped but is not yet closed accepts the call and never runs it.
    """
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # "Event loop is closed"
        return False
    return True


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


class TrioInbox(Generic[T]):
    """asyncio → trio: the asyncio side calls :meth:`put_nowait`, trio iterates.

    Create it inside trio (it captures the current trio token)::

        inbox = TrioInbox[BotMessage]()       # in trio
        inbox.put_nowait(msg)                 # in the gRPC thread (any thread)
        async for msg in inbox: ...           # in trio

    Order is preserved per producing thread. Unbounded (see the module docstring).

    Raises:
        RuntimeError: if created outside a trio run.
    """

    def __init__(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._send, self._receive = trio.open_memory_channel[T](math.inf)
        self._ended = False
        self._delivered = 0
        self._dropped = 0

    # asyncio side (any thread) ---------------------------------------------------

    def put_nowait(self, msg: T) -> bool:
        """Hand ``msg`` to trio. ``False`` if the inbox was ended or trio has finished."""
        if self._ended or not call_in_trio_nowait(self._token, self._deliver, msg):
            self._dropped += 1
            return False
        return True

    def close_nowait(self) -> bool:
        """End the stream: trio's iteration stops after the messages already put.

        Idempotent. ``False`` if trio has already finished.
        """
        self._ended = True
        return call_in_trio_nowait(self._token, self._send.close)

    # trio side --------------------------------------------------------------------

    async def receive(self) -> T:
        """The next message.

        Raises:
            trio.EndOfChannel: after :meth:`close_nowait`, once the inbox is drained.
            trio.ClosedResourceError: after :meth:`close`.
        """
        return await self._receive.receive()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Stop receiving: buffered and later messages are dropped (and counted)."""
        while True:
            try:
                self._receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
            self._dropped += 1
        self._receive.close()

    def statistics(self) -> BoxStatistics:
        """Counts so far (read from the trio side)."""
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


class AsyncioOutbox(Generic[T]):
    """trio → asyncio: trio calls :meth:`send_nowait`, the asyncio side awaits :meth:`get`.

    Typically created by a servicer method, one per stream, and handed to trio through
    a :class:`TrioInbox`::

        outbox = AsyncioOutbox[RefereeMessage]()   # in the gRPC thread
        outbox.send_nowait(msg)                    # in trio (any thread)
        async for msg in outbox: yield msg         # in the gRPC thread

    Order is preserved per producing thread. Unbounded (see the module docstring).

    Args:
        loop: the consumer's loop; defaults to the running loop.

    Raises:
        RuntimeError: if ``loop`` is omitted and no asyncio loop is running.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop if loop is not None else asyncio.get_running_loop()
        self._queue: asyncio.Queue[T | _End] = asyncio.Queue()
        self._ended = False
        self._consumer_closed = False
        self._delivered = 0
        self._dropped = 0

    # trio side (any thread) ---------------------------------------------------------

    def send_nowait(self, msg: T) -> bool:
        """Hand ``msg`` to asyncio. ``False`` if the outbox is closed or the loop is closed."""
        if self._ended or self._consumer_closed:
            self._dropped += 1
            return False
        if not call_in_asyncio_nowait(self._loop, self._queue.put_nowait, msg):
            self._dropped += 1
            return False
        return True

    def close_nowait(self) -> bool:
        """End the stream: :meth:`get` raises ``EndOfChannel`` after the messages sent.

        Idempotent. ``False`` if the loop is closed.
        """
        if self._ended:
            return True
        self._ended = True
        return call_in_asyncio_nowait(self._loop, self._queue.put_nowait, _End.END)

    # asyncio side -------------------------------------------------------------------

    async def get(self) -> T:
        """The next message.

        Raises:
            trio.EndOfChannel: after :meth:`close_nowait`, once the outbox is drained
                (again on every later call), or after :meth:`close`.
        """
        if self._consumer_closed:
            raise trio.EndOfChannel
        item = await self._queue.get()
        if item is _End.END:
            self._queue.put_nowait(_End.END)  # every later get() ends too
            raise trio.EndOfChannel
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
        """Stop receiving (e.g. the client went away): buffered and later messages are dropped."""
        self._consumer_closed = True
        while not self._queue.empty():
            if self._queue.get_nowait() is not _End.END:
                self._dropped += 1

    def statistics(self) -> BoxStatistics:
        """Counts so far (exact when read from the asyncio side)."""
        return BoxStatistics(
            delivered=self._delivered,
            dropped=self._dropped,
            buffered=self._queue.qsize(),
            closed=self._ended or self._consumer_closed,
        )


# --------------------------------------------------------------------------- the server


def _default_options() -> tuple[tuple[str, int], ...]:
    return (
        # Ping idle connections so a vanished bot is noticed within ~30 s.
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        # Let bots ping us as often as every 10 s without being cut off.
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
        # Binding a port already in use must fail, not share it silently (Linux).
        ("grpc.so_reuseport", 0),
    )


@dataclass(frozen=True, slots=True)
class GrpcServerConfig:
    """How to run the embedded server. Durations in seconds.

    Attributes:
        address: where to listen; port 0 picks a free port (see ``GrpcThread.port``).
        service_names: full names of the registered services (``"arena.v1.Arena"``);
            each is reported SERVING by health checking and listed by reflection.
        options: extra gRPC channel arguments, overriding the defaults (keepalive,
            ``grpc.so_reuseport`` = 0) and the message size limits below.
        max_receive_message_bytes: largest message a client may send (bots send tiny
            ones; the limit is a defence against hostile clients).
        max_send_message_bytes: largest message the server sends.
        maximum_concurrent_rpcs: refuse RPCs beyond this many (``None``: no limit).
        grace: seconds in-flight RPCs get to finish when the server stops.
        start_timeout: seconds :meth:`GrpcThread.start` waits for the port to bind.
        stop_timeout: seconds :meth:`GrpcThread.stop` waits for the thread to end.
        thread_name: the name of the server thread.
    """

    address: str = "127.0.0.1:0"
    service_names: tuple[str, ...] = ()
    options: tuple[tuple[str, int | str], ...] = ()
    max_receive_message_bytes: int = 256 * 1024
    max_send_message_bytes: int = 4 * 1024 * 1024
    maximum_concurrent_rpcs: int | None = None
    grace: float = 1.0
    start_timeout: float = 10.0
    stop_timeout: float = 10.0
    thread_name: str = "arena-grpc"

    def channel_options(self) -> list[tuple[str, int | str]]:
        """All channel arguments for the server, later entries winning."""
        merged: dict[str, int | str] = dict(_default_options())
        merged["grpc.max_receive_message_length"] = self.max_receive_message_bytes
        merged["grpc.max_send_message_length"] = self.max_send_message_bytes
        merged.update(self.options)
        return list(merged.items())


class GrpcServerError(RuntimeError):
    """The embedded gRPC server failed to start, crashed, or did not stop in time."""


@dataclass(frozen=True, slots=True)
class GrpcThreadStatistics:
    """A snapshot of the embedded server."""

    address: str
    port: int | None
    running: bool
    thread_alive: bool


class GrpcThread:
    """A ``grpc.aio`` server on its own asyncio loop in one daemon thread.

    Besides ``registrations`` it serves standard health checking
    (``grpc.health.v1.Health``: the server and every configured service SERVING until
    shutdown begins) and server reflection (v1alpha) for the configured services.
    From trio prefer :func:`open_grpc_server` or :func:`serve_grpc`; ``start`` and
    ``stop`` block the calling thread.

    Resource handling: one thread and one asyncio loop per instance, both gone after
    :meth:`stop`; an instance runs at most once. The thread is a daemon, so a server
    that was never stopped cannot keep the process alive.
    """

    def __init__(
        self, registrations: Iterable[Registration], config: GrpcServerConfig | None = None
    ) -> None:
        self.config = config if config is not None else GrpcServerConfig()
        self._registrations = tuple(registrations)
        self._thread = threading.Thread(
            target=self._thread_main, name=self.config.thread_name, daemon=True
        )
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._grace = self.config.grace
        self._port: int | None = None
        self._error: BaseException | None = None
        self._running = False

    @property
    def port(self) -> int:
        """The bound port. Raises ``GrpcServerError`` before a successful start."""
        if self._port is None:
            raise GrpcServerError("the gRPC server has not started")
        return self._port

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The server's asyncio loop (for :class:`AsyncioOutbox` and hops from trio)."""
        if self._loop is None or not self._ready.is_set():
            raise GrpcServerError("the gRPC server has not started")
        return self._loop

    @property
    def target(self) -> str:
        """``host:port`` for a client channel."""
        host = self.config.address.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    def start(self) -> int:
        """Start the thread and wait until the server listens; return the bound port.

        Raises:
            GrpcServerError: if it was started before, failed to bind or start (the
                cause is chained), or was not ready within ``config.start_timeout``.
        """
        if self._thread.ident is not None:
            raise GrpcServerError("a GrpcThread can be started only once")
        self._thread.start()
        if not self._ready.wait(self.config.start_timeout):
            self.stop()
            raise GrpcServerError(f"gRPC server not ready after {self.config.start_timeout} s")
        if self._port is None:
            self._thread.join(self.config.stop_timeout)
            raise GrpcServerError(
                f"gRPC server failed to start on {self.config.address}"
            ) from self._error
        return self._port

    def stop(self, grace: float | None = None) -> None:
        """Stop gracefully: health turns NOT_SERVING, new RPCs are refused, in-flight
        ones get ``grace`` seconds (default ``config.grace``) and are then cancelled.
        Blocks until the thread has ended. Idempotent; a no-op if never started.

        Raises:
            GrpcServerError: if the thread is still alive after ``config.stop_timeout``
                (it is a daemon and will not block exit), or the server crashed while
                running (the cause is chained).
        """
        if self._thread.ident is None:
            return
        if grace is not None:
            self._grace = grace
        loop, stop_requested = self._loop, self._stop_requested
        if loop is not None and stop_requested is not None:
            call_in_asyncio_nowait(loop, stop_requested.set)
        self._thread.join(self.config.stop_timeout)
        if self._thread.is_alive():
            raise GrpcServerError(f"gRPC thread still alive after {self.config.stop_timeout} s")
        if self._error is not None and self._port is not None:
            error, self._error = self._error, None
            raise GrpcServerError("the gRPC server crashed") from error

    def statistics(self) -> GrpcThreadStatistics:
        return GrpcThreadStatistics(
            address=self.config.address,
            port=self._port,
            running=self._running,
            thread_alive=self._thread.is_alive(),
        )

    # in the gRPC thread ----------------------------------------------------------------

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # handed to start()/stop() in the caller's thread
            self._error = error
        finally:
            self._running = False
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_requested = asyncio.Event()
        config = self.config
        server = grpc.aio.server(
            options=config.channel_options(),
            maximum_concurrent_rpcs=config.maximum_concurrent_rpcs,
        )
        for register in self._registrations:
            register(server)
        health = health_aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health, server)
        for name in ("", *config.service_names):
            await health.set(name, health_pb2.HealthCheckResponse.SERVING)
        reflection.enable_server_reflection(
            [*config.service_names, _HEALTH_SERVICE, reflection.SERVICE_NAME], server
        )
        port = server.add_insecure_port(config.address)
        await server.start()
        self._port, self._running = port, True
        self._ready.set()
        try:
            await self._stop_requested.wait()
        finally:
            self._running = False
            await health.enter_graceful_shutdown()
            await server.stop(self._grace)


# --------------------------------------------------------------------------- from trio


@asynccontextmanager
async def open_grpc_server(
    registrations: Sequence[Registration], config: GrpcServerConfig | None = None
) -> AsyncIterator[GrpcThread]:
    """Run a :class:`GrpcThread` for the duration of an ``async with`` block (trio)::

        async with open_grpc_server([register_arena], config) as server:
            print(server.port)

    Resource handling: the server listens when the block is entered and has stopped,
    thread and loop gone, when it is left, however it is left (shielded from
    cancellation; at most ``grace`` + ``stop_timeout`` seconds).

    Raises:
        GrpcServerError: see :meth:`GrpcThread.start` and :meth:`GrpcThread.stop`.
    """
    server = GrpcThread(registrations, config)
    await trio.to_thread.run_sync(server.start)
    try:
        yield server
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(server.stop)


async def serve_grpc(
    registrations: Sequence[Registration],
    config: GrpcServerConfig | None = None,
    *,
    task_status: trio.TaskStatus[GrpcThread] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the server until cancelled; for ``await nursery.start(serve_grpc, ...)``,
    which returns the listening :class:`GrpcThread` (its ``port`` is bound).

    Raises:
        GrpcServerError: see :func:`open_grpc_server`.
    """
    async with open_grpc_server(registrations, config) as server:
        task_status.started(server)
        await trio.sleep_forever()
