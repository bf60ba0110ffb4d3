"""The lobby and the scheduler (trio thread): seat registered bots in events' matches.

A bot in the lobby holds one ``Lobby.Join`` stream. The scheduler looks at the running
events every :data:`TICK` seconds and creates each pending match whose bots are all in
the lobby, enabled, and below the number of matches they said they play at once; it
marks the match running in the database *before* offering the seats, and finished (with
the result read from the record) once it ends. A bot that is not in the lobby is simply
not seated — leaving between matches is no fault; one that drops inside a match is
handled by the referee as always (reconnect grace, then faults).

After a crash, :meth:`Lobby.recover` squares the database with the records: a match
restored from its record gets fresh seat tokens (offered again when its bots rejoin), a
match whose record is complete is taken as finished, a match with no record never
started and goes back to the queue — so no match is lost or played twice.
"""

from __future__ import annotations

import dataclasses
import random
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio

from arena.competition.results import result_of_record
from arena.competition.schedule import ladder_table, swiss_round
from arena.competition.standings import standings
from arena.competition.store import PENDING, RUNNING, EventMatch, Store
from arena.errors import ArenaError
from arena.game import Termination
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet
from arena.server import HostedMatch, MatchHost, MatchSpec, MatchState, token_hash
from arena.v1 import arena_pb2 as pb

log = structlog.get_logger()
TICK = 0.2


@dataclasses.dataclass
class Member:
    """One bot in the lobby: its stream (``send``/``close`` cross to asyncio)."""

    bot: str
    conn: int
    parallel: int
    send: Callable[[pb.LobbyMessage], object]
    close: Callable[[], object]


@dataclasses.dataclass
class Seated:
    """An event match this server is running: where it belongs and its seat tokens."""

    event: str
    index: int
    seats: tuple[str, ...]
    tokens: list[str]
    hosted: HostedMatch


