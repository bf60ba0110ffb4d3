"""The front's gRPC services for ``arena serve --workers N`` (asyncio thread).

The front is the one address organisers, spectators and bots are given; it runs no
match. ``Matches`` calls are forwarded to the worker that hosts the match (organiser
traffic: a few calls per match), with the caller's ``authorization`` metadata, so each
worker applies the same roles, spectator delay and redaction as a single server does.
``Create`` is admitted here against the server-wide bounds and answers with
``seat_address``, the worker's own address. A bot's ``Play`` never goes through the
front (no proxy doubles the decision traffic): a bot that dials the front is refused
with ``FAILED_PRECONDITION`` and the trailing metadata ``arena-seat-address`` naming its
worker, which ``botkit`` follows. ``Check`` (a rare dry run) is forwarded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any, NoReturn, TypeVar

import grpc

from arena.server.limits import LimitExceeded, client_of, page_asked, page_token
from arena.server.workers.ledger import Ledger
from arena.server.workers.pool import WorkerPool
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

Ctx = grpc.aio.ServicerContext[Any, Any]
EOF_: object = grpc.aio.EOF  # type: ignore[attr-defined]  # missing from the stubs
HELLO_TIMEOUT = 5.0
SEAT_ADDRESS = "arena-seat-address"  # trailing metadata of a redirected Play
R = TypeVar("R")


class Workers:
    """Channels to the workers' control sockets, made in the gRPC thread's loop."""

    def __init__(self, pool: WorkerPool, ledger: Ledger) -> None:
        self.pool = pool
        self.ledger = ledger
        self._stubs: dict[int, tuple[pb_grpc.MatchesAsyncStub, pb_grpc.ArenaAsyncStub]] = {}

    def matches(self, index: int) -> pb_grpc.MatchesAsyncStub:
        return self._stub(index)[0]

    def arena(self, index: int) -> pb_grpc.ArenaAsyncStub:
        return self._stub(index)[1]

    def _stub(self, index: int) -> tuple[pb_grpc.MatchesAsyncStub, pb_grpc.ArenaAsyncStub]:
        if index not in self._stubs:
            worker = self.pool.workers[index]
            channel = (
                grpc.aio.secure_channel(worker.control, worker.credentials)
                if worker.credentials is not None  # a remote worker, behind TLS
                else grpc.aio.insecure_channel(worker.control)
            )
            self._stubs[index] = (pb_grpc.MatchesStub(channel), pb_grpc.ArenaStub(channel))
        return self._stubs[index]

    def owner(self, match_id: str) -> int:
        """The worker hosting ``match_id``, or (a match no worker has in memory: its
        record is read from the shared records folder) the first ready worker."""
        found = self.ledger.where(match_id)
        if found is not None:
            return found
        ready = self.pool.ready
        return ready.index(True) if True in ready else 0


def credentials(context: Ctx) -> tuple[tuple[str, str], ...]:
    """The caller's ``authorization`` metadata, passed on so the worker judges it."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            return ((key, value if isinstance(value, str) else value.decode("latin-1")),)
    return ()


async def relay(context: Ctx, error: grpc.aio.AioRpcError) -> NoReturn:
    """End the caller's call with the worker's status (UNAVAILABLE while it restarts)."""
    code = error.code()
    details = error.details() or ""
    if code is grpc.StatusCode.UNAVAILABLE:
        details = f"the worker hosting this match is restarting; try again ({details})"
    await context.abort(code, details)
    raise AssertionError("abort raises")  # pragma: no cover


async def forward(context: Ctx, call: Callable[..., Any], request: Any) -> Any:
    try:
        return await call(request, metadata=credentials(context), timeout=30)
    except grpc.aio.AioRpcError as error:
        await relay(context, error)


async def forward_stream(
    context: Ctx, method: Callable[..., Any], request: Any
) -> AsyncGenerator[Any]:
    """A worker's server stream, passed on: its messages, then its status. Close it
    (``aclosing``) to cancel the worker's call at once when the caller goes."""
    call = method(request, metadata=credentials(context))
    try:
        async for message in call:
            yield message
    except grpc.aio.AioRpcError as error:
        await relay(context, error)
    finally:
        call.cancel()


