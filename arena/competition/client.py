"""The organiser's operations over gRPC: :class:`RemoteOrganiser` calls the server's
``Competition`` service with the organiser token (``arena bots|events --server``).

A refusal comes back as one ArenaError line naming the gRPC status and the server's
message ("NOT_FOUND: no bot named 'x'"), as ``arena matches`` reports them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeVar

import grpc

from arena.competition.organiser import EventProgress, EventStandings
from arena.competition.plan import EventPlan
from arena.competition.store import Bot
from arena.competition.wire import bot_from_pb, plan_to_pb, progress_from_pb
from arena.errors import ArenaError
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

T = TypeVar("T")


class RemoteOrganiser:
    """The :class:`~arena.competition.organiser.Organiser` of a running ``arena serve``."""

    def __init__(self, channel: grpc.Channel, token: str, timeout: float = 10.0) -> None:
        self.channel = channel
        self.stub = pb_grpc.CompetitionStub(channel)
        self.metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.timeout = timeout

    def _call(self, method: Callable[..., T], request: object) -> T:
        try:
            return method(request, metadata=self.metadata, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise ArenaError(f"{exc.code().name}: {exc.details()}") from None

    def add_bot(self, name: str, owner: str) -> str:
        reply = self._call(self.stub.AddBot, pb.AddBotRequest(name=name, owner=owner))
        return reply.bot_key

    def rotate_key(self, name: str) -> str:
        return self._call(self.stub.RotateBotKey, pb.RotateBotKeyRequest(name=name)).bot_key

    def set_disabled(self, name: str, disabled: bool) -> Bot:
        request = pb.SetBotDisabledRequest(name=name, disabled=disabled)
        return bot_from_pb(self._call(self.stub.SetBotDisabled, request))

    def bots(self) -> list[Bot]:
        reply = self._call(self.stub.ListBots, pb.ListBotsRequest())
        return [bot_from_pb(b) for b in reply.bots]

    def create_event(self, plan: EventPlan) -> tuple[str, int]:
        reply = self._call(self.stub.CreateEvent, plan_to_pb(plan))
        return reply.summary, reply.matches

    def events(self) -> list[EventProgress]:
        reply = self._call(self.stub.ListEvents, pb.ListEventsRequest())
        return [progress_from_pb(e) for e in reply.events]

    def finish_event(self, name: str) -> EventProgress:
        reply = self._call(self.stub.FinishEvent, pb.FinishEventRequest(name=name))
        return progress_from_pb(reply)

    def standings(self, name: str) -> EventStandings:
        reply = self._call(self.stub.Standings, pb.StandingsRequest(event=name))
        return EventStandings(
            reply.event, reply.format, reply.state, json.loads(reply.standings_json)
        )

    def close(self) -> None:
        self.channel.close()