class JoinRefused(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Lobby:
    """Bots waiting to play and the event matches they play (trio thread only)."""

    def __init__(self, store: Store, host: MatchHost, records: str) -> None:
        self.store = store
        self.host = host
        self.records = Path(records)
        self.members: dict[str, Member] = {}
        self.running: dict[str, Seated] = {}  # by match id
        self.closing = False  # the server is stopping: cancelled matches go back to the queue

    # -- the lobby streams ---------------------------------------------------------------

    def join(
        self,
        request: pb.LobbyJoin,
        conn: int,
        send: Callable[[pb.LobbyMessage], object],
        close: Callable[[], object],
    ) -> str:
        """Admit a bot by its key; returns its registered name.

        Raises:
            JoinRefused: an unknown or rotated key, a disabled bot, or one already here.
        """
        bot = self.store.bot_by_key(request.bot_key) if request.bot_key else None
        if bot is None:
            raise JoinRefused(grpc.StatusCode.UNAUTHENTICATED, "unknown bot key")
        if bot.disabled:
            raise JoinRefused(
                grpc.StatusCode.PERMISSION_DENIED, f"the bot {bot.name!r} is disabled"
            )
        if bot.name in self.members:
            raise JoinRefused(
                grpc.StatusCode.ALREADY_EXISTS, f"the bot {bot.name!r} is already in the lobby"
            )
        member = Member(bot.name, conn, max(1, min(request.parallel or 1, 64)), send, close)
        self.members[bot.name] = member
        send(pb.LobbyMessage(welcome=pb.LobbyWelcome(bot=bot.name, parallel=member.parallel)))
        log.info("lobby_joined", bot=bot.name, parallel=member.parallel, version=request.version)
        for match_id, seated in self.running.items():  # back after a drop or a restart
            self._offer(member, match_id, seated)
        return bot.name

    def leave(self, bot: str, conn: int) -> None:
        member = self.members.get(bot)
        if member is not None and member.conn == conn:
            del self.members[bot]
            log.info("lobby_left", bot=bot)

    def _offer(self, member: Member, match_id: str, seated: Seated) -> None:
        for seat, name in enumerate(seated.seats):
            if name == member.bot:
                offer = pb.SeatOffer(
                    match_id=match_id,
                    seat=seat,
                    seat_token=seated.tokens[seat],
                    event=seated.event,
                )
                member.send(pb.LobbyMessage(offer=offer))

    # -- the scheduler -------------------------------------------------------------------

    async def run(self) -> None:
        """Recover from a crash, then seat bots as long as the server runs."""
        self.recover()
        while True:
            try:
                self.schedule()
            except Exception:  # a bad event or a database error must not stop the server
                log.exception("schedule_failed")
            await trio.sleep(TICK)

    def recover(self) -> None:
        for event in self.store.events(RUNNING):
            for m in self.store.matches(event.name, RUNNING):
                hosted = self.host.matches.get(m.match_id or "")
                if hosted is not None:  # restored from its record by arena serve
                    tokens = []
                    for seat in range(4):
                        token = secrets.token_hex(24)
                        self.host.tokens.add(token, hosted, seat)
                        hosted.token_hashes.append(token_hash(token))
                        tokens.append(token)
                    self._watch(m, hosted, tokens)
                    log.info(
                        "event_match_resumed",
                        event_name=m.event,
                        index=m.index,
                        match_id=m.match_id,
                    )
                    continue
                record = self.records / f"{m.match_id}.jsonl"
                try:
                    result = result_of_record(record)
                    if result["reason"] is Termination.CANCELLED:  # stopped with the server: replay
                        raise ArenaError("cancelled")
                except ArenaError:
                    log.info("event_match_requeued", event_name=m.event, index=m.index)
                    self.store.mark_pending(m.event, m.index)
                    continue
                log.info("event_match_found_finished", event_name=m.event, index=m.index)
                self.store.mark_finished(m.event, m.index, "finished", str(record), result)

    def schedule(self) -> None:
        """Start every pending match whose bots are all free in the lobby."""
        load: dict[str, int] = {}
        for seated in self.running.values():
            for name in set(seated.seats):
                load[name] = load.get(name, 0) + 1
        for event in self.store.events(RUNNING):
            if event.format == "swiss":
                self._next_swiss_round(event.name, event.settings)
            elif event.format == "ladder":
                self._next_ladder_match(event.name, event.settings, load)
            for m in self.store.matches(event.name, PENDING):
                names = set(m.seats)
                if all(
                    n in self.members
                    and load.get(n, 0) < self.members[n].parallel
                    and self.store.enabled(n)
                    for n in names
                ):
                    self._start(event.settings, m)
                    for n in names:
                        load[n] = load.get(n, 0) + 1

    def _next_ladder_match(self, name: str, settings: dict[str, Any], load: dict[str, int]) -> None:
        """Pair the next ladder table from the free bots, up to the event's matches."""
        matches = self.store.matches(name)
        limit = int(settings.get("matches", 0))
        if len(matches) >= limit or any(m.state == PENDING for m in matches):
            return
        free = [
            n
            for n in settings.get("bots", [])
            if n in self.members
            and load.get(n, 0) < self.members[n].parallel
            and self.store.enabled(n)
        ]
        rated = {r["bot"]: (r["ordinal"], r["sigma"]) for r in standings(matches)["bots"]}
        ratings = {n: rated.get(n, (0.0, 25 / 3)) for n in free}
        seats = ladder_table(free, ratings)
        if seats is None:
            return
        seed = random.Random(f"{settings.get('seed', 0)}/{len(matches)}").randrange(2**63)
        table: list[tuple[tuple[str, ...], int]] = [(seats, seed)]
        if settings.get("duplicate", True) and len(matches) + 2 <= limit:
            table.append(((seats[3], seats[0], seats[1], seats[2]), seed))
        self.store.add_matches(name, table)

    def _next_swiss_round(self, name: str, settings: dict[str, Any]) -> None:
        """Pair the next Swiss round by the standings once the last one is over."""
        matches = self.store.matches(name)
        round_no = int(settings.get("round", 1))
        if round_no >= int(settings.get("rounds", 1)) or any(
            m.state in (PENDING, RUNNING) for m in matches
        ):
            return
        ranking = [row["bot"] for row in standings(matches)["bots"]]
        pairs = swiss_round(
            ranking,
            round_no + 1,
            bool(settings.get("duplicate", True)),
            int(settings.get("seed", 0)),
        )
        self.store.add_round(name, round_no + 1, pairs)
        log.info("swiss_round_paired", event_name=name, round=round_no + 1, matches=len(pairs))

    def _start(self, settings: dict[str, Any], m: EventMatch) -> None:
        rules = RuleSet.from_mapping(settings.get("rules", {}))
        spec = MatchSpec(
            rules=rules,
            seed=m.seed,
            time_control=TimeControl.from_dict(settings.get("time_control", {})),
            policy=FaultPolicy.from_dict(
                {"kind": settings.get("policy"), "max_faults": settings.get("max_faults")}
            ),
            seat_names=m.seats,
            connect_timeout=float(settings.get("connect_timeout", 30)),
        )
        hosted = self.host.create(spec)
        self.store.mark_running(m.event, m.index, hosted.id)  # before any seat is offered
        log.info("event_match_started", event_name=m.event, index=m.index, match_id=hosted.id)
        self._watch(m, hosted, [t or "" for t in hosted.tokens])

    def _watch(self, m: EventMatch, hosted: HostedMatch, tokens: list[str]) -> None:
        seated = Seated(m.event, m.index, m.seats, tokens, hosted)
        self.running[hosted.id] = seated
        for name in set(m.seats):
            if name in self.members:
                self._offer(self.members[name], hosted.id, seated)
        self.host.nursery.start_soon(self._settle, seated)

    def _drop_no_shows(self, seated: Seated) -> None:
        """A bot that never took a seat it was offered leaves the lobby (its stream is
        closed), so it is not seated again until it comes back: one silent bot must not
        spoil every match of an event."""
        for seat, name in enumerate(seated.seats):
            remote = seated.hosted.remote(seat)
            member = self.members.get(name)
            if remote is None or remote.ever_connected.is_set() or member is None:
                continue
            if seated.hosted.state is not MatchState.FINISHED:  # it never started, or broke
                continue
            log.warning("lobby_no_show", bot=name, match_id=seated.hosted.id, seat=seat)
            del self.members[name]
            member.close()

    async def _settle(self, seated: Seated) -> None:
        """Wait for the match to end; record its result (or requeue it)."""
        hosted = seated.hosted
        await hosted.done.wait()
        self.running.pop(hosted.id, None)
        ev, i = seated.event, seated.index
        if hosted.state is MatchState.CANCELLED and self.closing:
            self.store.mark_pending(ev, i)  # the server stopped: play it again next time
            return
        try:
            result = result_of_record(hosted.record) if hosted.record else None
        except ArenaError as exc:
            result, hosted.error = None, hosted.error or str(exc)
        if hosted.state is MatchState.FINISHED and result is not None:
            self.store.mark_finished(ev, i, "finished", hosted.record, result)
        else:
            state = "failed" if hosted.state is MatchState.FAILED else "cancelled"
            self.store.mark_finished(ev, i, state, hosted.record, {"error": hosted.error})
        log.info(
            "event_match_ended",
            event_name=ev,
            index=i,
            match_id=hosted.id,
            state=hosted.state.value,
        )
        self._drop_no_shows(seated)  # after the result is stored: the bot may watch for it
