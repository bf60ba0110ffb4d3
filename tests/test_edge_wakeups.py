"""The gRPC thread's wake-ups from other threads (t22edge): its loop drains the self-pipe
with one ``recv`` (arena/server/loop_clock.py), so no call made from another thread may
be lost or delayed, whatever the burst, and the loop must not spin on a leftover byte.

Real loops on real threads: a trio run hops calls into the gRPC thread's loop as the
referee does (``Hop.to_asyncio``), and plain threads flood ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import threading
import time

import trio

from arena.server.bridge import Hop
from arena.server.loop_clock import IterationClock, new_event_loop, running_clock


def _loop_thread() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    return loop, thread


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def _passes(loop: asyncio.AbstractEventLoop) -> list[int]:
    """A counter of the loop's ``select()`` calls (its passes), read from any thread."""
    count = [0]

    async def install() -> None:
        clock = running_clock()
        assert isinstance(clock, IterationClock)
        select = clock.select

        def counted(timeout: float | None = None) -> list[tuple[object, int]]:
            count[0] += 1
            return select(timeout)

        clock.select = counted  # type: ignore[method-assign]

    asyncio.run_coroutine_threadsafe(install(), loop).result(5)
    return count


def test_a_flood_of_threadsafe_calls_all_run_in_order() -> None:
    """More calls than one ``recv`` drains (4096 bytes) from four threads at once: every
    call runs, each thread's in its order, and the loop then sleeps (no spinning)."""
    loop, thread = _loop_thread()
    seen: list[tuple[int, int]] = []
    n = 3000

    def flood(k: int) -> None:
        for i in range(n):
            loop.call_soon_threadsafe(seen.append, (k, i))

    floods = [threading.Thread(target=flood, args=(k,)) for k in range(4)]
    for t in floods:
        t.start()
    for t in floods:
        t.join()
    deadline = time.monotonic() + 5
    while len(seen) < 4 * n and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(seen) == 4 * n
    for k in range(4):
        assert [i for kk, i in seen if kk == k] == list(range(n))
    passes = _passes(loop)
    time.sleep(0.3)
    before = passes[0]
    time.sleep(0.3)
    assert passes[0] - before <= 1  # idle: a leftover byte costs one pass, not a spin
    _stop(loop, thread)


def test_hops_from_trio_arrive_in_order_with_wakeups_batched() -> None:
    """The referee's path: a trio task hops calls into the loop, some in bursts, some one
    at a time waiting for each to run (a decision's request); all run, in order."""
    loop, thread = _loop_thread()
    seen: list[int] = []
    hop = Hop.to_asyncio(loop)

    async def main() -> None:
        for i in range(200):
            ran = threading.Event()
            hop.call(seen.append, i)
            hop.call(ran.set)
            await trio.to_thread.run_sync(ran.wait, 5)
        for i in range(200, 5200):  # a burst: one wake-up carries many calls
            hop.call(seen.append, i)
        done = threading.Event()
        hop.call(done.set)
        await trio.to_thread.run_sync(done.wait, 5)

    trio.run(main)
    assert seen == list(range(5200))
    assert hop.errors == 0
    assert hop.wakeups < hop.calls
    _stop(loop, thread)
