"""The competition's gRPC services (asyncio thread): ``arena.v1.Lobby`` (admit a bot
key, stream seat offers) and ``arena.v1.Competition`` (the organiser's operations and
the standings).

The Lobby servicer holds no state of its own: it looks the key's bot up in the database
(a worker thread), and :class:`~arena.competition.lobby.Lobby` (trio thread) decides;
this only crosses the bridge and writes what comes back. The bot key travels in the
request (like a seat token in ``Hello``), so the access table admits ``Lobby/Join`` to
anyone and the lobby answers UNAUTHENTICATED itself.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any, TypeVar

import grpc
import structlog
import trio

from arena.competition.lobby import JoinRefused, Lobby
from arena.competition.organiser import LocalOrganiser
from arena.competition.places import LocalPlace, Place
from arena.competition.shards import WorkersPlace
from arena.competition.store import NameTaken, NotFound, open_store
from arena.competition.wire import bot_to_pb, plan_from_pb, progress_to_pb
from arena.errors import ArenaError
from arena.server import (
    PROTOCOL,
    AsyncioOutbox,
    Extension,
    MatchHost,
    Plugin,
    call_in_trio_nowait,
    run_in_trio,
)
from arena.server.workers.ledger import Ledger
from arena.server.workers.pool import WorkerPool
from arena.server.workers.run import Extend
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

Ctx = grpc.aio.ServicerContext[Any, Any]
T = TypeVar("T")
log = structlog.get_logger()


class LobbyService(pb_grpc.LobbyServicer):
    def __init__(self, lobby: Lobby, trio_token: trio.lowlevel.TrioToken) -> None:
        self.lobby = lobby
        self.trio = trio_token
        self._ids = itertools.count(1)

    async def Join(self, request: pb.LobbyJoin, context: Ctx) -> AsyncIterator[pb.LobbyMessage]:
        if request.protocol not in (0, PROTOCOL):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol {request.protocol} unsupported; this server speaks {PROTOCOL}",
            )
        outbox = AsyncioOutbox[pb.LobbyMessage]()
        conn = next(self._ids)
        # the key's bot is looked up here, in a worker thread: never on the referee's loop
        found = await asyncio.to_thread(self.lobby.store.bot_by_key, request.bot_key)
        try:
            bot: str = await run_in_trio(
                self.trio,
                self.lobby.join,
                found if request.bot_key else None,
                request,
                conn,
                outbox.send_nowait,
                outbox.close_nowait,
            )
        except JoinRefused as refusal:
            await context.abort(refusal.code, refusal.message)
        try:
            async for message in outbox:
                yield message
        finally:
            call_in_trio_nowait(self.trio, self.lobby.leave, bot, conn)


def lobby_plugin(database: str, records: str) -> Plugin:
    """The ``Lobby`` service and its scheduler for :func:`~arena.server.app.open_arena_server`
    (the database is opened on the trio thread, which is the only one to use it)."""

    def plug(host: MatchHost, trio_token: trio.lowlevel.TrioToken) -> Extension:
        return lobby_extension(database, records, LocalPlace(host), trio_token)

    return plug


def lobby_extension(
    database: str, records: str, place: Place, trio_token: trio.lowlevel.TrioToken
) -> Extension:
    """The ``Lobby`` service and its scheduler, seating bots in matches that run in
    ``place`` (this process, or the workers of ``arena serve --workers N``)."""
    lobby = Lobby(open_store(database), place, records)
    servicer = LobbyService(lobby, trio_token)

    def closing() -> None:
        lobby.closing = True

    return Extension(
        name="arena.v1.Lobby",
        register=partial(pb_grpc.add_LobbyServicer_to_server, servicer),
        run=lobby.run,
        closing=closing,
    )


def front_extensions(database: str, records: str) -> Extend:
    """The lobby (its matches in the workers, :mod:`arena.competition.shards`) and the
    ``Competition`` service for the front of ``arena serve --workers N``."""

    def extend(
        pool: WorkerPool, ledger: Ledger, nursery: trio.Nursery, token: trio.lowlevel.TrioToken
    ) -> list[Extension]:
        place = WorkersPlace(pool, ledger, nursery)
        store = open_store(database)

        def pages(guard: Any) -> Any:  # the front's /events pages (Starlette: only for --http)
            from arena.competition.web import standings_routes

            return standings_routes(store)(guard)

        return [
            lobby_extension(database, records, place, token),
            Extension(
                name="arena.v1.Competition",
                register=partial(
                    pb_grpc.add_CompetitionServicer_to_server,
                    CompetitionService(LocalOrganiser(store)),
                ),
                http_routes=pages,
            ),
        ]

    return extend


class CompetitionService(pb_grpc.CompetitionServicer):
    """The ``Competition`` service: the organiser's operations
    (:class:`~arena.competition.organiser.LocalOrganiser`) over gRPC. Who may call what
    is :data:`arena.server.access.REQUIRED`'s business (Standings: watchers; the rest:
    the organiser). The database is used from a worker thread, never the event loop."""

    def __init__(self, organiser: LocalOrganiser) -> None:
        self.organiser = organiser

    async def _run(self, context: Ctx, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except NotFound as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        except NameTaken as exc:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, str(exc))
        except ArenaError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        raise AssertionError("unreachable: abort raises")

    async def Standings(self, request: pb.StandingsRequest, context: Ctx) -> pb.StandingsReply:
        found = await self._run(context, partial(self.organiser.standings, request.event))
        return pb.StandingsReply(
            event=found.name,
            format=found.format,
            state=found.state,
            standings_json=json.dumps(found.data, sort_keys=True),
        )

    async def AddBot(self, request: pb.AddBotRequest, context: Ctx) -> pb.BotKeyReply:
        add = partial(self.organiser.add_bot, request.name, request.owner)
        key = await self._run(context, add)
        log.info("bot_registered", bot=request.name, owner=request.owner, by="grpc")
        return pb.BotKeyReply(bot=request.name, bot_key=key)

    async def RotateBotKey(self, request: pb.RotateBotKeyRequest, context: Ctx) -> pb.BotKeyReply:
        key = await self._run(context, partial(self.organiser.rotate_key, request.name))
        log.info("bot_key_rotated", bot=request.name, by="grpc")
        return pb.BotKeyReply(bot=request.name, bot_key=key)

    async def SetBotDisabled(self, request: pb.SetBotDisabledRequest, context: Ctx) -> pb.BotInfo:
        change = partial(self.organiser.set_disabled, request.name, request.disabled)
        return bot_to_pb(await self._run(context, change))

    async def ListBots(self, request: pb.ListBotsRequest, context: Ctx) -> pb.ListBotsReply:
        bots = await self._run(context, self.organiser.bots)
        return pb.ListBotsReply(bots=[bot_to_pb(b) for b in bots])

    async def CreateEvent(
        self, request: pb.CreateEventRequest, context: Ctx
    ) -> pb.CreateEventReply:
        summary, count = await self._run(
            context, lambda: self.organiser.create_event(plan_from_pb(request))
        )
        log.info("event_created", event_name=request.name, matches=count, by="grpc")
        return pb.CreateEventReply(event=request.name, summary=summary, matches=count)

    async def ListEvents(self, request: pb.ListEventsRequest, context: Ctx) -> pb.ListEventsReply:
        events = await self._run(context, self.organiser.events)
        return pb.ListEventsReply(events=[progress_to_pb(e) for e in events])

    async def FinishEvent(self, request: pb.FinishEventRequest, context: Ctx) -> pb.EventInfo:
        done = await self._run(context, partial(self.organiser.finish_event, request.name))
        log.info("event_finished", event_name=request.name, by="grpc")
        return progress_to_pb(done)


def competition_plugin(database: str) -> Plugin:
    """The ``Competition`` service for :func:`~arena.server.app.open_arena_server`."""

    def plug(host: MatchHost, trio_token: trio.lowlevel.TrioToken) -> Extension:
        from arena.competition.web import standings_routes  # Starlette: only for --http

        store = open_store(database)
        servicer = CompetitionService(LocalOrganiser(store))
        return Extension(
            name="arena.v1.Competition",
            register=partial(pb_grpc.add_CompetitionServicer_to_server, servicer),
            http_routes=standings_routes(store),
        )

    return plug
