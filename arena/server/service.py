"""The gRPC servicers (asyncio thread): authenticate, translate, hand over, stream back.

No rule or game logic lives here (STYLE.md habit 14). Each method is short: it finds
the seat or match, crosses to the trio thread through the bridge, and writes what
comes back. A bad token gets ``UNAUTHENTICATED``, a finished match's token
``FAILED_PRECONDITION`` (as does ``Check`` with no decision pending); the server sends its
initial metadata as soon as it accepts a stream, so the status reaches the client reliably.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import grpc
import structlog
import trio

from arena.errors import ArenaError
from arena.game import Event
from arena.referee import FaultPolicy, TimeControl
from arena.server import convert, guard
from arena.server.access import Access, Refusal, Role
from arena.server.archive import info_from_record, list_page, live_info, record_path
from arena.server.bridge import AsyncioOutbox, Hop, run_in_trio
from arena.server.host import (
    PROTOCOL,
    HostedMatch,
    MatchHost,
    MatchSpec,
    MatchState,
    NothingToCheck,
)
from arena.server.limits import (
    ByteGauge,
    LimitExceeded,
    client_of,
    page_asked,
    page_token,
    string_problem,
)
from arena.server.loop_clock import EAGER_WAKEUP
from arena.server.play_writer import PlayWriter
from arena.server.remote import MATCH_OVER, Connection, RemoteSeat
from arena.server.spectate import DelayedFeed, SpectatorDelay, spectator_record
from arena.server.traffic import Answer, CheckVerdict, Malformed, Outgoing, VerdictMode
from arena.server.wire import EventCaches, SeatWire, candidate_of, check_verdict_to_pb
from arena.text import clean_name
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

log = structlog.get_logger()
HELLO_TIMEOUT = 5.0
Ctx = grpc.aio.ServicerContext[Any, Any]
EOF: object = grpc.aio.EOF  # type: ignore[attr-defined]  # missing from the stubs
R = TypeVar("R")


class ArenaService(pb_grpc.ArenaServicer):
    """The bots' service: ``Play`` (one stream per seat) and ``Check`` (a dry run)."""

    def __init__(
        self,
        host: MatchHost,
        trio_token: trio.lowlevel.TrioToken,
        caches: EventCaches | None = None,
    ) -> None:
        self.host = host
        self.trio = trio_token
        self.hop = Hop.to_trio(trio_token)  # answers cross to the referee, batched
        self.caches = caches or EventCaches()  # each event converted once per match
        self._ids = itertools.count(1)
        # (bytes read, bytes written) of the seats' streams, for the metrics (--http)
        self.traffic: Callable[[int, int], None] | None = None

    # Play uses the context's read()/write() API: a coroutine, not a response generator.
    async def Play(self, request_iterator: Any, context: Ctx) -> None:  # type: ignore[override]
        await context.send_initial_metadata(())
        hello = await self._hello(context)
        found = self.host.tokens.lookup(hello.token)
        if found is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        hosted, seat_no = found
        seat = hosted.remote(seat_no)
        assert seat is not None
        seat.buffer_limit = self.host.limits.seat_buffer_bytes
        mode = VerdictMode.EVERY_ANSWER
        if hello.verdicts == pb.VERDICT_FAULTS_ONLY:
            mode = VerdictMode.FAULTS_ONLY
        edge = SeatWire(self.caches.of(hosted.id), mode, self.host.limits, context.peer())
        writer = PlayWriter[Outgoing](partial(self._write, context, edge))
        conn = Connection(
            next(self._ids),
            writer.send_nowait,
            writer.close_nowait,
            clean_name(hello.name, self.host.limits.max_name),
            clean_name(hello.version, self.host.limits.max_name),
            mode,
        )
        error = await run_in_trio(self.trio, seat.attach, conn)
        if error is not None:
            over = error.startswith(MATCH_OVER)
            code = grpc.StatusCode.FAILED_PRECONDITION if over else grpc.StatusCode.ALREADY_EXISTS
            await context.abort(code, error)
        reader = asyncio.create_task(self._read(context, seat, conn.id, writer, edge))
        try:
            await writer.run()  # the writes start in the hop's callback (play_writer.py)
        finally:
            reader.cancel()
            seat.door.call(self.hop, seat.detach, conn.id)

    def _write(self, context: Ctx, edge: SeatWire, item: Outgoing) -> Coroutine[Any, Any, None]:
        data = edge.encode(item)  # a request starts the bot's clock here
        if self.traffic is not None:
            self.traffic(0, len(data))
        return context.write(data)

    async def _hello(self, context: Ctx) -> pb.Hello:
        try:
            first = await asyncio.wait_for(context.read(), HELLO_TIMEOUT)
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, f"no Hello within {HELLO_TIMEOUT:g}s"
            )
        except Exception as exc:  # undecodable bytes
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"unreadable message: {type(exc).__name__}"
            )
        if first is EOF or not first.HasField("hello"):
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "the first message must be a Hello with a seat token",
            )
        hello: pb.Hello = first.hello
        too_long = string_problem(hello, self.host.limits, guard.CLIPPED)
        if too_long is not None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Hello.{too_long}")
        if hello.protocol not in (0, PROTOCOL):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol {hello.protocol} unsupported; this server speaks 1",
            )
        return hello

    async def _read(
        self,
        context: Ctx,
        seat: RemoteSeat,
        conn_id: int,
        writer: PlayWriter[Outgoing],
        edge: SeatWire,
    ) -> None:
        """Forward every message to the seat; the end of the stream ends the connection.

        Bounded (docs/limits.md): each message is converted to what the referee reads
        (:meth:`SeatWire.answer`: at most ``max_cards`` cards, bounded strings), and past
        ``connection_buffer_bytes`` not yet taken by the referee this stops reading, so
        HTTP/2 flow control holds the client back.
        """
        limits = self.host.limits
        gauge = ByteGauge()
        EAGER_WAKEUP.set(True)  # resumed in gRPC's completion callback (loop_clock.py)
        try:
            while True:
                message = await context.read()
                if message is EOF:
                    break
                if self.traffic is not None:
                    self.traffic(message.ByteSize(), 0)
                item = edge.answer(message)
                size = item.size if isinstance(item, Answer) else 64
                while gauge.in_flight > limits.connection_buffer_bytes:
                    await asyncio.sleep(0.005)
                gauge.read += size  # only this thread writes it
                if not seat.door.call(self.hop, guard.deliver, seat, conn_id, item, gauge, size):
                    gauge.read -= size  # the referee has stopped: nothing will take it
                    break
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # undecodable bytes, a reset: the stream is unusable
            reason = f"unreadable message: {type(exc).__name__}"
            seat.door.call(self.hop, seat.deliver, conn_id, Malformed(reason))
            context.set_code(grpc.StatusCode.INVALID_ARGUMENT)
            context.set_details(reason)
        writer.close_nowait()  # ends Play's writes, which detaches the seat

    async def Check(self, request: pb.CheckRequest, context: Ctx) -> pb.Verdict:
        found = self.host.tokens.lookup(request.token)
        if found is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")
        hosted, seat = found
        try:
            verdict: CheckVerdict = await run_in_trio(
                self.trio, self.host.check, hosted.id, seat, candidate_of(request.action)
            )
        except LimitExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except NothingToCheck as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        return check_verdict_to_pb(verdict)


