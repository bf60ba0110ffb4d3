"""Opens the Play stream and never says hello: the referee must close it."""

import time

import grpc
from hostile_kit import SERVER, Stream, report, status_of

with grpc.insecure_channel(SERVER) as channel:
    start = time.monotonic()
    stream = Stream(channel)
    report(status=status_of(stream), after=round(time.monotonic() - start, 3))
    stream.close()
