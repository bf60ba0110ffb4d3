"""Sends bytes that are no protobuf message on the Play stream: in answer to its first
request (``after-hello``, the default) or as the very first frame (``first``)."""

import sys

import grpc
from hostile_kit import SERVER, Stream, hello, report

GARBAGE = b"\x0a\x64truncated"  # field 1, 100 bytes long, then 9 bytes: undecodable
first = len(sys.argv) > 1 and sys.argv[1] == "first"

with grpc.insecure_channel(SERVER) as channel:
    stream = Stream(channel, GARBAGE if first else hello(name="garbage").SerializeToString(), True)
    try:
        for message in stream:
            if message.HasField("request"):
                stream.send(GARBAGE)
        report(status="OK")
    except grpc.RpcError as exc:
        report(status=exc.code().name, details=exc.details())
    stream.close()
