"""Plays the referee's fallbacks and dumps every message it receives, length-prefixed,
to ``$SPY_DUMP``: what actually crossed the wire, for the redaction test."""

import os
import struct

import grpc
from hostile_kit import SERVER, Stream, answer, hello

with grpc.insecure_channel(SERVER) as channel, open(os.environ["SPY_DUMP"], "wb") as dump:
    stream = Stream(channel, hello(name="spy"))
    for message in stream:
        data = message.SerializeToString()
        dump.write(struct.pack(">I", len(data)) + data)
        if message.HasField("request"):
            stream.send(answer(message.request))
        elif message.HasField("match_end"):
            break
    dump.flush()
    # Everything that crossed the wire is on disk: leave now. (Seen in the full suite:
    # grpcio's shutdown of a stream it has just cancelled can hang past the test's
    # 60 s, and the test would kill this bot; what is checked is the dump, not the exit.)
    os._exit(0)