class MatchesService(pb_grpc.MatchesServicer):
    """The organisers' service: create, list, get, cancel, watch, fetch the record.

    Who may call which method is checked before it runs (:mod:`arena.server.access`);
    ``Watch`` and ``FetchRecord`` also ask the caller's role, to delay and redact for
    everyone but the organiser.
    """

    def __init__(
        self,
        host: MatchHost,
        trio_token: trio.lowlevel.TrioToken,
        access: Access | None = None,
        caches: EventCaches | None = None,
    ) -> None:
        self.host = host
        self.trio = trio_token
        self.access = access or Access.internal()  # nobody knows its token: closed
        self.caches = caches or EventCaches()  # shared with the Play streams (app.py)
        self.watching = guard.Counter()  # Watch streams per client

    async def _role(self, context: Ctx) -> Role:
        try:
            return self.access.role_of(context.invocation_metadata())
        except Refusal as refusal:
            await context.abort(refusal.code, refusal.message)
            raise  # unreachable: abort raises

    async def Create(self, request: pb.CreateMatchRequest, context: Ctx) -> pb.CreateMatchResponse:
        await guard.strings(request, self.host.limits, context)
        problem = guard.records_ready(self.host)
        if problem is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, problem)
        try:
            rules = convert.rules_from_pb(dict(request.rules))
            if request.deals:
                rules = rules.from_mapping({"deals": request.deals}, rules)
            policy = FaultPolicy.parse(
                request.policy or None, max_faults=request.max_faults or None
            )
            spec = MatchSpec(
                rules=rules,
                seed=request.seed if request.HasField("seed") else None,
                time_control=convert.time_control_from_pb(request.time_control, TimeControl()),
                policy=policy,
                seat_names=tuple(request.seat_names),
                connect_timeout=self.host.limits.join_timeout_s,
            )
            if spec.seat_names and len(spec.seat_names) != 4:
                raise ArenaError("seat_names needs 4 names, or none")
        except ArenaError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        try:
            hosted: HostedMatch = await run_in_trio(
                self.trio, self.host.create, spec, client_of(context.peer())
            )
        except LimitExceeded as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        return pb.CreateMatchResponse(
            match_id=hosted.id, seat_tokens=[t or "" for t in hosted.tokens]
        )

    async def List(self, request: pb.ListMatchesRequest, context: Ctx) -> pb.ListMatchesResponse:
        """One page of the matches in memory, oldest first (``page_size``, default and
        maximum from the limits; ``next_page_token`` empty on the last page)."""
        limits = self.host.limits
        try:
            after, size = page_asked(request.page_token, request.page_size, limits)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        wanted = set(request.states)

        infos, more = await run_in_trio(
            self.trio, list_page, list(self.host.matches.values()), after, size, wanted
        )
        return pb.ListMatchesResponse(
            matches=infos, next_page_token=page_token(more) if more else ""
        )

    async def Get(self, request: pb.GetMatchRequest, context: Ctx) -> pb.MatchInfo:
        return await self._info(request.match_id, context, cancel=False)

    async def Cancel(self, request: pb.CancelMatchRequest, context: Ctx) -> pb.MatchInfo:
        """Cancel, then answer with the final state (the match stops at its next await)."""
        info = await self._info(request.match_id, context, cancel=True, reason=request.reason)
        for _ in range(500):  # at most ~10 s
            if info.state not in (pb.WAITING, pb.RUNNING):
                break
            await asyncio.sleep(0.02)
            info = await self._info(request.match_id, context, cancel=False)
        return info

    async def _info(
        self, match_id: str, context: Ctx, cancel: bool, reason: str = ""
    ) -> pb.MatchInfo:
        def job() -> pb.MatchInfo:
            hosted = (
                self.host.cancel(match_id, reason or "cancelled")
                if cancel
                else self.host.get(match_id)
            )
            return live_info(hosted)

        await guard.strings(pb.GetMatchRequest(match_id=match_id), self.host.limits, context)
        await guard.strings(pb.CancelMatchRequest(reason=reason), self.host.limits, context)
        try:
            return await run_in_trio(self.trio, job)
        except KeyError:
            path = record_path(self.host.records, match_id)
            if path is None:
                await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {match_id!r}")
            assert path is not None
            return await asyncio.to_thread(info_from_record, path)  # forgotten: from disk

    async def Watch(self, request: pb.WatchRequest, context: Ctx) -> AsyncIterator[pb.Event]:
        """The match's public events; bounded per client, per match and in backlog, and
        unsubscribed as soon as the client goes (docs/limits.md)."""
        limits = self.host.limits
        await guard.strings(request, limits, context)
        # Spectators are kept --spectator-delay behind; the organiser sees it live.
        live = await self._role(context) is Role.ORGANISER
        delayed = DelayedFeed(SpectatorDelay() if live else self.access.spectator_delay)
        client = client_of(context.peer())
        if not self.watching.acquire(client, limits.watches_per_client):
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"you already watch {limits.watches_per_client} streams (--watches-per-client)",
            )
        outbox = AsyncioOutbox[list[tuple[int, Event]] | None | guard.Overflow]()
        forward = guard.WatchForwarder(self.host, request.match_id, outbox, limits)
        forward.on_release(self.trio, self.watching, client)
        context.add_done_callback(forward.gone)  # type: ignore[arg-type]  # the stubs' alias
        try:
            try:
                past = await run_in_trio(self.trio, forward.subscribe)
            except KeyError:
                await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
            except LimitExceeded as exc:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            cache = self.caches.of(request.match_id)  # converted once for seats and spectators
            for index, event in delayed.push(past):
                if index >= request.from_index:
                    yield cache.get(index, event)
            async for batch in outbox:
                if isinstance(batch, guard.Overflow):
                    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, batch.reason)
                    return  # unreachable: abort raises
                for index, event in delayed.close() if batch is None else delayed.push(batch):
                    if index >= request.from_index:
                        yield cache.get(index, event)
                if batch is None:
                    return
        finally:
            forward.gone()

    async def FetchRecord(
        self, request: pb.FetchRecordRequest, context: Ctx
    ) -> AsyncIterator[pb.RecordChunk]:
        def where() -> tuple[str, MatchState]:
            hosted = self.host.get(request.match_id)
            return hosted.record, hosted.state

        await guard.strings(request, self.host.limits, context)
        role = await self._role(context)
        try:
            record, state = await run_in_trio(self.trio, where)
        except KeyError:
            path = record_path(self.host.records, request.match_id)
            if path is None:
                await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
            record, state = str(path), MatchState.FINISHED  # forgotten: read from disk
        running = state in (MatchState.WAITING, MatchState.RUNNING)
        if running and request.full and role is not Role.ORGANISER:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "only the organiser may fetch the full record of a running match",
            )
        if not record or not Path(record).exists():
            await context.abort(grpc.StatusCode.NOT_FOUND, "this match has no record on disk")
        data = await asyncio.to_thread(Path(record).read_bytes)
        if running and request.full:
            log.warning("full_record_of_running_match_fetched", match_id=request.match_id)
        elif running:
            # A running match: its hidden cards stay hidden (docs/security.md).
            delay = SpectatorDelay() if role is Role.ORGANISER else self.access.spectator_delay
            lines = await asyncio.to_thread(spectator_record, data, delay)
            for n, line in lines:
                yield pb.RecordChunk(index=n, line=line)
            return
        for index, line in enumerate(data.decode("utf-8").splitlines()):
            yield pb.RecordChunk(index=index, line=line)
