"""The referee: runs one match in trio, asking seats under deadlines and applying policy.

The game machine knows the rules and nothing of time; the seats know their transport
and nothing of the rules. The referee sits between: it asks each pending decision of its
seat inside ``trio.move_on_after`` (one function, :meth:`Referee._ask`), charges the time
bank, turns every misbehaviour into a recorded :class:`Fault` with the fallback played,
and applies the fault policy. It reads time only through ``trio.current_time()``, so a
``MockClock`` controls it in tests.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import structlog
import trio

from arena.errors import IllegalPlay
from arena.game import (
    Action,
    Decision,
    Event,
    Kind,
    MatchEnded,
    MatchMachine,
    MatchSetup,
    Recorder,
    RecordFeed,
    Request,
    SeatFeed,
    indexed_seat_events,
    landed,
    team_of,
)
from arena.referee.control import FaultPolicy, PolicyKind, TimeControl
from arena.referee.faults import BotError, Fault, FaultKind, SeatVerdict
from arena.referee.seats import Seat

log = structlog.get_logger()
SPECTATOR = -1  # a "seat" that holds no cards: sees only public events


@dataclasses.dataclass(frozen=True)
class Resume:
    """Where a match rebuilt from its record (after a crash) carries on from."""

    match: MatchMachine  # rebuilt by replaying the recorded inputs
    seq: int  # the last sequence number issued
    team_faults: tuple[int, int]  # charged faults so far, per team
    bank_used_ms: tuple[float, float, float, float]  # per seat
    written: tuple[int, int]  # (events, decks) already in the record
    faults: tuple[Fault, ...] = ()  # every fault recorded so far
    clock_ms: float = 0.0  # the match time already elapsed (request times carry on)


@dataclasses.dataclass(slots=True)
class Outcome:
    """What came of asking one decision."""

    decision: Decision
    seq: int
    request: Request  # its fallback is computed only if needed
    sent: Action | None
    fault: Fault | None
    requested_at: float
    latency: float


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
    """Runs one match between four seats. Use :meth:`run` once."""

    def __init__(
        self,
        match_id: str,
        setup: MatchSetup,
        seats: Sequence[Seat],
        time_control: TimeControl | None = None,
        policy: FaultPolicy | None = None,
        recorder: Recorder | None = None,
        resume: Resume | None = None,
    ) -> None:
        if len(seats) != 4:
            raise ValueError("a match needs exactly four seats")
        self.match_id = match_id
        self.setup = setup
        self.seats = list(seats)
        self.tc = time_control or TimeControl()
        self.policy = policy or FaultPolicy()
        self.recorder = recorder
        self.match = resume.match if resume else MatchMachine(setup)
        self.feed = SeatFeed(self.match)
        self.faults: list[Fault] = []
        self.fault_counts = [0, 0]  # per team: the policy's max_faults counts a team's faults
        self.bank = [self.tc.bank_ms / 1000] * 4
        if resume is not None:
            self.faults = list(resume.faults)
            self.fault_counts = list(resume.team_faults)
            self.bank = [
                max(0.0, b - used / 1000)
                for b, used in zip(self.bank, resume.bank_used_ms, strict=True)
            ]
        self.latencies: list[list[float]] = [[], [], [], []]
        self.decisions = 0
        self.late_answers = 0
        self._seq = resume.seq if resume else 0
        self._started = 0.0
        self._elapsed_before = resume.clock_ms / 1000 if resume else 0.0
        self._feed = (
            RecordFeed(self.match, recorder, *(resume.written if resume else (0, 0)))
            if recorder is not None
            else None
        )
        self._watched = len(self.match.events) if resume else 0
        self._watchers: list[Callable[[list[tuple[int, Event]]], None]] = []

    # -- spectators ----------------------------------------------------------------------

    def watch(self, callback: Callable[[list[tuple[int, Event]]], None]) -> list[tuple[int, Event]]:
        """Call ``callback`` (synchronously, on the trio thread) with every new batch of
        public events, each with its index in the match; returns those so far."""
        self._watchers.append(callback)
        return indexed_seat_events(self.match.events[: self._watched], SPECTATOR)

    def statistics(self) -> RefereeStatistics:
        b = [round(x * 1000) for x in self.bank]
        return RefereeStatistics(
            self.decisions, len(self.faults), self.late_answers, (b[0], b[1], b[2], b[3])
        )

    def end_before_start(self, team: int | None, reason: str) -> None:
        """Before :meth:`run`: ``team`` forfeits (``None``: void, recorded as cancelled)."""
        self._input("cancel" if team is None else "forfeit", team=team, reason=reason)
        if team is None:
            self.match.cancel(reason)
        else:
            self.match.forfeit(team, reason)

    # -- the match -----------------------------------------------------------------------

    async def run(self) -> MatchReport:
        """Play the match to its end (or until cancelled: then it is recorded as cancelled)."""
        with structlog.contextvars.bound_contextvars(match_id=self.match_id):
            self._started = trio.current_time() - self._elapsed_before
            log.info("match_started", seats=[s.name for s in self.seats], seed=self.setup.seed)
            self._flush()
            try:
                while not self.match.finished:
                    await self._step()
            except BaseException as exc:  # a bid window's nursery wraps Cancelled in a group
                if not self.match.finished and _cancelled(exc):
                    self._input("cancel", reason="cancelled")
                    self.match.cancel("cancelled")
                    self._flush()
                    self._close()
                raise
            self._close()
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

    async def _step(self) -> None:
        decisions = self.match.pending()
        outcomes: list[Outcome | None] = [None] * len(decisions)
        if len(decisions) == 1:
            outcomes[0] = await self._ask(decisions[0])
        else:  # a bid window: every asked seat answers at the same time

            async def ask_into(i: int) -> None:
                outcomes[i] = await self._ask(decisions[i])

            async with trio.open_nursery() as nursery:
                for i in range(len(decisions)):
                    nursery.start_soon(ask_into, i)
        for outcome in outcomes:
            assert outcome is not None
            self._apply(outcome)
            if self.match.finished:
                break
        self._flush()

    async def _ask(self, decision: Decision) -> Outcome:
        """Ask one seat one decision under its deadline and bank (the one place)."""
        seat = decision.seat
        self._seq += 1
        seq = self._seq
        request = self.feed.request(decision)
        limit = self.tc.decision_ms / 1000
        allowance = self.tc.allowance_ms / 1000
        bank = self.bank[seat]
        start = trio.current_time()
        sent: Action | None = None
        fault: tuple[FaultKind, str, bool] | None = None
        with trio.move_on_after(limit + allowance + bank) as scope:
            try:
                sent = await self.seats[seat].ask(
                    seq, request, self.tc.decision_ms, round(bank * 1000)
                )
            except BotError as exc:
                fault = (exc.kind, exc.reason, exc.charge)
        elapsed = trio.current_time() - start
        overrun = max(0.0, elapsed - limit - allowance)
        self.bank[seat] = max(0.0, bank - overrun)
        if fault is None and (scope.cancelled_caught or overrun > bank):
            sent = None
            fault = (
                FaultKind.TIMEOUT,
                f"no answer within {elapsed:.3f}s (limit {limit:.3f}s, bank left {bank:.3f}s)",
                True,
            )
        elif fault is None:
            self.latencies[seat].append(elapsed)
        return Outcome(
            decision,
            seq,
            request,
            sent,
            self._fault(decision, seq, fault),
            start - self._started,
            elapsed,
        )

    def _fault(
        self, d: Decision, seq: int, fault: tuple[FaultKind, str, bool] | None
    ) -> Fault | None:
        if fault is None:
            return None
        kind, reason, charged = fault
        deal = self.match.deal
        lenient = self.policy.kind is PolicyKind.LENIENT
        penalty = self.policy.penalty_points if lenient and charged else 0
        trick = deal.trick if d.kind is Kind.PLAY else 0
        return Fault(d.seat, kind, reason, deal.deal, trick, seq, penalty, (), charged)

    def _apply(self, outcome: Outcome) -> None:
        """Apply the answer, or on any fault the fallback; record; tell the seat.

        The record gets each input line before the events it caused: events are flushed
        before the answer is applied and after its line is written.
        """
        self._flush()
        d = outcome.decision
        seat = d.seat
        fault = outcome.fault
        where = (self.match.deal.deal, self.match.deal.trick)  # before the answer moves on
        if fault is None and outcome.sent is not None:
            try:
                caused = self.match.answer(seat, outcome.sent)  # an illegal one changes nothing
            except IllegalPlay as exc:
                fault = self._fault(d, outcome.seq, (FaultKind.ILLEGAL_ACTION, exc.reason, True))
            else:
                self._record_answer(outcome, outcome.sent, None)
                self._answered(outcome, landed(caused, outcome.sent), None, where)
                return
        assert fault is not None
        played = outcome.request.fallback
        fault = dataclasses.replace(fault, played=played)
        if fault.charged:
            self._charge(fault)  # may forfeit the match: then nothing more is played
        else:  # recorded (the footer lists every faulted answer), not charged again
            self.faults.append(fault)
        self._record_answer(outcome, played, fault)  # after a forfeit: recorded, not played
        if not self.match.finished:
            self.match.answer(seat, played)
        self._answered(outcome, played, fault, where)

    def _answered(
        self, outcome: Outcome, played: Action, fault: Fault | None, where: tuple[int, int]
    ) -> None:
        self.decisions += 1
        seat = outcome.decision.seat
        log.debug(
            "decision_answered",
            seat=seat,
            kind=outcome.decision.kind.value,
            deal=where[0],
            trick=where[1],
            seq=outcome.seq,
            latency_ms=round(outcome.latency * 1000, 3),
            fault=fault.kind if fault else None,
        )
        self.seats[seat].tell_verdict(SeatVerdict(outcome.seq, fault is None, played, fault))

    def _charge(self, fault: Fault) -> None:
        """Record a fault and apply the policy: a penalty, or a forfeit."""
        self.faults.append(fault)
        team = team_of(fault.seat)
        self.fault_counts[team] += 1
        log.warning(
            "fault_recorded",
            seat=fault.seat,
            kind=fault.kind.value,
            reason=fault.reason,
            deal=fault.deal,
            trick=fault.trick,
            seq=fault.seq,
        )
        if self.policy.kind is PolicyKind.STRICT:
            reason = f"seat {fault.seat} {fault.kind.value}: {fault.reason}"
            self._input("forfeit", team=team, reason=reason)
            self.match.forfeit(team, reason)
            return
        if fault.penalty_points:
            reason = f"seat {fault.seat} {fault.kind.value}"
            self._input("penalty", team=team, points=fault.penalty_points, reason=reason)
            self.match.penalize(team, fault.penalty_points, reason)
            self._flush()  # its event follows its input line, before the answer's (replay order)
        if self.fault_counts[team] >= self.policy.max_faults:
            reason = f"team {team} disqualified after {self.policy.max_faults} faults"
            self._input("forfeit", team=team, reason=reason)
            self.match.forfeit(team, reason)

    # -- recording -----------------------------------------------------------------------

    def _input(self, kind: str, **fields: Any) -> None:
        self._flush()
        if self.recorder is None:
            return
        if kind == "penalty":
            self.recorder.penalty(fields["team"], fields["points"], fields["reason"])
        elif kind == "forfeit":
            self.recorder.forfeit(fields["team"], fields["reason"])
        else:
            self.recorder.cancel(fields["reason"])

    def _record_answer(self, outcome: Outcome, played: Action, fault: Fault | None) -> None:
        if self.recorder is not None:
            self.recorder.answer(
                seat=outcome.decision.seat,
                seq=outcome.seq,
                kind=outcome.decision.kind.value,
                sent=outcome.sent,
                played=played,
                requested_at_ms=round(outcome.requested_at * 1000, 3),
                latency_ms=round(outcome.latency * 1000, 3),
                fault=fault,
            )

    def _flush(self) -> None:
        """Write new decks and events to the record, and pass them to the spectators."""
        if self._feed is not None:
            self._feed.flush()
        events = self.match.events
        if self._watchers and self._watched < len(events):
            public = indexed_seat_events(events[self._watched :], SPECTATOR, self._watched)
            for callback in self._watchers:
                callback(public)
        self._watched = len(events)

    def _close(self) -> None:
        if self.recorder is not None and self.match.result is not None:
            self.recorder.close(self.match.result, self.faults)


def _cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation: ``Cancelled``, or a group of nothing else."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_cancelled(e) for e in exc.exceptions)
    return isinstance(exc, trio.Cancelled)
