"""A remote seat's door (arena/server/door.py): answers from another thread reach the
waiting ask past trio's entry queue, in order with what took the hop, under deadlines.

The other thread is a real thread (``trio.to_thread``), the hop a real
:class:`~arena.server.bridge.Hop` into this trio run, the seat the real
:class:`~arena.server.remote.RemoteSeat` with the edge's own conversions.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
import trio
import trio.testing

from arena.game import MatchMachine, MatchSetup, Request, SeatFeed
from arena.referee import TimeControl
from arena.rules import RuleSet
from arena.server.bridge import Hop
from arena.server.limits import Limits
from arena.server.remote import Connection, RemoteSeat
from arena.server.traffic import Outgoing, VerdictMode, Welcome
from arena.server.wire import EventCache, SeatWire
from arena.v1 import arena_pb2 as pb

pytestmark = pytest.mark.skipif(not hasattr(os, "eventfd"), reason="os.eventfd (Linux) missing")
SETUP = MatchSetup(RuleSet.from_mapping({"deals": 1}), 3)
EDGE = SeatWire(EventCache(), VerdictMode.FAULTS_ONLY, Limits())


def welcome(resumed: bool) -> Welcome:
    tc = TimeControl()
    return Welcome(0, "m", SETUP.rules, tc, ("a", "b", "c", "d"), resumed, 1, "lenient", 10)


def seated() -> tuple[RemoteSeat, Request, list[Outgoing]]:
    """A seat with one live (fake) stream, and the request of the match's first decision."""
    seat, sent = RemoteSeat(0, "m", 1000, welcome), list[Outgoing]()

    def send(item: Outgoing) -> bool:
        sent.append(item)
        return True

    assert seat.attach(Connection(1, send, lambda: True, "bot", "1")) is None
    match = MatchMachine(SETUP)
    decision = match.pending()[0]
    return seat, SeatFeed(match).request(decision), sent


def answer(seq: int) -> object:
    return EDGE.answer(pb.BotMessage(action=pb.Action(seq=seq)))


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await trio.sleep(0.001)


async def test_an_answer_from_another_thread_comes_through_the_door() -> None:
    seat, request, _ = seated()
    hop = Hop.to_trio(trio.lowlevel.current_trio_token())
    got: list[object] = []
    async with trio.open_nursery() as nursery:

        async def ask() -> None:
            got.append(await seat.ask(request.decision.seat + 1, request, 1000, 0))

        nursery.start_soon(ask)
        await until(lambda: seat.door.waiting)
        stale, fresh = answer(0), answer(1)  # a late answer first: dropped, in order
        assert await trio.to_thread.run_sync(seat.door.call, hop, seat.deliver, 1, stale)
        assert await trio.to_thread.run_sync(seat.door.call, hop, seat.deliver, 1, fresh)
    assert got == [()]
    assert seat.late_answers == 1
    assert (seat.door.direct, seat.door.hopped, hop.calls) == (2, 0, 0)


async def test_a_call_still_in_the_hop_goes_first() -> None:
    """What took the hop before the ask waited is run before anything at the door: the
    ask waits to be woken by the hop instead (order kept, e.g. an answer then a detach)."""
    runs: list[Callable[[], None]] = []

    def hold(run: Callable[[], None]) -> bool:  # the hop's wake-up, held until we say
        runs.append(run)
        return True

    hop = Hop(hold)
    seat, request, _ = seated()
    assert seat.door.call(hop, seat.deliver, 1, answer(1))  # nobody waits: the hop
    assert seat.door.call(hop, seat.detach, 1)
    got: list[object] = []
    async with trio.open_nursery() as nursery:

        async def ask() -> None:
            got.append(await seat.ask(1, request, 1000, 0))

        nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()
        assert not seat.door.waiting  # two calls in the hop: it may not wait at the door
        runs.pop()()  # the hop's wake-up: the answer, then the detach
    assert got == [()]
    assert seat.conn is None
    assert (seat.door.direct, seat.door.hopped) == (0, 2)


async def test_a_deadline_at_the_door_then_the_hop_again() -> None:
    seat, request, _ = seated()
    hop = Hop.to_trio(trio.lowlevel.current_trio_token())
    with trio.move_on_after(0.05) as scope:
        await seat.ask(1, request, 1000, 0)
    assert scope.cancelled_caught
    assert not seat.door.waiting
    assert await trio.to_thread.run_sync(seat.door.call, hop, seat.deliver, 1, answer(1))
    await until(lambda: hop.calls == 1 and not seat.door.in_hop)
    # the late answer waits in the inbox for the next ask, which reads it at once
    assert await seat.ask(1, request, 1000, 0) == ()


async def test_a_finished_seat_closes_its_door() -> None:
    seat, request, _ = seated()
    with trio.move_on_after(0.01):  # the first wait at the door makes its eventfd
        await seat.ask(1, request, 1000, 0)
    fd = seat.door._fd
    assert fd >= 0
    seat.finished = True
    with pytest.raises(OSError):
        os.fstat(fd)
    hop = Hop.to_trio(trio.lowlevel.current_trio_token())
    assert seat.door.call(hop, seat.detach, 1)  # the hop, never the closed fd
    await until(lambda: seat.conn is None)
    assert (seat.door.direct, seat.door.hopped) == (0, 1)
