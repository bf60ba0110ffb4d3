"""Workers on other hosts joining the front: the ``arena.v1.Workers`` service (asyncio thread).

``arena serve --join FRONT`` (:mod:`arena.cli.serve_join`) is a worker started on its
own, on any host: it opens ``Workers.Join`` to the front with the organiser's token (the
access gate admits nobody else; a front started with ``--open`` takes no worker at all,
and a plaintext front takes one only from its own host, since the front forwards the
organisers' credentials to its workers). The stream carries the same JSON lines as a
local worker's pipes: down, the settings every worker reads (access, limits), then the
lobby's orders; up, the worker's ``ready`` report (its address for bots, which the front
also calls it on) and its match reports. The stream is the worker's lifeline both ways:
when it ends the worker stops, and the front forgets its live matches (their records
are on the worker's host: they are lost, as a match waiting for its bots is when a local
worker dies; the lobby plays its event matches again elsewhere,
:mod:`arena.competition.shards`).

Before the front counts a joined worker as ready it calls it once at the address it
reported (``Matches.List``, with the worker's TLS credentials): a worker the front cannot
reach or cannot trust (its certificate not signed by the front's ``--tls-client-ca``, or
not for that name) would take matches nobody can reach, so its stream is ended with
``FAILED_PRECONDITION`` saying why, and the worker stops with that line.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from typing import Any

import grpc
import structlog
import trio

from arena.server.bridge import AsyncioOutbox, call_in_trio_nowait, run_in_trio
from arena.server.workers.pool import WorkerPool
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

Ctx = grpc.aio.ServicerContext[Any, Any]
EOF_: object = grpc.aio.EOF  # type: ignore[attr-defined]  # missing from the stubs
log = structlog.get_logger()
SHARED = ("organiser_tokens", "spectator_tokens", "open", "spectator_delay", "limits")
PROBE_TIMEOUT = 10.0  # seconds for the front's first call to a worker that says it is ready


def local_peer(peer: str) -> bool:
    """Whether a gRPC peer string (``ipv4:127.0.0.1:5000``, ``ipv6:[::1]:5000``,
    ``unix:...``) is on this host."""
    kind, _, rest = peer.partition(":")
    if kind == "unix":
        return True
    host = rest.rsplit(":", 1)[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class FrontWorkers(pb_grpc.WorkersServicer):
    def __init__(
        self,
        pool: WorkerPool,
        trio_token: trio.lowlevel.TrioToken,
        open_: bool,
        credentials: grpc.ChannelCredentials | None,
    ) -> None:
        self.pool = pool
        self.trio = trio_token
        self.open = open_
        self.credentials = credentials  # to call joined workers (None: the front is plaintext)

    async def Join(self, request_iterator: Any, context: Ctx) -> None:  # type: ignore[override]
        if self.open:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "this front runs --open: it takes no worker from elsewhere",
            )
        if self.credentials is None and not local_peer(context.peer()):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "a worker on another host needs TLS (the front forwards organisers' "
                "credentials to it): start the front with --tls-cert/--tls-key",
            )
        outbox = AsyncioOutbox[pb.WorkerLine]()

        def send(line: bytes) -> None:  # (trio thread) an order
            outbox.send_nowait(pb.WorkerLine(json=line.decode().rstrip("\n")))

        worker = await run_in_trio(self.trio, self.pool.adopt, send, self.credentials)
        shared = {key: self.pool.settings[key] for key in SHARED}
        shared["log_level"] = self.pool.settings.get("log_level", "info")
        await context.write(pb.WorkerLine(json=json.dumps({"settings": shared})))
        log.info("worker_joined", worker=worker.index, peer=context.peer())
        writer = asyncio.ensure_future(self._write(outbox, context))
        try:
            while True:
                line = await context.read()
                if line is EOF_:
                    break
                try:
                    news = json.loads(line.json)
                except ValueError:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a JSON line")
                if isinstance(news, dict) and "ready" in news:
                    problem = await self._probe(str(news["ready"]))
                    if problem:
                        log.warning("worker_unreachable", worker=worker.index, problem=problem)
                        await context.abort(
                            grpc.StatusCode.FAILED_PRECONDITION,
                            f"the front cannot call this worker at {news['ready']}: {problem}",
                        )
                if isinstance(news, dict):
                    call_in_trio_nowait(self.trio, self.pool.heard, worker.index, news)
        finally:
            writer.cancel()
            call_in_trio_nowait(self.trio, self.pool.lost, worker.index)

    async def _probe(self, address: str) -> str:
        """Why the front cannot call the worker at ``address`` ("" if it can)."""
        channel = (
            grpc.aio.secure_channel(address, self.credentials)
            if self.credentials is not None
            else grpc.aio.insecure_channel(address)
        )
        tokens = self.pool.settings["organiser_tokens"]
        metadata = (("authorization", f"Bearer {tokens[0] if tokens else ''}"),)
        async with channel:
            try:
                await pb_grpc.MatchesStub(channel).List(
                    pb.ListMatchesRequest(page_size=1), metadata=metadata, timeout=PROBE_TIMEOUT
                )
            except grpc.aio.AioRpcError as exc:
                return f"{exc.code().name}: {exc.details()}"
        return ""

    async def _write(self, outbox: AsyncioOutbox[pb.WorkerLine], context: Ctx) -> None:
        async for line in outbox:
            await context.write(line)


__all__ = ["FrontWorkers", "local_peer"]