class FrontArena(pb_grpc.ArenaServicer):
    """Bots at the front: sent on to their worker."""

    def __init__(self, workers: Workers) -> None:
        self.workers = workers

    async def Play(self, request_iterator: Any, context: Ctx) -> None:  # type: ignore[override]
        await context.send_initial_metadata(())
        try:
            first = await asyncio.wait_for(context.read(), HELLO_TIMEOUT)
        except Exception:  # a timeout or undecodable bytes
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "no readable Hello")
        if first is EOF_ or not first.HasField("hello"):
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "the first message must be a Hello with a seat token",
            )
        index = self.workers.ledger.seat(first.hello.token)
        if index is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        assert index is not None
        worker = self.workers.pool.workers[index]
        if not worker.ready:
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                "the worker hosting this seat is restarting; connect again in a moment",
            )
        await context.abort(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"this seat plays at {worker.address} (arena serve --workers): connect there",
            trailing_metadata=((SEAT_ADDRESS, worker.address),),
        )

    async def Check(self, request: pb.CheckRequest, context: Ctx) -> pb.Verdict:
        index = self.workers.ledger.seat(request.token)
        if index is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        assert index is not None
        verdict: pb.Verdict = await forward(context, self.workers.arena(index).Check, request)
        return verdict


class FrontMatches(pb_grpc.MatchesServicer):
    """The organisers' service over all workers."""

    def __init__(self, workers: Workers, watches_per_client: int) -> None:
        self.workers = workers
        self.ledger = workers.ledger
        self.watches_per_client = watches_per_client
        self.watching: dict[str, int] = {}

    async def Create(self, request: pb.CreateMatchRequest, context: Ctx) -> pb.CreateMatchResponse:
        organiser = client_of(context.peer())
        try:
            index = self.ledger.reserve(organiser, self.workers.pool.ready)
        except LimitExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        try:
            created: pb.CreateMatchResponse = await self.workers.matches(index).Create(
                request, metadata=credentials(context), timeout=30
            )
        except grpc.aio.AioRpcError as error:
            self.ledger.release(organiser, index)
            await relay(context, error)
        self.ledger.created(created.match_id, index, list(created.seat_tokens), organiser)
        created.seat_address = self.workers.pool.workers[index].address
        return created

    async def List(self, request: pb.ListMatchesRequest, context: Ctx) -> pb.ListMatchesResponse:
        """One page over every worker's matches, in the front's creation order."""
        limits = self.ledger.limits
        try:
            after, size = page_asked(request.page_token, request.page_size, limits)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        found: list[pb.MatchInfo] = []
        for index, ready in enumerate(self.workers.pool.ready):
            if ready:
                found += await self._all(index, request, context)
        serials = self.ledger.serials()
        order = sorted(
            (serials.get(info.match_id, 1 << 62), info.match_id, info) for info in found
        )  # fmt: skip
        page = [(s, info) for s, _, info in order if s > after]
        more = page[size - 1][0] if len(page) > size else 0
        return pb.ListMatchesResponse(
            matches=[info for _, info in page[:size]],
            next_page_token=page_token(more) if more else "",
        )

    async def _all(
        self, index: int, request: pb.ListMatchesRequest, context: Ctx
    ) -> list[pb.MatchInfo]:
        """Every match of one worker in the wanted states (all its pages)."""
        out: list[pb.MatchInfo] = []
        size = self.ledger.limits.max_page_size
        ask = pb.ListMatchesRequest(states=request.states, page_size=size)
        while True:
            page: pb.ListMatchesResponse = await forward(
                context, self.workers.matches(index).List, ask
            )
            out += page.matches
            if not page.next_page_token:
                return out
            ask.page_token = page.next_page_token

    async def Get(self, request: pb.GetMatchRequest, context: Ctx) -> pb.MatchInfo:
        stub = self.workers.matches(self.workers.owner(request.match_id))
        info: pb.MatchInfo = await forward(context, stub.Get, request)
        return info

    async def Cancel(self, request: pb.CancelMatchRequest, context: Ctx) -> pb.MatchInfo:
        stub = self.workers.matches(self.workers.owner(request.match_id))
        info: pb.MatchInfo = await forward(context, stub.Cancel, request)
        return info

    async def Watch(self, request: pb.WatchRequest, context: Ctx) -> AsyncIterator[pb.Event]:
        """The worker's stream, passed on (``--watches-per-client`` counted here: the
        worker sees every stream as the front's)."""
        client = client_of(context.peer())
        if self.watching.get(client, 0) >= self.watches_per_client:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"you already watch {self.watches_per_client} streams (--watches-per-client)",
            )
        self.watching[client] = self.watching.get(client, 0) + 1
        try:
            stub = self.workers.matches(self.workers.owner(request.match_id))
            async with aclosing(forward_stream(context, stub.Watch, request)) as events:
                async for event in events:
                    yield event
        finally:
            self.watching[client] -= 1
            if not self.watching[client]:
                del self.watching[client]

    async def FetchRecord(
        self, request: pb.FetchRecordRequest, context: Ctx
    ) -> AsyncIterator[pb.RecordChunk]:
        stub = self.workers.matches(self.workers.owner(request.match_id))
        async with aclosing(forward_stream(context, stub.FetchRecord, request)) as chunks:
            async for chunk in chunks:
                yield chunk


__all__ = ["SEAT_ADDRESS", "FrontArena", "FrontMatches", "Workers"]
