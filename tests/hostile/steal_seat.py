"""Plays its own seat, and once the match runs tries to take over the seat whose token
is in ``$VICTIM_TOKEN`` on a second stream (must be refused: ALREADY_EXISTS)."""

import os

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play, report, status_of

from arena.v1 import arena_pb2 as pb

tried = False


def on_request(request: pb.Request) -> list[pb.BotMessage]:
    global tried
    if not tried:  # every seat has connected by the first request
        tried = True
        with grpc.insecure_channel(SERVER) as channel:
            thief = Stream(channel, hello(token=os.environ["VICTIM_TOKEN"], name="thief"))
            report(status=status_of(thief))
            thief.close()
    return [answer(request)]


with grpc.insecure_channel(SERVER) as channel:
    play(Stream(channel, hello(name="steal_seat")), on_request)
