"""Knocks with a made-up token (must be refused: UNAUTHENTICATED), then plays its seat."""

import grpc
from hostile_kit import SERVER, Stream, hello, play, report, status_of

with grpc.insecure_channel(SERVER) as channel:
    refused = Stream(channel, hello(token="not-a-seat-token", name="wrong_token"))
    report(status=status_of(refused))
    refused.close()
    play(Stream(channel, hello(name="wrong_token")))
