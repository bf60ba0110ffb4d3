"""The asyncio ⇄ trio bridge, over a real socket on 127.0.0.1 port 0.

A tiny Arena servicer forwards every BotMessage into trio through a TrioInbox; a trio
task plays referee and answers through each stream's AsyncioOutbox. The client is the
synchronous grpc API in a worker thread, so the process still has exactly one asyncio
loop (the server's).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any

import grpc
import pytest
import trio
import trio.testing
from bridgekit import TrioInbox, serve_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.server.bridge import (
    AsyncioOutbox,
    GrpcServerConfig,
    GrpcServerError,
    GrpcThread,
    Hop,
    call_in_asyncio_nowait,
    call_in_trio_nowait,
    open_grpc_server,
)
from arena.v1 import arena_pb2, arena_pb2_grpc

CONFIG = GrpcServerConfig(service_names=("arena.v1.Arena",), grace=0.5, thread_name="test-grpc")
TEN_SPADES = arena_pb2.Card(suit=arena_pb2.SPADES, rank=arena_pb2.TEN)

# What the servicer hands to trio: a bot message (None = the client finished
# writing) with the stream's outbox, or a Check request with a future to resolve.
Inbound = tuple[arena_pb2.BotMessage | None, AsyncioOutbox[arena_pb2.RefereeMessage]]
CheckJob = tuple[arena_pb2.CheckRequest, "asyncio.Future[arena_pb2.Verdict]"]


class EchoArena(arena_pb2_grpc.ArenaServicer):
    """Forwards everything to trio; holds no logic of its own (STYLE.md habit 14)."""

    def __init__(self, inbox: TrioInbox[Inbound | CheckJob]) -> None:
        self.inbox = inbox

    async def Play(
        self, request_iterator: AsyncIterator[arena_pb2.BotMessage], context: Any
    ) -> AsyncIterator[arena_pb2.RefereeMessage]:
        await context.send_initial_metadata(())
        outbox = AsyncioOutbox[arena_pb2.RefereeMessage]()

        async def pump() -> None:
            try:
                async for message in request_iterator:
                    self.inbox.put_nowait((message, outbox))
            finally:
                self.inbox.put_nowait((None, outbox))

        reader = asyncio.create_task(pump())
        try:
            async for reply in outbox:
                yield reply
        finally:
            reader.cancel()
            outbox.close()

    async def Check(self, request: arena_pb2.CheckRequest, context: Any) -> arena_pb2.Verdict:
        answer: asyncio.Future[arena_pb2.Verdict] = asyncio.get_running_loop().create_future()
        self.inbox.put_nowait((request, answer))
        return await answer


async def echo_referee(
    inbox: TrioInbox[Inbound | CheckJob], loop: asyncio.AbstractEventLoop
) -> None:
    """Welcome each Hello, accept each Action, end each stream the client ends."""
    async for item in inbox:
        if isinstance(item[0], arena_pb2.CheckRequest):
            request, answer = item
            verdict = arena_pb2.Verdict(seq=request.action.seq, accepted=True)
            call_in_asyncio_nowait(loop, answer.set_result, verdict)
            continue
        message, outbox = item
        assert isinstance(outbox, AsyncioOutbox)
        if message is None:
            outbox.close_nowait()
        elif message.HasField("hello"):
            welcome = arena_pb2.Welcome(seat=2, match_id="m-1", protocol=1)
            outbox.send_nowait(arena_pb2.RefereeMessage(welcome=welcome))
        else:
            action = message.action
            verdict = arena_pb2.Verdict(seq=action.seq, accepted=True, played=action.cards)
            outbox.send_nowait(arena_pb2.RefereeMessage(verdict=verdict))


def play_as_bot(target: str) -> list[arena_pb2.RefereeMessage]:
    """A ping-pong bot: wait for initial metadata, Hello, then three Actions one by one."""
    outgoing: queue.Queue[arena_pb2.BotMessage | None] = queue.Queue()

    def requests() -> Iterator[arena_pb2.BotMessage]:
        while (message := outgoing.get()) is not None:
            yield message

    with grpc.insecure_channel(target) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play(requests(), timeout=5)
        call.initial_metadata()  # the handshake of DESIGN.md: wait before writing
        hello = arena_pb2.Hello(token="t", name="echo", version="0", protocol=1)
        outgoing.put(arena_pb2.BotMessage(hello=hello))
        received = [next(call)]
        for seq in (1, 2, 3):
            action = arena_pb2.Action(seq=seq, cards=[TEN_SPADES])
            outgoing.put(arena_pb2.BotMessage(action=action))
            received.append(next(call))
        outgoing.put(None)
        received += list(call)  # the server ends the stream after we stop writing
        check = arena_pb2.CheckRequest(token="t", action=arena_pb2.Action(seq=9))
        received.append(
            arena_pb2.RefereeMessage(
                verdict=arena_pb2_grpc.ArenaStub(channel).Check(check, timeout=5)
            )
        )
    return received


def health_and_services(target: str) -> tuple[int, int, list[str]]:
    with grpc.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        overall = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        arena = health.Check(health_pb2.HealthCheckRequest(service="arena.v1.Arena"), timeout=5)
        ask = reflection_pb2.ServerReflectionRequest(list_services="")
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        (answer,) = list(stub.ServerReflectionInfo(iter([ask]), timeout=5))
        names = [s.name for s in answer.list_services_response.service]
    return overall.status, arena.status, names


def server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == CONFIG.thread_name]


async def test_round_trip_health_reflection_and_clean_shutdown() -> None:
    inbox = TrioInbox[Inbound | CheckJob]()
    servicer = EchoArena(inbox)
    registrations = [partial(arena_pb2_grpc.add_ArenaServicer_to_server, servicer)]
    async with trio.open_nursery() as nursery, open_grpc_server(registrations, CONFIG) as server:
        assert server.port > 0
        assert server.statistics().running
        nursery.start_soon(echo_referee, inbox, server.loop)

        received = await trio.to_thread.run_sync(play_as_bot, server.target)
        kinds = [m.WhichOneof("kind") for m in received]
        assert kinds == ["welcome", "verdict", "verdict", "verdict", "verdict"]
        assert received[0].welcome.seat == 2
        assert [m.verdict.seq for m in received[1:4]] == [1, 2, 3]
        assert list(received[1].verdict.played) == [TEN_SPADES]
        assert received[4].verdict.seq == 9  # the Check RPC went through trio too

        overall, arena, names = await trio.to_thread.run_sync(health_and_services, server.target)
        assert overall == arena == health_pb2.HealthCheckResponse.SERVING
        assert "arena.v1.Arena" in names
        assert "grpc.health.v1.Health" in names
        assert "grpc.reflection.v1alpha.ServerReflection" in names
        nursery.cancel_scope.cancel()

    assert not server.statistics().thread_alive
    assert not server_threads()
    assert inbox.statistics().dropped == 0


async def test_serve_grpc_reports_its_port_through_nursery_start() -> None:
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_grpc, [], CONFIG)
        assert isinstance(server, GrpcThread)
        assert server.port > 0
        nursery.cancel_scope.cancel()
    assert not server.statistics().thread_alive


async def test_a_port_in_use_is_refused_not_shared() -> None:
    async with open_grpc_server([], CONFIG) as first:
        taken = GrpcServerConfig(address=first.target, thread_name="test-grpc")
        with pytest.raises(GrpcServerError, match="failed to start"):
            async with open_grpc_server([], taken):
                pass  # pragma: no cover
    assert not server_threads()


def test_stop_before_start_is_a_no_op_and_start_twice_is_refused() -> None:
    server = GrpcThread([], CONFIG)
    server.stop()
    server.start()
    try:
        with pytest.raises(GrpcServerError, match="only once"):
            server.start()
    finally:
        server.stop()
        server.stop()  # idempotent
    with pytest.raises(GrpcServerError, match="has not started"):
        _ = GrpcThread([], CONFIG).port


# ----------------------------------------------------------------------------- the boxes


async def test_inbox_keeps_order_across_threads_and_ends_on_close() -> None:
    inbox = TrioInbox[int]()

    def produce() -> None:
        for n in range(1000):
            assert inbox.put_nowait(n)
        assert inbox.close_nowait()
        assert not inbox.put_nowait(1000)  # ended: refused, counted

    await trio.to_thread.run_sync(produce)
    assert [n async for n in inbox] == list(range(1000))
    stats = inbox.statistics()
    assert (stats.delivered, stats.dropped, stats.closed) == (1000, 1, True)


async def test_inbox_closed_by_trio_drops_without_crashing_trio() -> None:
    inbox = TrioInbox[str]()
    inbox.close()
    await trio.to_thread.run_sync(inbox.put_nowait, "late")
    await trio.testing.wait_all_tasks_blocked()
    assert inbox.statistics().dropped == 1  # delivered into a closed channel: swallowed


def test_hops_into_a_finished_trio_run_report_false() -> None:
    async def make() -> tuple[TrioInbox[int], trio.lowlevel.TrioToken]:
        return TrioInbox[int](), trio.lowlevel.current_trio_token()

    inbox, token = trio.run(make)
    assert inbox.put_nowait(1) is False
    assert inbox.close_nowait() is False
    assert call_in_trio_nowait(token, print, "never") is False
    assert inbox.statistics().dropped == 1


def test_hops_into_a_closed_asyncio_loop_report_false() -> None:
    loop = asyncio.new_event_loop()
    outbox = AsyncioOutbox[int](loop)
    loop.close()
    assert outbox.send_nowait(1) is False
    assert outbox.close_nowait() is False
    assert call_in_asyncio_nowait(loop, print, "never") is False
    assert outbox.statistics().dropped == 1


async def test_outbox_keeps_order_and_ends_on_close() -> None:
    async with open_grpc_server([], CONFIG) as server:
        outbox = AsyncioOutbox[int](server.loop)
        for n in range(1000):
            assert outbox.send_nowait(n)
        assert outbox.close_nowait()
        assert not outbox.send_nowait(1000)

        async def drain() -> tuple[list[int], bool]:
            got = [n async for n in outbox]
            try:
                await outbox.get()
            except trio.EndOfChannel:
                return got, True  # ends again on every later get()
            return got, False  # pragma: no cover

        future = asyncio.run_coroutine_threadsafe(drain(), server.loop)
        got, ends_again = await trio.to_thread.run_sync(future.result, 5)
        assert got == list(range(1000))
        assert ends_again
        assert outbox.statistics().delivered == 1000


async def test_a_burst_of_hops_into_trio_costs_one_wakeup_and_keeps_order() -> None:
    """What the gRPC thread does when many answers arrive together: one wake-up of
    the referee's thread for the burst, every call run in order, a failing call counted
    and contained (it must never end the trio run)."""
    hop = Hop.to_trio(trio.lowlevel.current_trio_token())
    got: list[int] = []

    def burst() -> None:  # in another thread, while trio is blocked below
        for n in range(100):
            assert hop.call(got.append, n)
        assert hop.call(int, "not a number")  # raises over there: counted, not fatal
        assert hop.call(got.append, 100)

    await trio.to_thread.run_sync(burst)
    await trio.testing.wait_all_tasks_blocked()
    assert got == list(range(101))
    assert (hop.calls, hop.errors) == (102, 1)
    assert 1 <= hop.wakeups < 10  # the calls rode on a few wake-ups, not one each


def test_a_hop_into_a_finished_trio_run_reports_false() -> None:
    hop = trio.run(lambda: _hop_now())
    assert hop.call(print, "never") is False
    assert hop.call(print, "never again") is False  # not armed by the failed call


async def _hop_now() -> Hop:
    return Hop.to_trio(trio.lowlevel.current_trio_token())


async def test_outboxes_on_one_loop_share_its_hop() -> None:
    async with open_grpc_server([], CONFIG) as server:
        first, second = AsyncioOutbox[int](server.loop), AsyncioOutbox[int](server.loop)
        assert first._hopper is second._hopper is Hop.to_asyncio(server.loop)


async def test_outbox_wakes_a_waiting_consumer_and_drops_after_the_consumer_closed() -> None:
    """The outbox's one consumer, already waiting when trio sends, is woken by the hop;
    once the consumer has closed it (the client left), what trio still sends is dropped
    and counted, never kept."""
    async with open_grpc_server([], CONFIG) as server:
        outbox = AsyncioOutbox[int](server.loop)
        future = asyncio.run_coroutine_threadsafe(outbox.get(), server.loop)
        await trio.sleep(0.05)  # the consumer is waiting on its future by now
        assert not future.done()
        assert outbox.send_nowait(7)
        assert await trio.to_thread.run_sync(future.result, 5) == 7

        closed = asyncio.run_coroutine_threadsafe(_close(outbox), server.loop)
        await trio.to_thread.run_sync(closed.result, 5)
        assert not outbox.send_nowait(8)  # refused at once: the consumer has gone
        stats = outbox.statistics()
        assert (stats.delivered, stats.dropped, stats.buffered, stats.closed) == (1, 1, 0, True)


async def _close(outbox: AsyncioOutbox[int]) -> None:
    outbox.close()
