"""The referee: runs one match in trio, asking seats under deadlines.

The game machine knows the rules and nothing of time; the seats know their transport
and nothing of the rules. The referee sits between: it asks each pending decision of its
seat under a cancel scope's deadline (one function, :meth:`Referee._ask`; a remote seat's
answer is charged the time measured at the gRPC edge, see :func:`_charged`) and hands
what came back to the synchronous :class:`~arena.referee.core.RefereeCore`, which judges lateness,
charges the bank, applies the answer or the fallback once, applies the fault policy and
writes the record. It reads time only through the run's clock (``trio.current_time()``,
or the same clock's ``current_time`` read once per decision step), so a ``MockClock``
controls it in tests.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Sequence

import structlog
import trio

from arena.game import (
    Action,
    Event,
    FaultPolicy,
    MatchEnded,
    MatchSetup,
    Recorder,
    TimeControl,
    indexed_seat_events,
)
from arena.referee.core import Ask, Outcome, RefereeCore
from arena.referee.faults import BotError, Fault, SeatVerdict
from arena.referee.seats import Seat

log = structlog.get_logger()
SPECTATOR = -1  # a "seat" that holds no cards: sees only public events


@dataclasses.dataclass(frozen=True, slots=True)
class RefereeStatistics:
    decisions: int
    faults: int
    late_answers: int
    bank_ms: tuple[int, int, int, int]


@dataclasses.dataclass(frozen=True, slots=True)
class MatchReport:
    """The result of a refereed match."""

    result: MatchEnded
    faults: tuple[Fault, ...]
    decisions: int
    latencies: tuple[tuple[float, ...], ...]  # per seat, seconds per answered decision
    events: tuple[Event, ...]


class Referee:
    """Runs one match between four seats, in trio, through a :class:`RefereeCore`.
    Use :meth:`run` once.

    The core does the refereeing; this wrapper only asks the seats under their
    deadlines (concurrently in a bid window), tells them their verdicts, passes the
    public events to spectators and turns a cancellation into a recorded cancel.
    ``resume``: a core rebuilt from a cut-off record (:func:`arena.referee.restore`),
    its recorder already attached; the match carries on from it.
    """

    def __init__(
        self,
        match_id: str,
        setup: MatchSetup,
        seats: Sequence[Seat],
        time_control: TimeControl | None = None,
        policy: FaultPolicy | None = None,
        recorder: Recorder | None = None,
        resume: RefereeCore | None = None,
    ) -> None:
        if len(seats) != 4:
            raise ValueError("a match needs exactly four seats")
        self.match_id = match_id
        self.setup = setup
        self.seats = list(seats)
        if resume is None:
            resume = RefereeCore(setup, time_control, policy)
            if recorder is not None:
                resume.record_to(recorder)
        self.core = resume
        self.tc = self.core.tc
        self.policy = self.core.policy
        self.match = self.core.match
        self.feed = self.core.feed
        self.late_answers = 0
        self.cancel_reason = "cancelled"  # what a cancellation records (an organiser's reason)
        self._started = 0.0
        self._watched = 0  # spectators get every event, those before a resume too
        self._watchers: list[Callable[[list[tuple[int, Event]]], None]] = []
        self._log_decisions = _debug_logged()
        self._deadline = trio.CancelScope()  # replaced by _steps' scope while it runs
        # The run's clock, read directly: trio.current_time() is three Python calls to
        # the same clock's current_time (two reads per decision; a MockClock still rules)
        self._now: Callable[[], float] = trio.current_time

    @property
    def faults(self) -> list[Fault]:
        return self.core.tally.faults

    @property
    def bank(self) -> list[float]:
        """Seconds left in each seat's bank."""
        return self.core.tally.bank

    @property
    def decisions(self) -> int:
        return self.core.tally.decisions

    @property
    def latencies(self) -> list[list[float]]:
        return self.core.tally.latencies

    # -- spectators ----------------------------------------------------------------------

    def watch(self, callback: Callable[[list[tuple[int, Event]]], None]) -> list[tuple[int, Event]]:
        """Call ``callback`` (synchronously, on the trio thread) with every new batch of
        public events, each with its index in the match; returns those so far."""
        self._watchers.append(callback)
        return indexed_seat_events(self.match.events[: self._watched], SPECTATOR)

    def statistics(self) -> RefereeStatistics:
        b = [round(x * 1000) for x in self.core.tally.bank]
        return RefereeStatistics(
            self.decisions, len(self.faults), self.late_answers, (b[0], b[1], b[2], b[3])
        )

    def end_before_start(self, team: int | None, reason: str) -> None:
        """Before :meth:`run`: ``team`` forfeits (``None``: void, recorded as cancelled)."""
        if team is None:
            self.core.cancel(reason)
        else:
            self.core.forfeit(team, reason)

    # -- the match -----------------------------------------------------------------------

    async def run(self) -> MatchReport:
        """Play the match to its end (or until cancelled: then it is recorded as cancelled)."""
        with structlog.contextvars.bound_contextvars(match_id=self.match_id):
            self._now = trio.lowlevel.current_clock().current_time
            self._started = self._now() - self.core.tally.clock
            log.info("match_started", seats=[s.name for s in self.seats], seed=self.setup.seed)
            self._publish()
            try:
                while not self.match.finished:
                    await self._steps()
            except BaseException as exc:  # a bid window's nursery wraps Cancelled in a group
                if not self.match.finished and _cancelled(exc):
                    self.core.cancel(self.cancel_reason)
                    self._publish()
                    self.core.close()
                raise
            self.core.close()
            self._publish()
            result = self.match.result
            assert result is not None
            log.info(
                "match_finished",
                reason=result.reason,
                winner=result.winner,
                deals=result.deals,
                faults=len(self.faults),
            )
            for i, seat in enumerate(self.seats):  # the last deal's end, the match's end
                seat.tell_events(self.feed.catch_up(i))
            with trio.move_on_after(5) as scope:
                scope.shield = True
                async with trio.open_nursery() as nursery:
                    for seat in self.seats:
                        nursery.start_soon(seat.finish, result, list(self.faults), self.match_id)
            return MatchReport(
                result,
                tuple(self.faults),
                self.decisions,
                tuple(tuple(x) for x in self.latencies),
                tuple(self.match.events),
            )

    async def _steps(self) -> None:
        """Steps under one reusable deadline scope, until a deadline fires in it.

        A fresh ``move_on_after`` per decision (create, enter, register its deadline,
        exit) was one of the larger trio costs per decision on the referee's thread;
        moving one scope's deadline is about a third of it. A fired scope stays
        cancelled, so the first timeout ends this scope and the next call opens a new
        one (timeouts are rare). Bid windows keep a scope per ask (:meth:`_window`).
        """
        with trio.CancelScope() as scope:
            self._deadline = scope
            while not self.match.finished and not scope.cancel_called:
                await self._step()

    async def _step(self) -> None:
        now = self._now() - self._started
        pending = self.match.pending()
        if len(pending) == 1:  # most decisions: one seat, under the reusable scope
            self._settled(await self._ask(self.core.ask(pending[0], now), self._deadline))
            return
        # sequence numbers in the order of the decisions, before any task runs: the
        # record lists a window's answers in that order, and a resume counts on it
        asks = [self.core.ask(d, now) for d in pending]
        for outcome in await self._window(asks):
            self._settled(outcome)
            if self.match.finished:
                break

    async def _window(self, asks: list[Ask]) -> list[Outcome]:
        """A bid window: every asked seat answers at the same time, each under its own
        deadline (a scope per ask: one seat's deadline must not cut the others short)."""
        self._deadline.deadline = math.inf  # the last single ask's must not fire here
        outcomes: list[Outcome | None] = [None] * len(asks)

        async def ask_into(i: int) -> None:
            with trio.CancelScope() as scope:
                outcomes[i] = await self._ask(asks[i], scope)

        async with trio.open_nursery() as nursery:
            for i in range(len(asks)):
                nursery.start_soon(ask_into, i)
        return [outcome for outcome in outcomes if outcome is not None]

    def _settled(self, outcome: Outcome) -> None:
        """Apply one outcome, tell its seat and the spectators (no checkpoint)."""
        where = (0, 0)
        if self._log_decisions:  # only the debug line reads it (a snapshot otherwise unused)
            deal = self.match.snapshot().deal
            where = (deal.deal, deal.trick)  # before the answer moves on
        verdict = self.core.apply(outcome)
        self._answered(outcome, verdict, where)
        self._publish()

    async def _ask(self, ask: Ask, scope: trio.CancelScope) -> Outcome:
        """Ask one seat one decision under its deadline and bank (the one place).

        ``scope`` is entered by the caller and this sets its deadline: :meth:`_steps`'
        reusable one, or a bid window's own per ask. Only that scope's cancellation is
        a timeout (the scope is spent: whoever entered it leaves it after this); any
        other (an organiser's cancel, a shutdown) passes through.
        """
        seat = self.seats[ask.seat]
        start = self._now()
        scope.deadline = start + ask.allowed
        sent: Action | None = None
        error: BotError | None = None
        cut_short = False
        try:
            sent = await seat.ask(ask.seq, ask.request, self.tc.decision_ms, round(ask.bank * 1000))
        except BotError as exc:
            error = exc
        except trio.Cancelled:
            if not scope.cancel_called:
                raise
            cut_short = True
        elapsed = self._now() - start
        if sent is not None:
            elapsed = _charged(seat, ask.seq, elapsed)
        return self.core.settle(ask, sent, error, elapsed, cut_short)

    def _answered(self, outcome: Outcome, verdict: SeatVerdict, where: tuple[int, int]) -> None:
        fault = verdict.fault
        seat = outcome.ask.seat
        if fault is not None:
            log.warning(
                "fault_recorded",
                seat=seat,
                kind=fault.kind.value,
                reason=fault.reason,
                deal=fault.deal,
                trick=fault.trick,
                seq=fault.seq,
            )
        if self._log_decisions:
            self._log_answer(outcome, verdict, where)
        self.seats[seat].tell_verdict(verdict)

    def _log_answer(self, outcome: Outcome, verdict: SeatVerdict, where: tuple[int, int]) -> None:
        fault = verdict.fault
        log.debug(
            "decision_answered",
            seat=outcome.ask.seat,
            kind=outcome.ask.decision.kind.value,
            deal=where[0],
            trick=where[1],
            seq=verdict.seq,
            latency_ms=round(outcome.latency * 1000, 3),
            fault=fault.kind if fault else None,
        )

    def _publish(self) -> None:
        """Pass new public events to the spectators (the core has written the record)."""
        events = self.match.events
        if self._watchers and self._watched < len(events):
            public = indexed_seat_events(events[self._watched :], SPECTATOR, self._watched)
            for callback in self._watchers:
                callback(public)
        self._watched = len(events)


def _debug_logged() -> bool:
    """Whether debug lines are written now. The per-decision line is built only then: a
    filtered-out ``log.debug`` still costs 15–30 µs through structlog's lazy proxy (it
    binds a fresh logger per call), a few per cent of the server's CPU per decision. Read
    once per referee: a level changed mid-match applies from the next match."""
    enabled = getattr(structlog.get_config()["wrapper_class"], "is_enabled_for", None)
    return enabled is None or bool(enabled(None, logging.DEBUG))


def _charged(seat: Seat, seq: int, elapsed: float) -> float:
    """The time to charge for an answer: the seat's own measure, if it has one for
    ``seq`` (a remote seat's, taken at the gRPC edge from its request's write to its
    answer's arrival, so the referee's queueing on either side of the bridge is not
    the bot's), never more than the referee saw pass around the whole ask."""
    measured: tuple[int, float] | None = getattr(seat, "answered_in", None)
    if measured is not None and measured[0] == seq and measured[1] < elapsed:
        return max(measured[1], 0.0)
    return elapsed


def _cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation: ``Cancelled``, or a group of nothing else."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_cancelled(e) for e in exc.exceptions)
    return isinstance(exc, trio.Cancelled)
