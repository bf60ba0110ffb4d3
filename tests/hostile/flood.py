"""Floods the referee: 2000 unrequested Actions before any request, 50 copies of every
answer, and once an answer for a sequence number never issued."""

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play

from arena.v1 import arena_pb2 as pb

answered = 0


def on_request(request: pb.Request) -> list[pb.BotMessage]:
    global answered
    answered += 1
    out = [answer(request)] * 50
    if answered == 3:
        out.append(pb.BotMessage(action=pb.Action(seq=request.seq + 1_000_000)))
    return out


with grpc.insecure_channel(SERVER) as channel:
    stream = Stream(channel, hello(name="flood"))
    for _ in range(2000):
        stream.send(pb.BotMessage(action=pb.Action(seq=0)))
    play(stream, on_request)
