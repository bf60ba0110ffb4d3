"""The front of ``arena serve --workers N`` as one ``async with`` block (trio).

:func:`open_workers_server` starts the workers (all at once: each takes seconds), then
listens on the front address with the front's services and the same access gate and TLS
as a single server; leaving the block stops the workers (their matches are cancelled and
recorded, as Ctrl-C does on one process). ``extend`` adds a layer above's services to the
front (the competition's lobby and ``Competition``, :mod:`arena.competition.shards`).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import trio

from arena.server.access import Access, AccessInterceptor
from arena.server.app import SERVICES, Extension
from arena.server.bridge import GrpcServerConfig, open_grpc_server
from arena.server.limits import Limits
from arena.server.tls import ServerTls
from arena.server.workers.front import FrontArena, FrontMatches, Workers
from arena.server.workers.join import FrontWorkers
from arena.server.workers.ledger import Ledger
from arena.server.workers.pool import WorkerPool
from arena.v1 import arena_pb2_grpc as pb_grpc

# the front's extensions, made from its pool, ledger, nursery (for their tasks) and trio token
Extend = Callable[[WorkerPool, Ledger, trio.Nursery, trio.lowlevel.TrioToken], list[Extension]]


@dataclasses.dataclass
class WorkersServer:
    target: str  # the front's host:port
    pool: WorkerPool
    ledger: Ledger
    http_url: str = ""

    @property
    def addresses(self) -> list[str]:
        """Each worker's address for bots (Create's ``seat_address``)."""
        return [w.address for w in self.pool.workers]


@asynccontextmanager
async def open_workers_server(
    listen: str,
    count: int,
    settings: dict[str, Any],
    access: Access,
    tls: ServerTls | None,
    limits: Limits,
    shares: list[list[str]],
    advertise: str,
    http: str | None = None,
    extend: Extend | None = None,
) -> AsyncIterator[WorkersServer]:
    """Serve ``count`` workers behind ``listen``. ``settings``: what every worker reads
    (:mod:`arena.cli.serve_worker`); ``shares[i]``: the records worker ``i`` resumes;
    ``advertise``: the host in the workers' addresses; ``http``: the front's web side.

    Raises:
        ArenaError: a worker did not start.
    """
    ledger = Ledger(limits, count)
    listen_host = listen.rsplit(":", 1)[0]
    with tempfile.TemporaryDirectory(prefix="arena-workers-") as sockets:
        pool = WorkerPool(count, settings, ledger, listen_host, advertise, Path(sockets))
        async with trio.open_nursery() as nursery:
            async with trio.open_nursery() as starting:
                for index in range(count):
                    starting.start_soon(nursery.start, pool.supervise, index, shares[index])
            workers = Workers(pool, ledger)
            token = trio.lowlevel.current_trio_token()
            extensions = extend(pool, ledger, nursery, token) if extend else []
            gate = dataclasses.replace(access, is_seat_token=lambda t: ledger.seat(t) is not None)
            config = GrpcServerConfig(
                address=listen,
                service_names=(*SERVICES, "arena.v1.Workers", *(e.name for e in extensions)),
                options=limits.grpc_options(),
                max_receive_message_bytes=limits.max_message_bytes,
                maximum_concurrent_rpcs=limits.max_rpcs,
                interceptors=(AccessInterceptor(gate),),
                credentials=tls.credentials() if tls else None,
            )
            registrations: list[Callable[[grpc.aio.Server], object]] = [
                partial(pb_grpc.add_ArenaServicer_to_server, FrontArena(workers)),
                partial(
                    pb_grpc.add_MatchesServicer_to_server,
                    FrontMatches(workers, limits.watches_per_client),
                ),
                partial(
                    pb_grpc.add_WorkersServicer_to_server,
                    FrontWorkers(pool, token, access.open, _remote_credentials(tls)),
                ),
                *(e.register for e in extensions),
            ]
            try:
                async with open_grpc_server(registrations, config) as grpc_thread:
                    server = WorkersServer(grpc_thread.target, pool, ledger)
                    for extension in extensions:
                        if extension.run is not None:
                            nursery.start_soon(extension.run)
                    if http is not None:
                        pages = [e.http_routes for e in extensions if e.http_routes]
                        server.http_url = await _web(nursery, http, pool, ledger, gate, pages)
                    yield server
            finally:
                for extension in extensions:
                    if extension.closing is not None:
                        extension.closing()
                with trio.CancelScope(shield=True):
                    await pool.stop()
                nursery.cancel_scope.cancel()  # the web side, if any


def _remote_credentials(tls: ServerTls | None) -> grpc.ChannelCredentials | None:
    """How the front calls a worker that joined from another host: TLS when the front
    serves TLS, trusting its --tls-client-ca (else the system's roots) and presenting
    its own certificate to a worker that asks for one (a worker with --tls-client-ca);
    plaintext (then only a worker on this host may join, :mod:`.join`)."""
    if tls is None:
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=tls.client_ca, private_key=tls.key, certificate_chain=tls.cert
    )


async def _web(
    nursery: trio.Nursery,
    address: str,
    pool: WorkerPool,
    ledger: Ledger,
    access: Access,
    more: list[Callable[[Any], Any]],
) -> str:
    """The front's pages, /metrics and /healthz over the workers' (the HTTP layer's
    :mod:`arena.http.workers`, loaded only with ``--http``, as :mod:`arena.server.app`
    loads its own), and the pages of the extensions (the competition's ``/events``),
    judged by the same access check as one server's pages."""
    from arena.http.app import page_guard
    from arena.http.workers import front_app, start_front_http

    def pages() -> list[str | None]:
        # a joined worker serves no pages (None); "" while a local one restarts
        return [None if w.remote else w.http if w.ready else "" for w in pool.workers]

    app = front_app(pages, ledger.where, page_guard(access), more, pool.records)
    return await start_front_http(nursery, address, app)


__all__ = ["Extend", "WorkersServer", "open_workers_server"]
