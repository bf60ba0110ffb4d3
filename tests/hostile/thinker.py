"""An honest bot that thinks SECONDS (default 0.25) before every answer, and answers
with the referee's fallback: what it is charged should be its thinking, however busy
the server is (tests/test_fair_clock.py). ``quiet`` after SECONDS: its own gRPC stack sends
no bandwidth-delay pings, so that whatever reaches it besides the referee's messages is
the server's own doing (tests/test_receive_clock.py)."""

import sys
import time

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play

from arena.v1 import arena_pb2 as pb

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.25
options = [("grpc.http2.bdp_probe", 0)] if sys.argv[2:] == ["quiet"] else []


def on_request(request: pb.Request) -> list[pb.BotMessage]:
    time.sleep(seconds)
    return [answer(request)]


with grpc.insecure_channel(SERVER, options=options) as channel:
    play(Stream(channel, hello(name="thinker")), on_request)
