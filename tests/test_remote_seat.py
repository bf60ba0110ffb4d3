"""RemoteSeat without the network: a fake stream, the real referee, virtual time.

The servicer's three calls (``attach``, ``deliver``, ``detach``) are made directly on
the trio thread, as the bridge would, with the edge's own conversions
(:class:`arena.server.wire.SeatWire`), and a fake bot answers what the seat sends it;
the other three seats are in-process bots. So disconnections and reconnections are
tested at exact times (STYLE.md habit 9); ``test_hostile.py`` does the same for real.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
import structlog
import trio
import trio.testing

from arena.bots import make_bot
from arena.game import MatchMachine, MatchSetup, SeatFeed
from arena.referee import FaultKind, LocalSeat, Referee, Seat, TimeControl
from arena.rules import RuleSet
from arena.server.limits import Limits
from arena.server.remote import Connection, RemoteSeat
from arena.server.traffic import Outgoing, VerdictMode, Welcome
from arena.server.wire import EventCache, SeatWire
from arena.v1 import arena_pb2 as pb

SETUP = MatchSetup(RuleSet.from_mapping({"deals": 1}), 3)


@pytest.fixture(autouse=True)
def default_logging() -> Iterator[None]:
    """structlog's defaults: a CLI test may have left it writing to a closed stream."""
    config = structlog.get_config()
    structlog.reset_defaults()
    yield
    structlog.configure(**config)


class Wire:
    """One fake stream: what the seat sends to the bot arrives in ``inbox``."""

    ids = iter(range(1, 1000))

    def __init__(self, mode: VerdictMode = VerdictMode.EVERY_ANSWER) -> None:
        self.id = next(self.ids)
        self.mode = mode
        self.edge = SeatWire(EventCache(), mode, Limits())
        self.send_in, self.inbox = trio.open_memory_channel[pb.RefereeMessage](math.inf)
        self.seen: list[pb.RefereeMessage] = []  # what the fake bot read

    def connection(self) -> Connection:
        return Connection(self.id, self._send, lambda: True, "fake", "0", self.mode)

    def _send(self, item: Outgoing) -> bool:
        self.send_in.send_nowait(self.edge.message(item))
        return True

    def answer(self, seat: RemoteSeat, seq: int, cards: object = ()) -> None:
        """The bot's Action, as the edge hands it to the seat."""
        message = pb.BotMessage(action=pb.Action(seq=seq, cards=cards))  # type: ignore[arg-type]
        seat.deliver(self.id, self.edge.answer(message))


def welcome(resumed: bool) -> Welcome:
    rules, tc = SETUP.rules, TimeControl()
    return Welcome(1, "m", rules, tc, ("a", "b", "c", "d"), resumed, 1, "lenient", 10)


async def test_an_answer_that_came_before_the_disconnection_counts(
    autojump_clock: trio.testing.MockClock,
) -> None:
    seat, wire = RemoteSeat(1, "m", 1000, welcome), Wire()
    assert seat.attach(wire.connection()) is None
    match = MatchMachine(SETUP)
    request = SeatFeed(match).request(match.pending()[0])
    answers: list[object] = []

    async def ask() -> None:
        answers.append(await seat.ask(5, request, 1000, 0))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()
        wire.answer(seat, 4)  # a late answer wakes the ask...
        wire.answer(seat, 5)  # ...the real one follows...
        seat.detach(wire.id)  # ...and the bot is gone before the ask reads it
    assert answers == [()]  # a pass, not a disconnection
    assert seat.late_answers == 1


async def _answer_with_fallbacks(wire: Wire, seat: RemoteSeat) -> None:
    """The fake bot: answer every request with the referee's fallback."""
    async for message in wire.inbox:
        wire.seen.append(message)
        if message.HasField("request"):
            wire.answer(seat, message.request.seq, message.request.fallback.cards)


def _table(remote: RemoteSeat) -> list[Seat]:
    table: list[Seat] = [LocalSeat(make_bot("random", s)) for s in range(4)]
    table[1] = remote
    return table


@pytest.mark.parametrize(("grace_ms", "charged_at"), [(10_000, 1.5), (400, 0.4)])
async def test_an_absent_seat_is_charged_once(
    autojump_clock: trio.testing.MockClock, grace_ms: int, charged_at: float
) -> None:
    """It waits for the grace or the decision's own time, whichever ends first."""
    tc = TimeControl(decision_ms=1000, bank_ms=500, grace_ms=grace_ms)
    seat = RemoteSeat(1, "m", grace_ms, welcome)  # never connects
    referee = Referee("m", SETUP, _table(seat), tc)
    report = await referee.run()

    [fault] = report.faults  # later decisions: played by fallback, no further fault
    assert (fault.seat, fault.kind) == (1, FaultKind.DISCONNECTED)
    assert trio.current_time() == pytest.approx(charged_at)  # the rest went by at once
    assert report.result.reason == "deals_played"


