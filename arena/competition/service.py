"""The ``arena.v1.Lobby`` servicer (asyncio thread): admit a bot key, stream seat offers.

It holds no state of its own: :class:`~arena.competition.lobby.Lobby` (trio thread)
checks the key and decides; this only crosses the bridge and writes what comes back.
The bot key travels in the request (like a seat token in ``Hello``), so the access
table admits ``Lobby/Join`` to anyone and the lobby answers UNAUTHENTICATED itself.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import trio

from arena.competition.lobby import JoinRefused, Lobby
from arena.competition.standings import standings
from arena.competition.store import Store, open_store
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
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

Ctx = grpc.aio.ServicerContext[Any, Any]


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
        try:
            bot: str = await run_in_trio(
                self.trio, self.lobby.join, request, conn, outbox.send_nowait, outbox.close_nowait
            )
        except JoinRefused as refusal:
            await context.abort(refusal.code, refusal.message)
        try:
            async for message in outbox:
                yield message
        finally:
            call_in_trio_nowait(self.trio, self.lobby.leave, bot, conn)


def lobby_plugin(database: Path, records: str) -> Plugin:
    """The ``Lobby`` service and its scheduler for :func:`~arena.server.app.open_arena_server`
    (the database is opened on the trio thread, which is the only one to use it)."""

    def plug(host: MatchHost, trio_token: trio.lowlevel.TrioToken) -> Extension:
        lobby = Lobby(open_store(database), host, records)
        servicer = LobbyService(lobby, trio_token)

        def closing() -> None:
            lobby.closing = True

        return Extension(
            name="arena.v1.Lobby",
            register=partial(pb_grpc.add_LobbyServicer_to_server, servicer),
            run=lobby.run,
            closing=closing,
        )

    return plug


class CompetitionService(pb_grpc.CompetitionServicer):
    """Standings over gRPC (organiser or spectator; :mod:`arena.server.access` checks)."""

    def __init__(self, store: Store, trio_token: trio.lowlevel.TrioToken) -> None:
        self.store = store
        self.trio = trio_token

    async def Standings(self, request: pb.StandingsRequest, context: Ctx) -> pb.StandingsReply:
        def read() -> pb.StandingsReply:
            event = self.store.event(request.event)
            data = standings(self.store.matches(event.name))
            return pb.StandingsReply(
                event=event.name,
                format=event.format,
                state=event.state,
                standings_json=json.dumps(data, sort_keys=True),
            )

        try:
            return await run_in_trio(self.trio, read)
        except ArenaError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
            raise  # unreachable: abort raises


def standings_plugin(database: Path) -> Plugin:
    """The ``Competition`` service (standings) for :func:`~arena.server.app.open_arena_server`."""

    def plug(host: MatchHost, trio_token: trio.lowlevel.TrioToken) -> Extension:
        servicer = CompetitionService(open_store(database), trio_token)
        return Extension(
            name="arena.v1.Competition",
            register=partial(pb_grpc.add_CompetitionServicer_to_server, servicer),
        )

    return plug
