"""Hosting matches on the trio side: seat tokens, one supervised task per match.

:class:`MatchHost` creates matches (four seat tokens each), waits for their bots, runs
each :class:`~arena.referee.Referee` in its own supervised task — a crash is recorded
as that match's failure and every other match carries on — and answers the
organiser's questions. Everything here runs on the trio thread; the gRPC servicers
reach it only through the bridge. :class:`TokenBook` is the one piece both threads
read: a token → seat map, written only by the host.
"""

from __future__ import annotations

import dataclasses
import enum
import secrets
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.errors import ArenaError
from arena.game import Bot, Event, MatchEnded, MatchSetup, Recorder, Termination
from arena.records import read_record
from arena.referee import (
    FaultKind,
    FaultPolicy,
    LocalSeat,
    MatchReport,
    Referee,
    Seat,
    TimeControl,
)
from arena.referee.resume import Restored, restore
from arena.rules import RuleSet, team_of
from arena.server import seating
from arena.server.limits import CheckBudget, Limits, LiveCount
from arena.server.remote import RemoteSeat
from arena.server.seating import Watcher, Watchers
from arena.server.tokens import TokenBook as TokenBook
from arena.server.tokens import token_hash as token_hash
from arena.server.traffic import PROTOCOL as PROTOCOL
from arena.server.traffic import Candidate, CheckVerdict, Welcome
from arena.text import MAX_REASON, clip

log = structlog.get_logger()


class NothingToCheck(ArenaError):
    """``Check`` asked while the match is not running or the seat is not being asked."""