async def test_a_bot_back_within_the_grace_is_asked_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    tc = TimeControl(decision_ms=1000, bank_ms=1000, grace_ms=5000)
    seat, first, second = RemoteSeat(1, "m", 5000, welcome), Wire(), Wire()
    seat.attach(first.connection())
    referee = Referee("m", SETUP, _table(seat), tc)
    left: list[int] = []

    async def leave_and_return() -> None:
        async for message in first.inbox:
            if message.HasField("request"):  # leave with this request pending
                left.append(message.request.seq)
                seat.detach(first.id)
                break
        await trio.sleep(1.5)  # longer than the limit: the wait counts against the bank
        assert seat.attach(second.connection()) is None
        await _answer_with_fallbacks(second, seat)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(leave_and_return)
        report = await referee.run()
        nursery.cancel_scope.cancel()

    assert report.faults == ()
    back, again = second.seen[:2]
    assert back.welcome.resumed and again.request.seq == left[0]  # the same request again
    assert referee.bank[1] == pytest.approx(0.55)  # 1.5 s waited: 0.45 s over the limit


async def test_a_request_asked_again_carries_no_acknowledgement_twice(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """``VERDICT_FAULTS_ONLY``: an accepted answer's acknowledgement rides on the next
    request, built with it once. Asked again after a reconnection, that request comes
    without it (the first stream took it), and the acknowledgements after go on."""
    tc = TimeControl(decision_ms=1000, bank_ms=1000, grace_ms=5000)
    seat = RemoteSeat(1, "m", 5000, welcome)
    first, second = Wire(VerdictMode.FAULTS_ONLY), Wire(VerdictMode.FAULTS_ONLY)
    seat.attach(first.connection())
    referee = Referee("m", SETUP, _table(seat), tc)
    left: list[pb.Request] = []

    async def answer_then_leave_and_return() -> None:
        async for message in first.inbox:
            if not message.HasField("request"):
                continue
            if message.accepted_seq:  # leave with an acknowledged request pending
                left.append(message.request)
                seat.detach(first.id)
                break
            first.answer(seat, message.request.seq, message.request.fallback.cards)
        assert seat.attach(second.connection()) is None
        await _answer_with_fallbacks(second, seat)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_then_leave_and_return)
        report = await referee.run()
        nursery.cancel_scope.cancel()

    assert report.faults == ()
    [gone] = left
    back, again = second.seen[:2]
    assert back.welcome.resumed and again.request.seq == gone.seq
    assert again.accepted_seq == 0  # its acknowledgement went with the first sending
    later = [m for m in second.seen[2:] if m.HasField("request")]
    assert later and later[0].accepted_seq == gone.seq  # the answer to it, acknowledged


async def test_the_servers_own_queueing_is_not_charged(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Fair clocks: the bot's answer is read at the edge at once (stamped there), then
    waits 1.5 s before the referee takes it (the server's queueing, here in virtual
    time). Judged around the whole ask that would be 0.45 s of bank per decision; the
    bot is charged only its own time, measured at the edge."""
    tc = TimeControl(decision_ms=1000, bank_ms=1000, grace_ms=5000)
    seat, wire = RemoteSeat(1, "m", 5000, welcome), Wire()
    seat.attach(wire.connection())
    referee = Referee("m", SETUP, _table(seat), tc)

    async def slow_server() -> None:
        async for message in wire.inbox:
            if message.HasField("request"):
                request = message.request
                action = pb.Action(seq=request.seq, cards=request.fallback.cards)
                answer = wire.edge.answer(pb.BotMessage(action=action))  # read at once
                await trio.sleep(1.5)  # ...and queued in the server before the referee
                seat.deliver(wire.id, answer)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(slow_server)
        report = await referee.run()
        nursery.cancel_scope.cancel()

    assert report.faults == ()
    assert referee.bank[1] == 1.0  # untouched
    assert referee.latencies[1] and max(referee.latencies[1]) < 0.5  # real time, not 1.5 s
    assert trio.current_time() >= 1.5 * len(referee.latencies[1])  # the waits did happen
