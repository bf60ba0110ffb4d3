"""asyncio → one waiting trio task, past trio's entry queue: a remote seat's own door.

The bridge's :class:`~arena.server.bridge.Hop` crosses into trio with
``TrioToken.run_sync_soon``: a write to trio's wake-up socket, then trio's entry-queue
task wakes (drains the socket, runs the call, waits on the socket again), and the call
reschedules the referee's task, which runs one scheduler pass later. Measured on the
trio thread per round trip (docs/architecture.md, "Thread model"): ~65–90 µs that way,
~25–35 µs when the waiting task itself waits on an ``eventfd`` that the asyncio thread
writes — one task step and one scheduler pass fewer per decision.

A :class:`SeatDoor` is that fd, for one seat. The asyncio side sends each of the seat's
calls (its answers, its detach) through :meth:`SeatDoor.call`: while the seat's task
waits at the door (:meth:`wait`), the call is queued here and the fd written once per
wait; otherwise it goes through the hop as before. Order is kept: the task goes to the
door only when none of the seat's calls is still in the hop (:attr:`_hopped`), and
the choice on either side is made under one lock. Linux only (``os.eventfd``); where
it is missing, or no file descriptor is left, every call takes the hop.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import trio

from arena.server.bridge import Hop

_Call = tuple[Callable[..., object], tuple[Any, ...]]
T = TypeVar("T")


class SeatDoor:
    """One seat's door: calls from any thread, run by the seat's waiting trio task."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: deque[_Call] = deque()
        self._waiting = False  # a trio task waits on the fd: calls queue here
        self._hopped = 0  # calls sent through the hop and not yet run (they go first)
        self._fd = -1  # made at the first wait (a seat never asked holds none)
        self._usable = hasattr(os, "eventfd")  # False once closed, or out of descriptors
        self._finalizer: weakref.finalize[[int], SeatDoor] | None = None
        self._writing = 0  # writes to the fd in flight (it is closed after the last)
        self.direct = 0  # calls that came through the door
        self.hopped = 0  # calls that took the hop
        self.errors = 0

    @property
    def waiting(self) -> bool:
        """Whether the seat's task waits at the door now (read on the trio thread)."""
        return self._waiting

    @property
    def in_hop(self) -> int:
        """How many of the seat's calls took the hop and have not run yet."""
        return self._hopped

    def call(self, hop: Hop, fn: Callable[..., object], *args: Any) -> bool:
        """Run ``fn(*args)`` on the trio thread (from any thread), in order with the
        seat's other calls. ``False``: the trio run has finished and it never runs."""
        with self._lock:
            waiting = self._waiting
            if waiting:
                self._calls.append((fn, args))
                self.direct += 1
                fd = self._fd if len(self._calls) == 1 else -1  # the first call wakes
                self._writing += fd >= 0
            else:
                self._hopped += 1
                self.hopped += 1
        if waiting:
            if fd >= 0:
                # outside the lock: a system call lets the trio thread run, which must
                # not then block on the lock (a convoy: two more context switches per
                # answer). Written after the task took the calls: a spurious wake-up.
                os.eventfd_write(fd, 1)
                with self._lock:
                    self._writing -= 1
                    if not self._writing and self._fd < 0:
                        self._release()  # closed meanwhile: the last writer closes it
            return True
        if hop.call(self._run_hopped, fn, args):
            return True
        with self._lock:
            self._hopped -= 1
        return False

    def _run_hopped(self, fn: Callable[..., object], args: tuple[Any, ...]) -> None:
        with self._lock:
            self._hopped -= 1
        fn(*args)  # the hop catches and counts an exception

    def poke(self) -> None:
        """Wake the task waiting at the door (trio thread: something arrived by another
        way, e.g. a reconnection through ``run_in_trio``)."""
        if self._waiting:
            os.eventfd_write(self._fd, 1)

    async def wait(self) -> bool:
        """Wait at the door until a call or a :meth:`poke` comes, and run the calls.

        Returns ``False`` at once if the task cannot wait here now (a call of the seat
        is still in the hop, or the door is closed): then wait the usual way, to be
        woken by that call. Cancellable; the calls that came are run either way.
        """
        if self._fd < 0 and not self._open():
            return False
        with self._lock:
            if self._hopped:
                return False
            self._waiting = True
        woken = False
        try:
            await trio.lowlevel.wait_readable(self._fd)
            woken = True
        finally:
            with self._lock:
                self._waiting = False
                calls = self._calls
                if calls:  # taken whole: a fresh deque for later calls, no copy
                    self._calls = deque()
            if woken:  # readable, so the count is > 0 (cancelled: one spurious wake later)
                try:
                    os.eventfd_read(self._fd)
                except BlockingIOError:  # never expected; must not end the ask
                    self.errors += 1
            for fn, args in calls:
                try:
                    fn(*args)
                except Exception:  # as in the hop: nothing may escape into trio
                    self.errors += 1
        return True

    def _open(self) -> bool:
        """Make the eventfd; ``False`` if the door is closed or no descriptor is left
        (a server near its open-files limit: the hop does it all, as before)."""
        if not self._usable:
            return False
        try:
            fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        except OSError:
            self._usable = False
            return False
        self._finalizer = weakref.finalize(self, os.close, fd)
        self._fd = fd
        return True

    def close(self) -> None:
        """On the trio thread, when the seat is done (nobody waits at the door): later
        calls all take the hop; the fd is closed now, or by a write still in flight."""
        with self._lock:
            self._fd, self._usable = -1, False
            if not self._writing:
                self._release()

    def _release(self) -> None:
        """Close the fd, once (under the lock)."""
        if self._finalizer is not None:
            self._finalizer()


class DoorInbox(Generic[T]):
    """What reaches one trio consumer (a remote seat's asking task) from its stream, in
    order. :meth:`put` runs on the trio thread (a call the door or the hop brought);
    :meth:`get`, by the one consumer, waits at the :class:`SeatDoor` when it can, else
    parks to be woken by the next :meth:`put` (a deque and a parked task: no memory
    channel's statistics per look, no extra yield)."""

    __slots__ = ("_items", "_waiter", "door")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._waiter: trio.lowlevel.Task | None = None
        self.door = SeatDoor()

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: T) -> None:
        """Queue ``item`` and wake the consumer if it waits for one."""
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            trio.lowlevel.reschedule(waiter)
        elif self.door.waiting:
            self.door.poke()

    async def get(self) -> T:
        """The next item; waits (cancellably) only if none is queued. One consumer."""
        while not self._items:
            if not await self.door.wait():
                self._waiter = trio.lowlevel.current_task()
                await trio.lowlevel.wait_task_rescheduled(self._abort)
        return self._items.popleft()

    def _abort(self, _: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
        self._waiter = None
        return trio.lowlevel.Abort.SUCCEEDED


__all__ = ["DoorInbox", "SeatDoor"]
