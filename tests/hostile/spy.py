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
    stream.close()
