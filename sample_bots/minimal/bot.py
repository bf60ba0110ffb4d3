#!/usr/bin/env python3
"""The smallest complete arena bot: grpcio and stubs generated from proto/, nothing else.

This is the path a bot in any language follows: generate the stubs from
``proto/arena/v1/arena.proto``, open the ``Arena.Play`` stream, say hello with the seat
token, answer every request with its sequence number. Nothing here imports arena.

    make minimal-bot    # generates gen/arena_pb2.py and gen/arena_pb2_grpc.py
    arena match --bot "python sample_bots/minimal/bot.py" --bot builtin:random \\
        --bot "python sample_bots/minimal/bot.py" --bot builtin:random

``arena match`` starts it with ``ARENA_SERVER`` (host:port) and ``ARENA_TOKEN`` set.
It bids with its first pair, and otherwise plays the request's ``fallback``: a legal
answer the referee computes for every request, so this bot never faults. Change
:func:`decide` to make it play well (docs/tutorial.md).

A server with several worker processes (``arena serve --workers N``) may refuse the
``Hello`` with ``FAILED_PRECONDITION`` and the trailing metadata ``arena-seat-address``:
the seat plays at that ``host:port``. :func:`main` opens the stream again there
(docs/protocol.md, "Where to connect").
"""

from __future__ import annotations

import os
import queue
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().with_name("gen")))
try:
    import arena_pb2 as pb
    import arena_pb2_grpc as pb_grpc
    import grpc
except ImportError as exc:
    sys.exit(
        f"minimal bot: {exc}: it needs grpcio and protobuf (pip install grpcio protobuf) and "
        "the stubs in sample_bots/minimal/gen/ (make minimal-bot)"
    )


def decide(request: pb.Request) -> list[pb.Card]:
    """The cards to answer ``request`` with (none: pass a bid)."""
    if request.kind == pb.BID:
        pairs = [bid for bid in request.legal_bids if len(bid.cards) >= 2]
        return list(pairs[0].cards) if pairs else []
    return list(request.fallback.cards)


SEAT_ADDRESS = "arena-seat-address"  # trailing metadata naming the seat's worker


class Moved(Exception):
    """The server says this seat plays at another address."""

    def __init__(self, address: str) -> None:
        super().__init__(address)
        self.address = address


def play(server: str, token: str, name: str = "minimal") -> int:
    """Play one match on ``server`` with the seat ``token``; 0 when it ended normally.

    Raises:
        Moved: the seat plays at another address (a redirect at ``Hello``).
    """
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
    outbox.put(pb.BotMessage(hello=pb.Hello(token=token, name=name, version="1", protocol=1)))

    def sent() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    # no bandwidth-delay pings: one after an answer would date its arrival late (protocol.md)
    with grpc.insecure_channel(server, options=[("grpc.http2.bdp_probe", 0)]) as channel:
        try:
            for message in pb_grpc.ArenaStub(channel).Play(sent()):
                kind = message.WhichOneof("kind")
                if kind == "request":
                    action = pb.Action(seq=message.request.seq, cards=decide(message.request))
                    outbox.put(pb.BotMessage(action=action))
                elif kind == "match_end":
                    break
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                for key, value in exc.trailing_metadata() or ():  # type: ignore[attr-defined]
                    if key == SEAT_ADDRESS:
                        raise Moved(value) from None
            print(f"{name}: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
        finally:
            outbox.put(None)  # ends the request stream
    return 0


def main(server: str, token: str) -> int:
    """Play the seat, following the server's redirects (a few in a row at most)."""
    for _ in range(3):
        try:
            return play(server, token)
        except Moved as moved:
            server = moved.address
    print(f"minimal: redirected too many times (last to {server})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(os.environ["ARENA_SERVER"], os.environ["ARENA_TOKEN"]))
