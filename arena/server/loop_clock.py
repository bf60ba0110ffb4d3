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
import contextlib
import selectors
import time
import weakref
from collections.abc import Callable
from contextvars import Context, ContextVar
from typing import Any

# A select() that returned sooner than this did not really wait: a file descriptor was
# already readable when the loop got there (the loop was busy, not idle). Not less: on
# this VM the first epoll_wait after a long busy stretch takes 0.3–1.6 ms to return with
# a socket long readable (tests/test_loop_clock.py), and an iteration taken for a wait
# charges the bot the busy stretch before it. An idle wait shorter than this is taken
# for a busy one: the bound then falls that much earlier, in the bot's favour.
WAITED = 0.003  # s


class IterationClock(selectors.DefaultSelector):
    """The selector of the gRPC thread's loop, keeping the latest iterations' starts."""

    def __init__(self) -> None:
        super().__init__()
        now = time.perf_counter()
        # when the select() of the current iteration and of the two before it returned
        # (perf_counter s), and whether the current one and the one before waited (idle)
        self.began = self.began_1 = self.began_2 = now
        self.idle = self.idle_1 = False
        # a coroutine is being resumed inside the callback that completed its I/O (an
        # eager wake-up, below), not one iteration after it
        self.completing = False

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
        the completion resumes. Resumed by an eager wake-up, in the very iteration that
        drained the completion, the same bound is one iteration later."""
        if self.completing:
            return self.began if self.idle else self.began_1
        return self.began_1 if self.idle_1 else self.began_2


_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, IterationClock] = (
    weakref.WeakKeyDictionary()
)


#: Set in a task (``EAGER_WAKEUP.set(True)``: its own context) for the loop futures
#: created in it to wake it eagerly (:class:`_EagerFuture`).
EAGER_WAKEUP: ContextVar[bool] = ContextVar("arena_eager_wakeup", default=False)


class _EagerFuture(asyncio.Future[Any]):
    """A loop future whose waiters run inside the callback that completes it, when that
    callback is not itself a task's step, instead of on the loop's next pass.

    Why (issue 20): gRPC completes a read by setting a loop future in its wake-up
    socket's reader callback, and asyncio schedules the waiting task for the next pass
    of the loop: per answer, one more pass (a ``select()`` and the loop's bookkeeping,
    ~15 µs) before the reader even looks at it. Only the Play stream's reader asks for
    this (:data:`EAGER_WAKEUP`); what a resumed task does inside that callback is what
    it would have done a pass later. Set from inside a task (a cancellation, another
    stream's code), it schedules its waiters as any future does: a task never runs
    inside another's step.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, clock: IterationClock) -> None:
        super().__init__(loop=loop)
        self._clock = clock
        self._waiting: list[tuple[Callable[[Any], object], Context | None]] = []

    def add_done_callback(
        self, fn: Callable[[Any], object], *, context: Context | None = None
    ) -> None:
        if self.done():
            super().add_done_callback(fn, context=context)
        else:
            self._waiting.append((fn, context))

    def remove_done_callback(self, fn: Callable[[Any], object]) -> int:
        kept = [(f, c) for f, c in self._waiting if f != fn]
        removed = len(self._waiting) - len(kept)
        self._waiting = kept
        return removed + super().remove_done_callback(fn)

    def set_result(self, result: Any) -> None:
        super().set_result(result)
        self._wake()

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        self._wake()

    def cancel(self, msg: Any | None = None) -> bool:
        if not super().cancel(msg=msg):
            return False
        self._wake()
        return True

    def _wake(self) -> None:
        waiting, self._waiting = self._waiting, []
        if not waiting:
            return
        loop = self.get_loop()
        if asyncio.current_task(loop) is not None:
            for fn, context in waiting:
                loop.call_soon(fn, self, context=context)
            return
        clock = self._clock
        clock.completing = True
        try:
            for fn, context in waiting:
                try:
                    if context is None:
                        fn(self)
                    else:
                        context.run(fn, self)
                except (SystemExit, KeyboardInterrupt):
                    raise
                except BaseException as exc:  # as asyncio's Handle._run reports it
                    loop.call_exception_handler(
                        {"message": f"Exception in callback {fn!r}", "exception": exc}
                    )
        finally:
            clock.completing = False


class _ClockedLoop(asyncio.SelectorEventLoop):
    """The gRPC thread's loop: an :class:`IterationClock` as its selector, and eager
    futures for the tasks that ask (:data:`EAGER_WAKEUP`)."""

    def __init__(self, clock: IterationClock) -> None:
        super().__init__(clock)
        self._clock = clock

    def _read_from_self(self) -> None:
        """Drain the self-pipe with one ``recv``, not asyncio's loop of them until
        ``EAGAIN`` (two system calls per wake-up from trio, the second always empty).
        A byte written after this read only makes the next ``select()`` return at once:
        its callback is already queued, so nothing is lost (t22edge)."""
        with contextlib.suppress(BlockingIOError, InterruptedError):
            data = self._ssock.recv(4096)  # type: ignore[attr-defined]
            if data:
                self._process_self_data(data)  # type: ignore[attr-defined]

    def create_future(self) -> asyncio.Future[Any]:
        if EAGER_WAKEUP.get():
            return _EagerFuture(self, self._clock)
        return asyncio.Future(loop=self)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An asyncio loop whose selector is an :class:`IterationClock` (the gRPC thread's)."""
    clock = IterationClock()
    loop = _ClockedLoop(clock)
    _CLOCKS[loop] = clock
    return loop


def running_clock() -> IterationClock | None:
    """The running loop's :class:`IterationClock`, or ``None`` (another loop, or none)."""
    try:
        return _CLOCKS.get(asyncio.get_running_loop())
    except RuntimeError:
        return None
