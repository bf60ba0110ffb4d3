"""The arena server as one object: the match host (trio) plus the gRPC thread."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.server.access import Access, AccessInterceptor
from arena.server.bridge import GrpcServerConfig, GrpcThread, Registration, open_grpc_server
from arena.server.gc_policy import settle_after_start_up
from arena.server.host import MatchHost, RecorderFactory, TokenBook
from arena.server.limits import Limits
from arena.server.placement import keep_on_cpu
from arena.server.service import ArenaService, MatchesService
from arena.server.tls import ServerTls
from arena.server.wire import EventCaches, add_arena_service
from arena.v1 import arena_pb2_grpc as pb_grpc

SERVICES = ("arena.v1.Arena", "arena.v1.Matches")


@dataclasses.dataclass
class Extension:
    """A service a layer above the server adds to it (the competition's ``Lobby``): the
    server hosts it but never imports it (DESIGN.md: competition uses server/)."""

    name: str  # the full gRPC service name (reflection, health)
    register: Registration  # adds the servicer to the gRPC server
    run: Callable[[], Awaitable[None]] | None = None  # a task for the server's lifetime
    closing: Callable[[], None] | None = None  # told before the server cancels its matches
    # pages for ``--http``: given the HTTP side's access check (a request -> its role, or
    # the refusal to send), the Starlette routes to add (arena.http.app.PageRoutes)
    http_routes: Callable[[Any], Sequence[Any]] | None = None


Plugin = Callable[[MatchHost, trio.lowlevel.TrioToken], Extension]


@dataclasses.dataclass
class ArenaServer:
    host: MatchHost
    grpc: GrpcThread
    access: Access
    http_url: str = ""  # "http://HOST:PORT" with --http, else ""

    @property
    def organiser_token(self) -> str:
        """The token for the ``Matches`` service (``authorization: Bearer …``); "" if open."""
        return self.access.organiser_token

    @property
    def target(self) -> str:
        """``host:port`` for bots and organisers (``ARENA_SERVER``)."""
        return self.grpc.target


@asynccontextmanager
async def open_arena_server(
    address: str = "127.0.0.1:0",
    recorder_factory: RecorderFactory | None = None,
    before_listening: Callable[[MatchHost], object] | None = None,
    access: Access | None = None,
    tls: ServerTls | None = None,
    limits: Limits | None = None,
    records: Path | None = None,
    http: str | None = None,
    plugins: Sequence[Plugin] = (),
    extra_addresses: tuple[str, ...] = (),
    settle_gc: bool = False,
    cpu: int | None = None,
) -> AsyncIterator[ArenaServer]:
    """Serve the Arena and Matches services for an ``async with`` block.

    ``before_listening(host)`` runs before the port opens (``arena serve`` restores
    crashed matches there, so a returning bot never meets an unknown token).
    ``extra_addresses`` are listened on too (a ``unix:`` socket for sandboxed bots). Matches
    still running when the block ends are cancelled (and recorded as such).

    ``access`` says who may call what (docs/security.md); by default a fresh organiser
    token known only to this process (:meth:`Access.internal`), which is what an
    embedded server wants: its bots hold seat tokens and can use nothing else.
    ``tls``: serve TLS instead of plaintext.
    ``limits`` bound what clients may make it hold (docs/limits.md); ``records`` is the
    folder of ``<match id>.jsonl`` records, where forgotten matches are looked up.
    ``http``: also serve the pages, the event stream and ``/metrics`` on this
    ``HOST:PORT`` (:mod:`arena.http`, same trio loop).
    ``plugins`` add services (the competition's lobby).
    ``settle_gc``: once listening, tune this process's garbage collector for a long-running
    server (:mod:`arena.server.gc_policy`; ``arena serve`` and its workers, not tests).
    ``cpu``: once listening, keep this (trio's) thread and the gRPC loop's thread on that
    CPU (:mod:`arena.server.placement`: the two share a GIL; ``arena serve``'s
    ``--cpu-pinning``).
    """
    limits = limits or Limits()
    async with trio.open_nursery() as nursery:
        host = MatchHost(nursery, TokenBook(), recorder_factory, limits, records)
        metrics = None
        if http is not None:
            from arena.http.metrics import ArenaMetrics  # only servers with --http need it

            metrics = ArenaMetrics(host)
            host.recorder_factory = metrics.timed_records(recorder_factory)
        if before_listening is not None:
            before_listening(host)
        token = trio.lowlevel.current_trio_token()
        book = host.tokens
        access = replace(
            access or Access.internal(), is_seat_token=lambda t: book.lookup(t) is not None
        )
        caches = EventCaches()  # each event converted once, for seats and spectators alike
        arena_service = ArenaService(host, token, caches)
        if metrics is not None:
            arena_service.traffic = metrics.traffic
        registrations: list[Registration] = [
            partial(add_arena_service, arena_service),
            partial(
                pb_grpc.add_MatchesServicer_to_server,
                MatchesService(host, token, access, caches),
            ),
        ]
        extensions = [plugin(host, token) for plugin in plugins]
        registrations += [e.register for e in extensions]
        for extension in extensions:
            if extension.run is not None:
                nursery.start_soon(extension.run)
        config = GrpcServerConfig(
            address=address,
            service_names=SERVICES + tuple(e.name for e in extensions),
            options=limits.grpc_options(),
            max_receive_message_bytes=limits.max_message_bytes,
            maximum_concurrent_rpcs=limits.max_rpcs,
            interceptors=(AccessInterceptor(access),),
            credentials=tls.credentials() if tls else None,
            extra_addresses=extra_addresses,
        )
        async with open_grpc_server(registrations, config) as grpc_thread:
            http_url = ""
            if http is not None and metrics is not None:
                from arena.http.serve import start_http

                pages = [e.http_routes for e in extensions if e.http_routes is not None]
                http_url = await start_http(nursery, http, host, access, metrics, pages)
            if settle_gc:
                settle_after_start_up()
            keep_on_cpu(cpu, grpc_thread.thread)
            try:
                yield ArenaServer(host, grpc_thread, access, http_url)
            finally:
                for extension in extensions:
                    if extension.closing is not None:
                        extension.closing()
                for hosted in list(host.matches.values()):
                    host.cancel(hosted.id, "server shutting down")
                with trio.move_on_after(5) as scope:
                    scope.shield = True
                    for hosted in list(host.matches.values()):
                        await hosted.done.wait()
        nursery.cancel_scope.cancel()
