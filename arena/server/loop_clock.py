"""When an answer reached the gRPC edge, as early as its asyncio loop can tell.

A bot is charged from its request's write to its answer's arrival at the edge
(docs/architecture.md, "Fair clocks"). gRPC gives no arrival timestamp: its poller thread
puts the finished read in a mailbox and wakes the loop, and the loop runs every callback
already queued before it drains the mailbox, then resumes the reading coroutine one
iteration later. Under 250 matches one iteration can last 100–600 ms, so reading the
clock where the coroutine resumes charges the bot for the server's busy loop.

:class:`IterationClock` is the loop's selector, timing each ``select()``: the start of
every iteration and whether the loop had to wait in it. Code resumed by an I/O completion
runs one iteration after the callback that completed it; that callback drained
everything the poller had queued since the drain of the iteration before. So the answer
reached the loop after that earlier drain, hence after the start of the iteration two
back — unless the loop sat idle in ``select()`` in between, in which case it was the
answer's wake-up (or one just before it) that ended the wait: the start of the previous
iteration. :meth:`IterationClock.arrived` returns that bound.

Trade-off, and why a bot cannot exploit it: the bound is not later than the answer's
arrival in the loop's mailbox (give or take the loop thread's own wake-up after an idle
wait), so the loop's backlog is not charged; it can be earlier by about one iteration —
the loop's busy time on other streams, which one bot cannot stretch (its messages are
bounded, a flood is dropped: docs/limits.md) — so a bot may be charged that much less
than its time, never more. What it cannot see stays charged: the wait before the
mailbox, in gRPC's own threads (docs/architecture.md, "Fair clocks under load"). The trio
deadline is untouched: a bot that does not answer in its decision time plus bank still
times out at that deadline, whatever the loop's lag.
"""

from __future__ import annotations

import asyncio
import selectors
import time
import weakref
from typing import Any

# A select() that returned sooner than this did not really wait: a file descriptor was
# already readable when the loop got there (the loop was busy, not idle).
WAITED = 0.0005  # s


class IterationClock(selectors.DefaultSelector):
    """The selector of the gRPC thread's loop, keeping the latest iterations' starts."""

    def __init__(self) -> None:
        super().__init__()
        now = time.perf_counter()
        # when the select() of the current iteration and of the two before it returned
        # (perf_counter s), and whether the current one and the one before waited (idle)
        self.began = self.began_1 = self.began_2 = now
        self.idle = self.idle_1 = False

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        entered = time.perf_counter()
        ready: list[tuple[Any, int]] = super().select(timeout)
        now = time.perf_counter()
        self.began_2, self.began_1, self.began = self.began_1, self.began, now
        self.idle_1, self.idle = self.idle, now - entered >= WAITED
        return ready

    def arrived(self) -> float:
        """A time the I/O completion just seen reached the loop after, as late as the
        loop can tell (perf_counter s): call it first thing where the coroutine awaiting
        the completion resumes."""
        return self.began_1 if self.idle_1 else self.began_2


_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, IterationClock] = (
    weakref.WeakKeyDictionary()
)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An asyncio loop whose selector is an :class:`IterationClock` (the gRPC thread's)."""
    clock = IterationClock()
    loop = asyncio.SelectorEventLoop(clock)
    _CLOCKS[loop] = clock
    return loop


def running_clock() -> IterationClock | None:
    """The running loop's :class:`IterationClock`, or ``None`` (another loop, or none)."""
    try:
        return _CLOCKS.get(asyncio.get_running_loop())
    except RuntimeError:
        return None
