"""Plays N requests (default 5), then dies on the next one without a word."""

import os
import sys

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play

from arena.v1 import arena_pb2 as pb

left = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def on_request(request: pb.Request) -> list[pb.BotMessage]:
    global left
    if left == 0:
        os._exit(3)  # no goodbye, no flush: like a segfault
    left -= 1
    return [answer(request)]


with grpc.insecure_channel(SERVER) as channel:
    play(Stream(channel, hello(name="crash")), on_request)
