"""The one referee core: ask → judge lateness → apply once → charge → record.

Everything that runs a match goes through :class:`RefereeCore`: the trio
:class:`~arena.referee.Referee` (remote and in-process seats), ``arena selfplay`` and the
batch runner (:func:`arena.referee.play_match`), the tests, and
:func:`arena.referee.restore`, which rebuilds a crashed match by running its record's
answers through a core. So there is one fault policy, one order of record lines and one
state to resume (:class:`Tally`), never a copy.

The core is synchronous and holds no clock: its driver says when a decision was asked
(match time, seconds) and how long the answer took; the core judges lateness against
the time control and the seat's bank, applies the answer — or on any fault the
fallback — exactly once, applies the fault policy, and writes every input line just
before the events it caused (docs/records.md, "Order").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Final

from arena.errors import IllegalPlay
from arena.game import (
    Action,
    Decision,
    FaultKind,
    FaultPolicy,
    Kind,
    MatchMachine,
    MatchSetup,
    PolicyKind,
    Recorder,
    RecordFeed,
    Request,
    SeatFeed,
    TimeControl,
    landed,
    team_of,
)
from arena.referee.faults import BotError, Fault, SeatVerdict


@dataclasses.dataclass(slots=True)
class Tally:
    """Everything besides the match machine that the footer, the policy and the clock
    depend on. A resumed match gets the very ``Tally`` its record rebuilds (by running
    the recorded answers through a core), so nothing is copied field by field."""

    bank: list[float]  # seconds left in each seat's bank
    seq: int = 0  # the last sequence number issued
    faults: list[Fault] = dataclasses.field(default_factory=list)  # every fault, in order
    team_faults: list[int] = dataclasses.field(default_factory=lambda: [0, 0])  # charged
    clock: float = 0.0  # match time (s) at the end of the latest answer
    absent: list[bool] = dataclasses.field(default_factory=lambda: [False] * 4)  # charged away
    decisions: int = 0
    latencies: list[list[float]] = dataclasses.field(default_factory=lambda: [[], [], [], []])


@dataclasses.dataclass(slots=True)  # not frozen: made once per decision, on the hot path
class Ask:
    """One decision put to one seat: what to send it, and its time."""

    decision: Decision
    seq: int
    request: Request
    at: float  # match time (s) when it was asked
    limit: float  # s: the decision time plus the network allowance, never charged
    bank: float  # s left in the seat's bank when asked

    @property
    def seat(self) -> int:
        return self.decision.seat

    @property
    def allowed(self) -> float:
        """How long the answer may take at most (s) before it is a timeout."""
        return self.limit + self.bank


@dataclasses.dataclass(slots=True)
class Outcome:
    """An asked decision with what came back, judged for lateness, not yet applied."""

    ask: Ask
    sent: Action | None  # what the seat answered (None: nothing usable)
    error: BotError | None  # a protocol fault, a timeout, or an absence (charge=False)
    latency: float  # s


_WORDS: Final = {kind: kind.value for kind in Kind}  # a Kind's word without .value's call

# A synchronous seat: given an ask, its answer (or the BotError it earned) and how long it took.
Answerer = Callable[[Ask], tuple[Action | BotError, float]]


class RefereeCore:
    """Runs the policy of one match; drive it with :meth:`ask`, :meth:`settle`,
    :meth:`apply` (or :func:`play` for synchronous seats) and :meth:`close` at the end."""

    def __init__(
        self,
        setup: MatchSetup,
        time_control: TimeControl | None = None,
        policy: FaultPolicy | None = None,
    ) -> None:
        self.setup = setup
        self.tc = time_control or TimeControl()
        self.policy = policy or FaultPolicy()
        self.match = MatchMachine(setup)
        self.feed = SeatFeed(self.match)
        self.tally = Tally([self.tc.bank] * 4)
        self.recorder: Recorder | None = None
        self._record: RecordFeed | None = None
        self._limit = self.tc.limit

    @property
    def finished(self) -> bool:
        return self.match.finished

    def record_to(self, recorder: Recorder, events: int = 0, decks: int = 0) -> None:
        """Write the record from here on; ``events``/``decks``: how many it already holds."""
        self.recorder = recorder
        self._record = RecordFeed(self.match, recorder, events, decks)

    # -- one decision ----------------------------------------------------------------------

    def ask(self, decision: Decision, at: float) -> Ask:
        """Issue the next sequence number and build the seat's request (its view only)."""
        self.tally.seq += 1
        seat = decision.seat
        request = self.feed.request(decision)
        return Ask(decision, self.tally.seq, request, at, self._limit, self.tally.bank[seat])

    def settle(
        self,
        ask: Ask,
        sent: Action | None,
        error: BotError | None,
        latency: float,
        cut_short: bool = False,
    ) -> Outcome:
        """Judge lateness and spend the bank: time beyond the limit comes from the bank,
        and an answer that outlasts the bank (or was ``cut_short`` by the driver's
        deadline) is a timeout, which empties it."""
        tally = self.tally
        seat = ask.seat
        bank = self.tc.bank_after(ask.bank, latency)
        if error is None and (cut_short or bank < 0):
            sent, bank = None, 0.0
            error = BotError(
                FaultKind.TIMEOUT,
                f"no answer within {latency:.3f}s (limit {ask.limit:.3f}s, "
                f"bank left {ask.bank:.3f}s)",
            )
        elif error is None:
            tally.latencies[seat].append(latency)
        elif error.kind is FaultKind.TIMEOUT:  # however it was judged: the bank is spent
            bank = 0.0
        tally.bank[seat] = bank if bank > 0 else 0.0
        end = ask.at + latency
        if end > tally.clock:
            tally.clock = end
        return Outcome(ask, sent, error, latency)

    def apply(self, outcome: Outcome) -> SeatVerdict:
        """Apply the answer once — or, on any fault, charge it and play the fallback —
        and record it; returns the verdict the seat is told. The record's lines of one
        answer (the events before it, its line, a penalty or forfeit) go out in one write."""
        recorder = self.recorder
        if recorder is None:
            return self._apply(outcome)
        recorder.hold()
        try:
            return self._apply(outcome)
        finally:
            recorder.release()

    def _apply(self, outcome: Outcome) -> SeatVerdict:
        self.flush()  # what came before this answer goes before its line
        ask, error = outcome.ask, outcome.error
        seat = ask.seat
        tally = self.tally
        tally.decisions += 1
        if error is None and outcome.sent is not None:
            try:
                caused = self.match.answer(seat, outcome.sent)  # an illegal one changes nothing
            except IllegalPlay as exc:
                error = BotError(FaultKind.ILLEGAL_ACTION, exc.reason)
            else:
                tally.absent[seat] = False
                self._answer(outcome, outcome.sent, None)
                return SeatVerdict(ask.seq, True, landed(caused, outcome.sent))
        played = self.match.fallback(seat)  # the referee's own, whatever the bot did to its copy
        if error is not None and not error.charge:  # still away: no further fault
            self._answer(outcome, played, None, absent=True)
            self.match.answer(seat, played)
            return SeatVerdict(ask.seq, False, played)
        assert error is not None
        tally.absent[seat] = error.kind is FaultKind.DISCONNECTED
        fault = self._fault(ask, error, played)
        self._charge(fault)  # may end the match: then the answer is recorded, never played
        self._answer(outcome, played, fault)
        if not self.match.finished:
            self.match.answer(seat, played)
        return SeatVerdict(ask.seq, False, played, fault)

    def _fault(self, ask: Ask, error: BotError, played: Action) -> Fault:
        deal = self.match.snapshot().deal
        lenient = self.policy.kind is PolicyKind.LENIENT
        penalty = self.policy.penalty_points if lenient else 0
        trick = deal.trick if ask.decision.kind is Kind.PLAY else 0
        return Fault(ask.seat, error.kind, error.reason, deal.deal, trick, ask.seq, penalty, played)

    def _charge(self, fault: Fault) -> None:
        """The fault policy, the one place: a penalty, and at ``max_faults`` (or at once,
        strict) a forfeit. Each input is recorded before the events it causes."""
        self.tally.faults.append(fault)
        team = team_of(fault.seat)
        self.tally.team_faults[team] += 1
        if self.policy.kind is PolicyKind.STRICT:
            self.forfeit(team, f"seat {fault.seat} {fault.kind.value}: {fault.reason}")
            return
        if fault.penalty_points:
            reason = f"seat {fault.seat} {fault.kind.value}"
            if self.recorder is not None:
                self.recorder.penalty(team, fault.penalty_points, reason)
            self.match.penalize(team, fault.penalty_points, reason)
            self.flush()
        if self.tally.team_faults[team] >= self.policy.max_faults:
            self.forfeit(team, f"team {team} disqualified after {self.policy.max_faults} faults")

    # -- inputs that end the match ---------------------------------------------------------

    def forfeit(self, team: int, reason: str) -> None:
        self.flush()
        if self.recorder is not None:
            self.recorder.forfeit(team, reason)
        self.match.forfeit(team, reason)
        self.flush()

    def cancel(self, reason: str) -> None:
        """End the match unfinished (an organiser's cancel, a shutdown): recorded."""
        if self.match.finished:
            return
        self.flush()
        if self.recorder is not None:
            self.recorder.cancel(reason)
        self.match.cancel(reason)
        self.flush()

    # -- recording -------------------------------------------------------------------------

    def _answer(
        self, outcome: Outcome, played: Action, fault: Fault | None, absent: bool = False
    ) -> None:
        if self.recorder is not None:
            ask = outcome.ask
            self.recorder.answer(
                seat=ask.decision.seat,
                seq=ask.seq,
                kind=_WORDS[ask.decision.kind],
                sent=outcome.sent,
                played=played,
                requested_at_ms=round(ask.at * 1000, 3),
                latency_ms=round(outcome.latency * 1000, 3),
                fault=fault,
                absent=absent,
            )

    def flush(self) -> None:
        """Write the decks and events the machine emitted since the last call."""
        if self._record is not None:
            self._record.flush()

    def close(self) -> None:
        """Write the rest of the record and its footer (the match must be over)."""
        self.flush()
        result = self.match.result
        if self.recorder is not None and result is not None:
            self.recorder.close(result, self.tally.faults)


def play(
    core: RefereeCore,
    seats: Sequence[Answerer],
    after: Callable[[Decision], None] | None = None,
) -> None:
    """Play ``core``'s match to its end with synchronous seats, one decision at a time.

    Match time is the sum of the answers' latencies (the seats say how long they took),
    so a match played twice with the same answers and times gives the same record byte
    for byte — which is what lets a record be resumed from any point. ``after`` is
    called after each applied decision (self-play's invariant checks).
    """
    while not core.finished:
        for decision in core.match.pending():
            ask = core.ask(decision, core.tally.clock)
            answer, latency = seats[decision.seat](ask)
            if isinstance(answer, BotError):
                core.apply(core.settle(ask, None, answer, latency))
            else:
                core.apply(core.settle(ask, answer, None, latency))
            if after is not None:
                after(decision)
            if core.finished:
                break
    core.close()


__all__ = ["Answerer", "Ask", "Outcome", "RefereeCore", "Tally", "play"]
