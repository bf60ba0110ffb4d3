"""The gRPC loop's arrival bound (arena/server/loop_clock.py) on a real asyncio loop.

A reader coroutine awaits a socket the way the Play stream awaits gRPC's wake-up socket:
a reader callback completes a future and the coroutine resumes one iteration later. A
thread writes the "answer" at a known time; the loop is either blocked (a callback that
holds it, as a loop serving hundreds of streams does) or idle.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from arena.server.loop_clock import EAGER_WAKEUP, IterationClock, new_event_loop, running_clock

BLOCK = 0.2  # s the loop is held
WRITE_AT = 0.05  # s into the block (or into the idle wait) the answer is written


def _busy(seconds: float) -> None:
    """Hold the thread on a CPU, as a busy loop does. (The first ``select()`` after it
    can take a millisecond or more to return with the socket long ready, busy or asleep:
    loop_clock.WAITED.)"""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _arrival(block: bool, eager: bool) -> tuple[float, float, float, float]:
    """(asked, written, read, arrived): when the wait began, when the thread wrote, when
    the reading coroutine resumed, and the clock's bound then. ``eager``: the reader asks
    for eager wake-ups, as the Play stream's does (it resumes in the reader callback)."""
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    written: list[float] = []

    def write_later() -> None:
        time.sleep(WRITE_AT)
        written.append(time.perf_counter())
        theirs.send(b"x")

    async def main() -> tuple[float, float, float, float]:
        loop = asyncio.get_running_loop()
        clock = running_clock()
        assert isinstance(clock, IterationClock)
        if eager:
            EAGER_WAKEUP.set(True)
        await asyncio.sleep(0.01)  # a few quiet iterations first
        asked = time.perf_counter()
        threading.Thread(target=write_later).start()
        if block:  # the loop held, busy (as one serving hundreds of streams): no select()
            loop.call_soon(_busy, BLOCK)
        await loop.sock_recv(ours, 1)
        read, arrived = time.perf_counter(), clock.arrived()
        return asked, written[0], read, arrived

    loop = new_event_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()
        ours.close()
        theirs.close()


@pytest.mark.parametrize("eager", [False, True])
def test_a_blocked_loop_is_not_charged(eager: bool) -> None:
    asked, written, read, arrived = _arrival(block=True, eager=eager)
    assert read - written >= BLOCK - WRITE_AT - 0.01  # it did wait out the block
    assert arrived <= written  # ...which is not counted
    assert arrived >= asked - 0.005  # and not earlier than the iteration that held it


@pytest.mark.parametrize("eager", [False, True])
def test_an_idle_loop_charges_the_whole_wait(eager: bool) -> None:
    asked, written, read, arrived = _arrival(block=False, eager=eager)
    assert arrived >= written - 0.002  # the idle wait before the answer is not credited
    assert arrived - asked >= WRITE_AT - 0.002
    assert arrived <= read


def test_no_clock_outside_the_grpc_loop() -> None:
    assert running_clock() is None
    assert asyncio.run(_running()) is None


async def _running() -> IterationClock | None:
    return running_clock()


def test_an_eager_wakeup_resumes_inside_the_completing_callback_never_inside_a_task() -> None:
    """Set from a plain callback (gRPC's completion), the waiting task runs inside it;
    set from a task's step (a cancellation, another stream), it is scheduled as usual."""
    order: list[str] = []

    async def waiter(fut: asyncio.Future[int]) -> None:
        order.append(f"resumed {await fut}")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        EAGER_WAKEUP.set(True)
        first, second = loop.create_future(), loop.create_future()
        assert type(first) is not asyncio.Future  # the eager kind
        one = asyncio.create_task(waiter(first))
        two = asyncio.create_task(waiter(second))
        await asyncio.sleep(0)  # both wait now

        def complete() -> None:
            first.set_result(1)
            order.append("callback done")

        loop.call_soon(complete)
        await one
        second.set_result(2)  # inside this task's step: scheduled, not run here
        order.append("step done")
        await two
        cancelled = loop.create_future()
        three = asyncio.create_task(waiter(cancelled))
        await asyncio.sleep(0)
        three.cancel()  # a task's cancellation reaches it as ever
        with pytest.raises(asyncio.CancelledError):
            await three

    loop = new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert order == ["resumed 1", "callback done", "step done", "resumed 2"]
