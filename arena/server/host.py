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
import hashlib
import secrets
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.errors import ArenaError, ProtocolError
from arena.game import Bot, Event, MatchEnded, MatchSetup, Recorder, indexed_seat_events
from arena.records import Restored, read_record, reopen, restore
from arena.referee import FaultPolicy, LocalSeat, MatchReport, Referee, Resume, Seat, TimeControl
from arena.referee.referee import SPECTATOR
from arena.rules import RuleSet
from arena.server import convert
from arena.server.limits import CheckBudget, Limits
from arena.server.remote import RemoteSeat
from arena.text import MAX_REASON, clip
from arena.v1 import arena_pb2 as pb

log = structlog.get_logger()
PROTOCOL = 1


class MatchState(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"


LIVE = (MatchState.WAITING, MatchState.RUNNING)
Watcher = Callable[[list[tuple[int, Event]] | None], None]


class LimitExceeded(ArenaError):
    """A bound of :class:`~arena.server.limits.Limits` refuses the request
    (``RESOURCE_EXHAUSTED``)."""


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
    referee: Referee | None = None
    report: MatchReport | None = None
    error: str = ""
    record: str = ""
    scope: trio.CancelScope = dataclasses.field(default_factory=trio.CancelScope)
    done: trio.Event = dataclasses.field(default_factory=trio.Event)
    watchers: dict[int, Watcher] = dataclasses.field(default_factory=dict)
    watched: int = 0  # public events passed to the watchers so far
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


class TokenBook:
    """Seat tokens → (match, seat). Written on the trio thread, read from the gRPC one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seats: dict[str, tuple[HostedMatch, int]] = {}  # by SHA-256 of the token

    def add(self, token: str, match: HostedMatch, seat: int) -> None:
        self.add_hash(token_hash(token), match, seat)

    def add_hash(self, digest: str, match: HostedMatch, seat: int) -> None:
        """Admit a token known only by its hash (a match restored from its record)."""
        with self._lock:
            self._seats[digest] = (match, seat)

    def remove(self, token: str) -> None:
        self.remove_hash(token_hash(token))

    def remove_hash(self, digest: str) -> None:
        with self._lock:
            self._seats.pop(digest, None)

    def lookup(self, token: str) -> tuple[HostedMatch, int] | None:
        with self._lock:
            return self._seats.get(token_hash(token))


RecorderFactory = Callable[[HostedMatch], tuple[Recorder | None, str]]


def _policy_args(policy: Any) -> dict[str, Any]:
    return {
        "kind": str(policy.get("kind", "lenient")),
        "penalty_points": int(policy.get("penalty_points", 10)),
        "max_faults": int(policy.get("max_faults", 10)),
    }


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class MatchHost:
    """Creates, runs, cancels and describes matches (trio thread only)."""

    def __init__(
        self,
        nursery: trio.Nursery,
        tokens: TokenBook | None = None,
        recorder_factory: RecorderFactory | None = None,
        limits: Limits | None = None,
        records: Path | None = None,
    ) -> None:
        self.nursery = nursery
        self.tokens = tokens or TokenBook()
        self.recorder_factory = recorder_factory
        self.limits = limits or Limits()
        self.records = records  # where evicted matches' records are (``<id>.jsonl``)
        self.matches: dict[str, HostedMatch] = {}
        self.live: dict[str, int] = {}  # live matches per organiser
        self._serials = 0
        self._watch_keys = 0

    # -- organiser verbs -------------------------------------------------------------------

    def create(self, spec: MatchSpec, organiser: str = "") -> HostedMatch:
        """Raises :class:`LimitExceeded` past ``matches_total`` or
        ``matches_per_organiser`` live matches."""
        total = sum(self.live.values())
        if total >= self.limits.matches_total:
            raise LimitExceeded(f"the server already runs {total} live matches (--matches-total)")
        mine = self.live.get(organiser, 0)
        if mine >= self.limits.matches_per_organiser:
            raise LimitExceeded(f"you already have {mine} live matches (--matches-per-organiser)")
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
        policy = FaultPolicy.parse(**_policy_args(header.policy))
        spec = MatchSpec(
            rules=header.rules,
            seed=header.seed,
            time_control=TimeControl(**{k: int(v) for k, v in header.time_control.items()}),
            policy=policy,
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
            deal=restored.match.deal.deal,
        )
        return hosted

    def _admit(self, hosted: HostedMatch, organiser: str) -> None:
        self._serials += 1
        hosted.serial = self._serials
        hosted.organiser = organiser
        hosted.checks = CheckBudget(self.limits.checks_per_decision)
        self.live[organiser] = self.live.get(organiser, 0) + 1

    def abandon(self, match_id: str, seat: int, why: str) -> None:
        """The bot meant for ``seat`` will not come (its process ended before taking the
        seat): stop waiting for it. Once every seat is taken or abandoned the match
        starts, or is forfeited or void (see :meth:`_await_seats`)."""
        hosted = self.matches.get(match_id)
        remote = hosted.remote(seat) if hosted is not None else None
        if hosted is None or remote is None or remote.ever_connected.is_set():
            return
        hosted.abandoned[seat] = why
        hosted.news.set()

    def cancel(self, match_id: str, reason: str = "cancelled") -> HostedMatch:
        hosted = self.get(match_id)
        if hosted.state in (MatchState.WAITING, MatchState.RUNNING):
            log.info("match_cancel_requested", match_id=match_id, reason=reason)
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
            return 0, self._past(hosted)
        if len(hosted.watchers) >= self.limits.watches_per_match:
            raise LimitExceeded(
                f"match {match_id} already has {len(hosted.watchers)} watchers "
                "(--watches-per-match)"
            )
        self._watch_keys += 1
        hosted.watchers[self._watch_keys] = callback
        return self._watch_keys, self._past(hosted)

    def unwatch(self, match_id: str, key: int) -> None:
        """End a subscription (its client went away). Never raises."""
        hosted = self.matches.get(match_id)
        if hosted is not None:
            hosted.watchers.pop(key, None)

    def _past(self, hosted: HostedMatch) -> list[tuple[int, Event]]:
        if hosted.referee is None:
            return []
        return indexed_seat_events(hosted.referee.match.events[: hosted.watched], SPECTATOR)

    def _fan_out(self, hosted: HostedMatch, batch: list[tuple[int, Event]]) -> None:
        """The one watcher the referee knows of: passes each batch to the subscribers."""
        if batch:
            hosted.watched = batch[-1][0] + 1
        for callback in list(hosted.watchers.values()):
            callback(batch)

    def check(self, match_id: str, seat: int, action: pb.Action) -> pb.Verdict:
        """The ``Check`` dry run: judge ``action`` for ``seat``'s pending decision."""
        hosted = self.get(match_id)
        referee = hosted.referee
        if referee is None or referee.match.finished:
            return pb.Verdict(seq=action.seq, reason="the match is not running")
        pending = {d.seat for d in referee.match.pending()}
        remote = hosted.remote(seat)
        asked = remote.pending_seq if remote is not None else None
        if hosted.checks is not None and not hosted.checks.spend(seat, asked):
            raise LimitExceeded(
                f"more than {self.limits.checks_per_decision} Check calls for this decision "
                "(--checks-per-decision)"
            )
        if len(action.cards) > self.limits.max_cards:
            return pb.Verdict(
                seq=action.seq,
                fault=pb.MALFORMED,
                reason=f"{len(action.cards)} cards in one action (at most {self.limits.max_cards})",
            )
        if seat not in pending or asked is None:
            return pb.Verdict(seq=action.seq, reason="this seat has no pending decision")
        if action.seq != asked:
            return pb.Verdict(
                seq=action.seq,
                fault=pb.UNKNOWN_SEQUENCE,
                reason=f"seq {action.seq} is not the pending request (seq {asked})",
            )
        try:
            cards = convert.cards_from_pb(action.cards)
        except ProtocolError as exc:
            return pb.Verdict(seq=action.seq, fault=pb.MALFORMED, reason=str(exc))
        verdict = referee.match.check(seat, cards)
        return pb.Verdict(
            seq=action.seq,
            accepted=verdict.legal,
            fault=pb.FAULT_NONE if verdict.legal else pb.ILLEGAL_ACTION,
            reason=verdict.reason,
            played=convert.cards_to_pb(cards),
        )

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
                await self._finish_failed(hosted)
            finally:
                for digest in hosted.token_hashes:
                    self.tokens.remove_hash(digest)
                self.live[hosted.organiser] -= 1
                if not self.live[hosted.organiser]:
                    del self.live[hosted.organiser]
                hosted.done.set()
                for callback in list(hosted.watchers.values()):
                    callback(None)
                hosted.watchers.clear()
                self.nursery.start_soon(self._forget_later, hosted)

    async def _forget_later(self, hosted: HostedMatch) -> None:
        """Drop a finished match from memory after the retention time; its record stays
        on disk, where Get and FetchRecord still find it."""
        await trio.sleep(self.limits.retention_s)
        if self.matches.get(hosted.id) is hosted:
            del self.matches[hosted.id]
            log.debug("match_forgotten", match_id=hosted.id)

    async def _finish_failed(self, hosted: HostedMatch) -> None:
        """A failed match (a write error, a crash) still ends for its bots: every seat
        gets ``MatchEnd`` with reason ``failed`` and its stream is closed."""
        start = hosted.spec.rules.start_level
        levels = hosted.referee.match.levels if hosted.referee else (start, start)
        deals = hosted.referee.match.deal.deal if hosted.referee else 0
        result = MatchEnded(None, tuple(levels), deals, "failed", detail=hosted.error)  # type: ignore[arg-type]
        with trio.move_on_after(2) as scope:
            scope.shield = True
            for seat in hosted.seats:
                try:
                    await seat.finish(result, [], hosted.record)
                except Exception:  # a seat that cannot be told must not stop the others
                    log.exception("seat_not_told_of_failure")

    async def _await_seats(self, hosted: HostedMatch) -> list[int]:
        """Wait until every remote seat is taken or abandoned, or the connect timeout;
        return the seats still empty. Stops early once both teams lack a seat."""
        remotes = [r for s in range(4) if (r := hosted.remote(s)) is not None]

        def empty() -> list[int]:
            return [r.seat for r in remotes if not r.ever_connected.is_set()]

        with trio.move_on_after(hosted.spec.connect_timeout):
            while True:
                waiting = [s for s in empty() if s not in hosted.abandoned]
                if not waiting or len({s % 2 for s in hosted.abandoned}) == 2:
                    break
                hosted.news = trio.Event()
                async with trio.open_nursery() as nursery:

                    async def wake_on(event: trio.Event) -> None:
                        await event.wait()
                        nursery.cancel_scope.cancel()

                    nursery.start_soon(wake_on, hosted.news)
                    for seat in waiting:
                        remote = hosted.remote(seat)
                        assert remote is not None
                        nursery.start_soon(wake_on, remote.ever_connected)
        return empty()

    def _missing_reason(self, hosted: HostedMatch, seats: list[int], waited: float) -> str:
        timeout = hosted.spec.connect_timeout
        absent = f"never connected within {timeout:g} s" if waited >= timeout else "not connected"
        why = [f"seat {s} {hosted.abandoned.get(s, absent)}" for s in seats]
        return clip("; ".join(why), MAX_REASON)

    async def _run(self, hosted: HostedMatch) -> None:
        spec = hosted.spec
        waiting_since = trio.current_time()
        missing = await self._await_seats(hosted)
        waited = trio.current_time() - waiting_since
        if missing:
            log.warning("seats_missing_at_start", seats=missing)
        if hosted.restored is not None or not spec.missing_forfeits:
            missing = []  # a resumed match goes on; absent seats are faulted
        recorder: Recorder | None = None
        resume: Resume | None = None
        if hosted.restored is not None:
            done = hosted.restored
            recorder = reopen(done.record)
            resume = Resume(done.match, done.seq, done.team_faults, done.bank_used_ms, done.written)
        elif self.recorder_factory is not None:
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
        past = referee.watch(partial(self._fan_out, hosted))
        hosted.watched = past[-1][0] + 1 if past else 0
        if missing:  # a missing seat cannot win: its team forfeits, or nobody plays
            teams = sorted({s % 2 for s in missing})
            reason = self._missing_reason(hosted, missing, waited)
            if len(teams) == 1:
                referee.end_before_start(teams[0], reason)
            else:
                referee.end_before_start(None, f"void: {reason}")
        hosted.state = MatchState.RUNNING
        hosted.report = await hosted.referee.run()
        hosted.state = MatchState.FINISHED

    async def _finish_cancelled(self, hosted: HostedMatch) -> None:
        start = hosted.spec.rules.start_level
        result = hosted.result or MatchEnded(None, (start, start), 0, "cancelled")
        with trio.move_on_after(2) as scope:
            scope.shield = True
            for seat in hosted.seats:
                await seat.finish(result, [], hosted.record)

    def _welcomer(self, hosted: HostedMatch, seat: int) -> Callable[[bool], pb.RefereeMessage]:
        def welcome(resumed: bool) -> pb.RefereeMessage:
            spec = hosted.spec
            names = list(spec.seat_names) or [s.name for s in hosted.seats]
            return pb.RefereeMessage(
                welcome=pb.Welcome(
                    seat=seat,
                    match_id=hosted.id,
                    rules=convert.rules_to_pb(spec.rules),
                    time_control=convert.time_control_to_pb(spec.time_control),
                    seat_names=names,
                    protocol=PROTOCOL,
                    resumed=resumed,
                    deals=spec.rules.deals or 0,
                    policy=spec.policy.kind.value,
                    max_faults=spec.policy.max_faults,
                )
            )

        return welcome

    def info(self, hosted: HostedMatch) -> pb.MatchInfo:
        state = {
            MatchState.WAITING: pb.WAITING,
            MatchState.RUNNING: pb.RUNNING,
            MatchState.FINISHED: pb.FINISHED,
            MatchState.CANCELLED: pb.CANCELLED,
            MatchState.FAILED: pb.FAILED,
        }[hosted.state]
        connected = [(r.conn is not None) if (r := hosted.remote(s)) else True for s in range(4)]
        info = pb.MatchInfo(
            match_id=hosted.id,
            state=state,
            seat_names=list(hosted.spec.seat_names) or [s.name for s in hosted.seats],
            connected=connected,
            rules=convert.rules_to_pb(hosted.spec.rules),
            time_control=convert.time_control_to_pb(hosted.spec.time_control),
            error=hosted.error,
        )
        if hosted.referee is not None:
            match = hosted.referee.match
            info.deal = match.deal.deal
            info.levels.extend(convert.rank_to_pb(r) for r in match.levels)
            if match.result is not None:
                info.result.CopyFrom(convert.result_to_pb(match.result, hosted.referee.faults))
        return info
