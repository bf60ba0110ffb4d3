"""Plays N requests (default 5), drops the connection while the next one is pending,
comes back with its token on a new channel and plays on: it must be welcomed back
(``resumed``) and asked the abandoned request again."""

import sys
import time

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play, report

from arena.v1 import arena_pb2 as pb

left = int(sys.argv[1]) if len(sys.argv) > 1 else 5
abandoned = 0

with grpc.insecure_channel(SERVER) as channel:
    stream = Stream(channel, hello(name="reconnect"))
    for message in stream:
        if message.HasField("request"):
            if left == 0:
                abandoned = message.request.seq
                break
            left -= 1
            stream.send(answer(message.request))
    stream.close()

for attempt in range(1, 21):  # the old stream may not be gone yet: ALREADY_EXISTS
    with grpc.insecure_channel(SERVER) as channel:
        stream = Stream(channel, hello(name="reconnect"))
        messages = iter(stream)
        try:
            welcome = next(messages).welcome
            first: pb.RefereeMessage = next(messages)
        except grpc.RpcError as exc:
            report(attempt=attempt, status=exc.code().name)
            time.sleep(0.05)
            continue
        report(resumed=welcome.resumed, abandoned=abandoned, asked_again=first.request.seq)
        if first.HasField("request"):
            stream.send(answer(first.request))
        play(stream)
        break
