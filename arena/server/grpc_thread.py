"""The embedded gRPC server: ``grpc.aio`` on its own asyncio loop in one daemon thread.

DESIGN.md, "Process and thread model". This is the thread half of the bridge; the
hops and boxes, and the trio entry point :func:`arena.server.bridge.open_grpc_server`,
are in :mod:`arena.server.bridge`, which re-exports everything here (import from there).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.server import loop_clock

__all__ = [
    "GrpcServerConfig",
    "GrpcServerError",
    "GrpcThread",
    "GrpcThreadStatistics",
    "Registration",
]

#: Adds one service to a server, e.g. ``partial(add_ArenaServicer_to_server, servicer)``.
#: Called in the gRPC thread, before the server starts.
Registration = Callable[[grpc.aio.Server], object]

_HEALTH_SERVICE = "grpc.health.v1.Health"


def _default_options() -> tuple[tuple[str, int], ...]:
    return (
        # Ping connections so that a vanished host is noticed (within ~5 min: a bot in a
        # match is noticed sooner, by its deadlines). Not more often: the bot's stack
        # acknowledges a ping, and an acknowledgement that follows an answer dates its
        # receipt late (receive_clock); at 20 s, pings mis-dated 3% of a thinking bot's
        # answers at 250 matches (bench/clock_parts.py). A match's decisions stay fair.
        ("grpc.keepalive_time_ms", 300_000),
        ("grpc.keepalive_timeout_ms", 20_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        # Let bots ping us as often as every 10 s without being cut off.
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
        # Binding a port already in use must fail, not share it silently (Linux).
        ("grpc.so_reuseport", 0),
        # No bandwidth-delay probing: it pings a bot whenever its data arrives, and the
        # bot's acknowledgement, arriving after its answer, would date the answer's
        # receipt (receive_clock: the connection's latest data) late, charging the bot
        # for the server's delay in reading it. It only grows the window for data sent
        # to the server, which is a bot's small answers (bench/clock_parts.py).
        ("grpc.http2.bdp_probe", 0),
    )


@dataclass(frozen=True, slots=True)
class GrpcServerConfig:
    """How to run the embedded server. Durations in seconds."""

    address: str = "127.0.0.1:0"  # port 0: a free port, see GrpcThread.port
    # More addresses to listen on too, e.g. ``unix:/path/arena.sock`` for sandboxed bots
    # (which have no network, only that socket: docs/sandbox.md).
    extra_addresses: tuple[str, ...] = ()
    # Full names of the registered services ("arena.v1.Arena"): each is reported
    # SERVING by health checking and listed by reflection.
    service_names: tuple[str, ...] = ()
    # Extra channel arguments, overriding the defaults and the size limits below.
    options: tuple[tuple[str, int | str], ...] = ()
    max_receive_message_bytes: int = 256 * 1024  # bots send tiny messages: a defence
    max_send_message_bytes: int = 4 * 1024 * 1024
    maximum_concurrent_rpcs: int | None = None  # None: no limit
    # Run before every RPC's handler (arena.server.access.AccessInterceptor checks roles).
    interceptors: tuple[grpc.aio.ServerInterceptor[Any, Any], ...] = ()
    # TLS (grpc.ssl_server_credentials, see arena.server.tls); None: plaintext.
    credentials: grpc.ServerCredentials | None = None
    grace: float = 1.0  # for in-flight RPCs when the server stops
    start_timeout: float = 10.0  # GrpcThread.start waits this long for the bind
    stop_timeout: float = 10.0  # GrpcThread.stop waits this long for the thread
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

    port: int | None
    running: bool
    thread_alive: bool


class GrpcThread:
    """A ``grpc.aio`` server on its own asyncio loop in one daemon thread.

    Besides ``registrations`` it serves health checking (``grpc.health.v1.Health``: the
    server and each configured service SERVING until shutdown) and reflection (v1alpha).
    ``start`` and ``stop`` block; from trio use :func:`open_grpc_server`. Resource
    handling: one thread and one loop per instance, both gone after :meth:`stop`; it
    runs at most once; the daemon thread never blocks exit.
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
        self._stopping = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._grace = self.config.grace
        self._port: int | None = None
        self._error: BaseException | None = None
        self._running = False

    @property
    def thread(self) -> threading.Thread:
        """The thread the gRPC server's asyncio loop runs on (to place it on a CPU)."""
        return self._thread

    @property
    def port(self) -> int:
        """The bound port. Raises ``GrpcServerError`` before a successful start."""
        if self._port is None:
            raise GrpcServerError("the gRPC server has not started")
        return self._port

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The server's loop (for :class:`AsyncioOutbox` and hops from trio)."""
        if self._loop is None or not self._ready.is_set():
            raise GrpcServerError("the gRPC server has not started")
        return self._loop

    @property
    def target(self) -> str:
        """``host:port`` for a client channel."""
        host = self.config.address.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    def start(self) -> int:
        """Start the thread, wait until the server listens, return the bound port.

        Raises ``GrpcServerError`` if started before, if binding or starting failed (the
        cause chained; e.g. the port is taken), or after ``config.start_timeout``.
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
        """Health turns NOT_SERVING, new RPCs are refused, in-flight ones get ``grace``
        seconds (default ``config.grace``), then the thread ends. Blocks; idempotent.

        Raises ``GrpcServerError`` if the thread outlives ``config.stop_timeout`` or the
        server crashed while running (the cause chained).
        """
        if self._thread.ident is None:
            return
        if threading.current_thread() is self._thread:
            raise GrpcServerError("GrpcThread.stop() called from the gRPC thread itself")
        if grace is not None:
            self._grace = grace
        # Set the flag before reading the event: _serve creates the event before it
        # reads the flag, so one of the two always sees the other.
        self._stopping.set()
        loop, stop_requested = self._loop, self._stop_requested
        if loop is not None and stop_requested is not None:
            # a closed loop means the thread is ending anyway
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop_requested.set)
        self._thread.join(self.config.stop_timeout)
        if self._thread.is_alive():
            raise GrpcServerError(f"gRPC thread still alive after {self.config.stop_timeout} s")
        if self._error is not None and self._port is not None:
            error, self._error = self._error, None
            raise GrpcServerError("the gRPC server crashed") from error

    def statistics(self) -> GrpcThreadStatistics:
        return GrpcThreadStatistics(
            port=self._port,
            running=self._running,
            thread_alive=self._thread.is_alive(),
        )

    def _thread_main(self) -> None:
        try:
            # the loop's selector times its iterations: the edge's arrival clock (loop_clock)
            with asyncio.Runner(loop_factory=loop_clock.new_event_loop) as runner:
                runner.run(self._serve())
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
            interceptors=config.interceptors,
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
        if config.credentials is not None:
            port = server.add_secure_port(config.address, config.credentials)
        else:
            port = server.add_insecure_port(config.address)
        for extra in config.extra_addresses:  # local Unix sockets: plaintext
            server.add_insecure_port(extra)
        await server.start()
        self._port, self._running = port, True
        self._ready.set()
        try:
            if not self._stopping.is_set():
                await self._stop_requested.wait()
        finally:
            self._running = False
            await health.enter_graceful_shutdown()
            await server.stop(self._grace)
