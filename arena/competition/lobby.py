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

The matches run in a :class:`~arena.competition.places.Place`: this process, or the
workers of ``arena serve --workers N`` (then each offer names the worker's address).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import structlog
import trio

from arena.competition.places import Outcome, Place, Placed
from arena.competition.results import result_of_record
from arena.competition.schedule import ladder_table, swiss_round
from arena.competition.standings import standings
from arena.competition.store import PENDING, RUNNING, Bot, EventMatch, Store
from arena.errors import ArenaError
from arena.game import Termination
from arena.server import MatchState
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
    """An event match this server is running: where it belongs, where it runs, and its
    seat tokens."""

    event: str
    index: int
    seats: tuple[str, ...]
    placed: Placed


class JoinRefused(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Lobby:
    """Bots waiting to play and the event matches they play (trio thread only)."""

    def __init__(self, store: Store, place: Place, records: str) -> None:
        self.store = store
        self.place = place
        self.records = Path(records)
        self.members: dict[str, Member] = {}
        self.running: dict[str, Seated] = {}  # by match id
        self.closing = False  # the server is stopping: cancelled matches go back to the queue
        self._rating_cache: dict[str, tuple[int, dict[str, tuple[float, float]]]] = {}

    # -- the lobby streams ---------------------------------------------------------------

    def join(
        self,
        bot: Bot | None,
        request: pb.LobbyJoin,
        conn: int,
        send: Callable[[pb.LobbyMessage], object],
        close: Callable[[], object],
    ) -> str:
        """Admit ``bot``, the bot whose key the request holds (looked up by the caller,
        off this thread); returns its registered name.

        Raises:
            JoinRefused: an unknown or rotated key, a disabled bot, or one already here.
        """
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
                    seat_token=seated.placed.tokens[seat],
                    event=seated.event,
                    seat_address=seated.placed.address,
                )
                member.send(pb.LobbyMessage(offer=offer))

    # -- the scheduler -------------------------------------------------------------------

    async def run(self) -> None:
        """Recover from a crash, then seat bots as long as the server runs."""
        await self.recover()
        while True:
            try:
                await self.schedule()
            except Exception:  # a bad event or a database error must not stop the server
                log.exception("schedule_failed")
            await trio.sleep(TICK)

    async def recover(self) -> None:
        for event in self.store.events(RUNNING):
            for m in self.store.matches(event.name, RUNNING):
                if m.match_id and self.place.hosts(m.match_id):  # restored from its record
                    try:
                        self._watch(m, await self.place.reseat(m.match_id))
                    except ArenaError:  # its worker died meanwhile: its bots get no offer
                        log.exception("event_match_reseat_failed", match_id=m.match_id)
                        continue
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

    async def schedule(self) -> None:
        """Start every pending match whose bots are all free in the lobby.

        The database work (reading the events, pairing the next Swiss round or ladder
        tables, choosing the matches to start) runs in a worker thread on a snapshot of
        the lobby, so a slow database (PostgreSQL over a network) never holds the
        referee's loop; the matches are then created here."""
        capacity = {name: member.parallel for name, member in self.members.items()}
        for seated in self.running.values():
            for name in set(seated.seats):
                if name in capacity:
                    capacity[name] -= 1
        ready = await trio.to_thread.run_sync(self._ready_matches, capacity)
        for settings, m in ready:
            if all(n in self.members for n in m.seats):  # nobody left meanwhile
                await self._start(settings, m)

    def _ready_matches(self, capacity: dict[str, int]) -> list[tuple[dict[str, Any], EventMatch]]:
        """(worker thread) The pending matches to start now: every bot in the lobby,
        enabled, below its parallel matches; pairs the next Swiss round or ladder tables
        first. ``capacity``: matches each bot in the lobby may still take."""
        enabled = self.store.enabled_bots()

        def free(name: str) -> bool:
            return capacity.get(name, 0) > 0 and name in enabled

        ready = []
        for event in self.store.events(RUNNING):
            if event.format == "swiss":
                self._next_swiss_round(event.name, event.settings)
            elif event.format == "ladder":
                self._next_ladder_tables(event.name, event.settings, free, sorted(capacity))
            for m in self.store.matches(event.name, PENDING):
                names = set(m.seats)
                if all(free(n) for n in names):
                    ready.append((event.settings, m))
                    for n in names:
                        capacity[n] -= 1
        return ready

    def _next_ladder_tables(
        self,
        name: str,
        settings: dict[str, Any],
        free: Callable[[str], bool],
        present: list[str],
    ) -> None:
        """Pair ladder tables from the free bots (:func:`ladder_table`, by rating and
        uncertainty) while four are free, up to the event's matches (0: no end). A bot
        already in a pending match of the ladder is kept for it (it starts when all four
        are back), so a bot that left does not hold up the others. A ladder created with
        no bots (``--bots all``) takes every registered bot in the lobby."""
        matches = self.store.matches(name)
        limit = int(settings.get("matches", 0))
        waiting = {n for m in matches if m.state == PENDING for n in m.seats}
        pool = settings.get("bots") or present
        candidates = [n for n in dict.fromkeys(pool) if n not in waiting and free(n)]
        if len(candidates) < 4 or (limit and len(matches) >= limit):
            return
        rated = self._ratings(name, matches)
        ratings = {n: rated.get(n, (0.0, 25 / 3)) for n in candidates}
        table: list[tuple[tuple[str, ...], int]] = []
        count = len(matches)
        while limit == 0 or count < limit:
            seats = ladder_table(candidates, ratings)
            if seats is None:
                break
            seed = random.Random(f"{settings.get('seed', 0)}/{count}").randrange(2**63)
            table.append((seats, seed))
            count += 1
            if settings.get("duplicate", True) and (limit == 0 or count < limit):
                table.append(((seats[3], seats[0], seats[1], seats[2]), seed))
                count += 1
            candidates = [n for n in candidates if n not in seats]
        self.store.add_matches(name, table)
        log.info("ladder_paired", event_name=name, matches=len(table))

    def _ratings(self, name: str, matches: list[EventMatch]) -> dict[str, tuple[float, float]]:
        """(ordinal, sigma) per bot, recomputed only when another match has finished."""
        done = sum(1 for m in matches if m.state not in (PENDING, RUNNING))
        cached = self._rating_cache.get(name)
        if cached is None or cached[0] != done:
            rows = standings(matches)["bots"]
            cached = (done, {r["bot"]: (r["ordinal"], r["sigma"]) for r in rows})
            self._rating_cache[name] = cached
        return cached[1]

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

    async def _start(self, settings: dict[str, Any], m: EventMatch) -> None:
        placed = await self.place.create(settings, m.seed, m.seats)
        # stored before any seat is offered (a crash now leaves a record to resume)
        await trio.to_thread.run_sync(self.store.mark_running, m.event, m.index, placed.match_id)
        log.info(
            "event_match_started",
            event_name=m.event,
            index=m.index,
            match_id=placed.match_id,
            address=placed.address,
        )
        self._watch(m, placed)

    def _watch(self, m: EventMatch, placed: Placed) -> None:
        seated = Seated(m.event, m.index, m.seats, placed)
        self.running[placed.match_id] = seated
        for name in set(m.seats):
            if name in self.members:
                self._offer(self.members[name], placed.match_id, seated)
        self.place.nursery.start_soon(self._settle, seated)

    def _store_result(self, outcome: Outcome, event: str, index: int) -> None:
        """(worker thread) The match's result, read from its record, into the database."""
        error = outcome.error
        try:
            result = result_of_record(outcome.record) if outcome.record else None
        except ArenaError as exc:
            result, error = None, error or str(exc)
        if outcome.state is MatchState.FINISHED and result is not None:
            self.store.mark_finished(event, index, "finished", outcome.record, result)
        else:
            state = "failed" if outcome.state is MatchState.FAILED else "cancelled"
            self.store.mark_finished(event, index, state, outcome.record, {"error": error})

    def _drop_no_shows(self, seated: Seated, outcome: Outcome) -> None:
        """A bot that never took a seat it was offered leaves the lobby (its stream is
        closed), so it is not seated again until it comes back: one silent bot must not
        spoil every match of an event."""
        if outcome.state is not MatchState.FINISHED:  # it never started, or broke
            return
        for seat in outcome.absent:
            name = seated.seats[seat]
            member = self.members.get(name)
            if member is None:
                continue
            log.warning("lobby_no_show", bot=name, match_id=seated.placed.match_id, seat=seat)
            del self.members[name]
            member.close()

    async def _settle(self, seated: Seated) -> None:
        """Wait for the match to end; record its result (or requeue it)."""
        match_id = seated.placed.match_id
        outcome = await self.place.outcome(match_id)
        self.running.pop(match_id, None)
        ev, i = seated.event, seated.index
        if outcome.lost or (outcome.state is MatchState.CANCELLED and self.closing):
            # it never started (its worker died), or the server stopped: play it again
            await trio.to_thread.run_sync(self.store.mark_pending, ev, i)
            log.info("event_match_requeued", event_name=ev, index=i, match_id=match_id)
            return
        await trio.to_thread.run_sync(self._store_result, outcome, ev, i)
        log.info(
            "event_match_ended",
            event_name=ev,
            index=i,
            match_id=match_id,
            state=outcome.state.value,
        )
        self._drop_no_shows(seated, outcome)  # after the result is stored: the bot may watch
