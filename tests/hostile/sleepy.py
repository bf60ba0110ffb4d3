"""Sleeps SECONDS (default 1.5) on its first request, far past the test's deadline,
then answers everything, the stale request first."""

import sys
import time

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play

from arena.v1 import arena_pb2 as pb

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
slept = False


def on_request(request: pb.Request) -> list[pb.BotMessage]:
    global slept
    if not slept:
        slept = True
        time.sleep(seconds)
    return [answer(request)]


with grpc.insecure_channel(SERVER) as channel:
    play(Stream(channel, hello(name="sleepy")), on_request)