class MatchState(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclasses.dataclass(frozen=True)
class MatchSpec:
    """What an organiser asks for. ``local`` seats are in-process bots (no token)."""

    rules: RuleSet = dataclasses.field(default_factory=RuleSet)
    seed: int | None = None
    time_control: TimeControl = dataclasses.field(default_factory=TimeControl)
    policy: FaultPolicy = dataclasses.field(default_factory=FaultPolicy)
    seat_names: tuple[str, ...] = ()
    local: dict[int, Bot] = dataclasses.field(default_factory=dict)
    connect_timeout: float = 60.0
    stacked: dict[int, Sequence[Any]] = dataclasses.field(default_factory=dict)
    # a team lacking a seat after connect_timeout forfeits (both: void); False plays
    # the missing seats' fallbacks, as check-bot does to show where a bot goes wrong
    missing_forfeits: bool = True


@dataclasses.dataclass(eq=False)
class HostedMatch:
    id: str
    spec: MatchSpec
    seed: int
    seats: list[Seat]
    tokens: list[str | None]  # None: an in-process seat, or a restored match's seat
    state: MatchState = MatchState.WAITING
    token_hashes: list[str] = dataclasses.field(default_factory=list)
    restored: Restored | None = None
    cancel_reason: str = "cancelled"
    referee: Referee | None = None
    report: MatchReport | None = None
    error: str = ""
    record: str = ""
    scope: trio.CancelScope = dataclasses.field(default_factory=trio.CancelScope)
    done: trio.Event = dataclasses.field(default_factory=trio.Event)
    watchers: Watchers = dataclasses.field(default_factory=Watchers)
    serial: int = 0  # creation order, for List's pages
    organiser: str = ""  # who created it (its live matches are counted)
    abandoned: dict[int, str] = dataclasses.field(default_factory=dict)  # seat -> why
    news: trio.Event = dataclasses.field(default_factory=trio.Event)  # a seat was abandoned
    checks: CheckBudget | None = None

    def remote(self, seat: int) -> RemoteSeat | None:
        s = self.seats[seat]
        return s if isinstance(s, RemoteSeat) else None

    @property
    def result(self) -> MatchEnded | None:
        return self.referee.match.result if self.referee else None


RecorderFactory = Callable[[HostedMatch], tuple[Recorder | None, str]]


class MatchHost:
    """Creates, runs, cancels and describes matches (trio thread only)."""

    def __init__(
        self,
        nursery: trio.Nursery,
        tokens: TokenBook[HostedMatch] | None = None,
        recorder_factory: RecorderFactory | None = None,
        limits: Limits | None = None,
        records: Path | None = None,
    ) -> None:
        self.nursery = nursery
        self.tokens: TokenBook[HostedMatch] = tokens or TokenBook()
        self.recorder_factory = recorder_factory
        self.limits = limits or Limits()
        self.records = records  # where evicted matches' records are (``<id>.jsonl``)
        self.matches: dict[str, HostedMatch] = {}
        self.live = LiveCount()  # live matches per organiser
        self._serials = 0

    # -- organiser verbs -------------------------------------------------------------------

    def create(self, spec: MatchSpec, organiser: str = "") -> HostedMatch:
        """Raises :class:`LimitExceeded` past ``matches_total`` or
        ``matches_per_organiser`` live matches."""
        self.live.admit(self.limits, organiser)
        match_id = "m-" + secrets.token_hex(6)
        seed = spec.seed if spec.seed is not None else secrets.randbits(63)
        seats: list[Seat] = []
        tokens: list[str | None] = []
        hosted = HostedMatch(match_id, spec, seed, seats, tokens)
        self._admit(hosted, organiser)
        for seat in range(4):
            bot = spec.local.get(seat)
            if bot is not None:
                seats.append(LocalSeat(bot))
                tokens.append(None)
                continue
            token = secrets.token_hex(24)  # hex: never starts with "-" on a command line
            seats.append(
                RemoteSeat(seat, match_id, spec.time_control.grace_ms, self._welcomer(hosted, seat))
            )
            tokens.append(token)
            hosted.token_hashes.append(token_hash(token))
            self.tokens.add(token, hosted, seat)
        self.matches[match_id] = hosted
        self.nursery.start_soon(self._supervise, hosted)
        log.info(
            "match_created", match_id=match_id, seed=seed, remote=[t is not None for t in tokens]
        )
        return hosted

    def restore(self, path: str) -> HostedMatch:
        """Carry on the match of an incomplete record (after a crash) under its old id.

        Its bots come back with their old tokens: the record holds only their hashes,
        which is all the token book needs.

        Raises:
            RecordError: the record cannot be resumed (complete, unreadable, diverging).
        """
        record = read_record(path)
        restored = restore(record)
        header = record.header
        assert header is not None
        spec = MatchSpec(
            rules=header.rules,
            seed=header.seed,
            time_control=header.time_control,
            policy=header.policy,
            seat_names=tuple(seat.name for seat in header.seats),
            stacked={d: tuple(c) for d, c in header.stacked.items()},
        )
        hosted = HostedMatch(header.match_id, spec, header.seed, [], [None] * 4)
        self._admit(hosted, "")
        hosted.restored = restored
        hosted.record = str(path)
        for seat, info in enumerate(header.seats):
            remote = RemoteSeat(
                seat,
                hosted.id,
                spec.time_control.grace_ms,
                self._welcomer(hosted, seat),
                resumed=True,
                away=restored.core.tally.absent[seat],
            )
            remote.name, remote.version = info.name, info.version
            hosted.seats.append(remote)
            hosted.token_hashes.append(info.token_sha256)
            self.tokens.add_hash(info.token_sha256, hosted, seat)
        self.matches[hosted.id] = hosted
        self.nursery.start_soon(self._supervise, hosted)
        log.info(
            "match_restored",
            match_id=hosted.id,
            record=str(path),
            seq=restored.seq,
            deal=restored.core.match.snapshot().deal.deal,
        )
        return hosted

    def _admit(self, hosted: HostedMatch, organiser: str) -> None:
        hosted.serial = self._serials = self._serials + 1
        hosted.organiser = organiser
        hosted.checks = CheckBudget(self.limits.checks_per_decision)
        self.live.add(organiser)

    def abandon(self, match_id: str, seat: int, why: str) -> None:
        """Stop waiting for ``seat``: its bot will not come (see :func:`seating.abandon`)."""
        seating.abandon(self.matches.get(match_id), seat, why)

    def cancel(self, match_id: str, reason: str = "cancelled") -> HostedMatch:
        hosted = self.get(match_id)
        if hosted.state in (MatchState.WAITING, MatchState.RUNNING):
            log.info("match_cancel_requested", match_id=match_id, reason=reason)
            hosted.cancel_reason = reason
            if hosted.referee is not None:
                hosted.referee.cancel_reason = reason  # recorded as the cancel's reason
            hosted.scope.cancel()
        return hosted

    def get(self, match_id: str) -> HostedMatch:
        hosted = self.matches.get(match_id)
        if hosted is None:
            raise KeyError(f"no match {match_id!r}")
        return hosted

    def watch(self, match_id: str, callback: Watcher) -> tuple[int, list[tuple[int, Event]]]:
        """Subscribe to a match's public events; ``callback(None)`` marks the end.
        Returns the subscription's key (for :meth:`unwatch`) and the events so far.

        Raises:
            KeyError: no such match in memory.
            LimitExceeded: the match has ``watches_per_match`` watchers already.
        """
        hosted = self.get(match_id)
        if hosted.done.is_set():
            callback(None)
            return 0, hosted.watchers.past(hosted.referee)
        key = hosted.watchers.add(callback, self.limits.watches_per_match, match_id)
        return key, hosted.watchers.past(hosted.referee)

    def unwatch(self, match_id: str, key: int) -> None:
        """End a subscription (its client went away). Never raises."""
        hosted = self.matches.get(match_id)
        if hosted is not None:
            hosted.watchers.remove(key)

    def check(self, match_id: str, seat: int, candidate: Candidate) -> CheckVerdict:
        """The ``Check`` dry run: judge ``candidate`` for ``seat``'s pending decision.

        Raises:
            NothingToCheck: the match is not running or the seat has no pending request
                (``FAILED_PRECONDITION``: there is nothing to judge the action against).
        """
        hosted = self.get(match_id)
        referee = hosted.referee
        if referee is None or referee.match.finished:
            state = "is over" if referee is not None or hosted.done.is_set() else "has not started"
            raise NothingToCheck(f"match {hosted.id} {state}: no pending decision to check")
        pending = {d.seat for d in referee.match.pending()}
        remote = hosted.remote(seat)
        asked = remote.pending_seq if remote is not None else None
        seq = candidate.seq
        refused = self.limits.refuse_check(hosted.checks, seat, asked, candidate.count)
        if refused is not None:
            return CheckVerdict(seq, False, FaultKind.MALFORMED, refused)
        if seat not in pending or asked is None:
            raise NothingToCheck(f"seat {seat} has no pending decision to check")
        if seq != asked:
            reason = f"seq {seq} is not the pending request (seq {asked})"
            return CheckVerdict(seq, False, FaultKind.UNKNOWN_SEQUENCE, reason)
        if candidate.cards is None:
            return CheckVerdict(seq, False, FaultKind.MALFORMED, candidate.problem)
        verdict = referee.match.check(seat, candidate.cards)
        fault = None if verdict.legal else FaultKind.ILLEGAL_ACTION
        return CheckVerdict(seq, verdict.legal, fault, verdict.reason, candidate.cards)

    # -- running a match -------------------------------------------------------------------

    async def _supervise(self, hosted: HostedMatch) -> None:
        """Run one match; whatever happens to it stays with it."""
        with structlog.contextvars.bound_contextvars(match_id=hosted.id):
            try:
                with hosted.scope:
                    await self._run(hosted)
                if hosted.state is not MatchState.FINISHED:
                    hosted.state = MatchState.CANCELLED
                    await self._finish_cancelled(hosted)
            except Exception as exc:  # one match's crash must not touch the others
                hosted.state = MatchState.FAILED
                hosted.error = clip(f"{type(exc).__name__}: {exc}", MAX_REASON)
                if isinstance(exc, OSError):  # the record could not be written: no bug
                    log.error("match_failed", error=hosted.error, record=hosted.record)
                else:
                    log.exception("match_failed", error=hosted.error)
                await seating.finish_failed(hosted)
            finally:
                for seat in range(4):  # its tokens stay known: a bot is told the match is over
                    if (remote := hosted.remote(seat)) is not None:
                        remote.finished = True
                        if remote.conn is not None:  # a failed match ends its streams too
                            remote.conn.close()
                self.live.drop(hosted.organiser)
                hosted.done.set()
                hosted.watchers.end()
                self.nursery.start_soon(seating.forget_later, self, hosted)

    async def _run(self, hosted: HostedMatch) -> None:
        spec = hosted.spec
        waiting_since = trio.current_time()
        missing = await seating.await_seats(hosted)
        waited = trio.current_time() - waiting_since
        if missing:
            log.warning("seats_missing_at_start", seats=missing)
        if hosted.restored is not None or not spec.missing_forfeits:
            missing = []  # a resumed match goes on; absent seats are faulted
        recorder: Recorder | None = None  # a restored match: the core its record rebuilt
        resume = hosted.restored.resume() if hosted.restored is not None else None
        if resume is None and self.recorder_factory is not None:
            recorder, hosted.record = self.recorder_factory(hosted)
        setup = MatchSetup(spec.rules, hosted.seed, dict(spec.stacked))
        hosted.referee = referee = Referee(
            hosted.id, setup, hosted.seats, spec.time_control, spec.policy, recorder, resume
        )
        for seat in range(4):
            remote = hosted.remote(seat)
            if remote is not None:  # a reconnected bot is sent the whole current deal again
                remote.on_attach = partial(referee.feed.rewind, seat)
                if resume is not None:
                    referee.feed.rewind(seat)
        hosted.watchers.follow(referee)
        if missing:  # a missing seat cannot win: its team forfeits, or nobody plays
            teams = sorted({team_of(s) for s in missing})
            reason = seating.missing_reason(hosted, missing, waited)
            if len(teams) == 1:
                referee.end_before_start(teams[0], reason)
            else:
                referee.end_before_start(None, f"void: {reason}")
        hosted.state = MatchState.RUNNING
        hosted.report = await hosted.referee.run()
        hosted.state = MatchState.FINISHED

    async def _finish_cancelled(self, hosted: HostedMatch) -> None:
        start = hosted.spec.rules.start_level
        result = hosted.result or MatchEnded(
            None, (start, start), 0, Termination.CANCELLED, None, hosted.cancel_reason
        )
        with trio.move_on_after(2) as scope:
            scope.shield = True
            for seat in hosted.seats:
                await seat.finish(result, [], hosted.record)

    def _welcomer(self, hosted: HostedMatch, seat: int) -> Callable[[bool], Welcome]:
        def welcome(resumed: bool) -> Welcome:
            spec = hosted.spec
            names = list(spec.seat_names) or [s.name for s in hosted.seats]
            return Welcome(
                seat=seat,
                match_id=hosted.id,
                rules=spec.rules,
                time_control=spec.time_control,
                seat_names=tuple(names),
                resumed=resumed,
                deals=spec.rules.deals or 0,
                policy=spec.policy.kind.value,
                max_faults=spec.policy.max_faults,
            )

        return welcome
