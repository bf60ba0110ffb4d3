"""What every hostile bot shares: one Play stream, a hello, a report file for the test.

The bots are standalone scripts (``python tests/hostile/sleepy.py``) reading
``ARENA_SERVER`` and ``ARENA_TOKEN`` like ``sample_bots/botkit.py``; each writes what it
observed (status codes, flags) as JSON lines to ``$HOSTILE_REPORT`` for the test to check.
Their legal moves are the referee's own fallbacks, so the only faults are the ones meant.
"""

from __future__ import annotations

import json
import os
import queue
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

SERVER = os.environ.get("ARENA_SERVER", "127.0.0.1:50051")
TOKEN = os.environ.get("ARENA_TOKEN", "")
PLAY = "/arena.v1.Arena/Play"


def report(**fields: Any) -> None:
    """Tell the test something (one JSON line appended to ``$HOSTILE_REPORT``)."""
    path = os.environ.get("HOSTILE_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(fields) + "\n")


def hello(token: str = TOKEN, name: str = "hostile") -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token=token, name=name, version="0", protocol=1))


def answer(request: pb.Request, cards: Iterable[pb.Card] | None = None) -> pb.BotMessage:
    """An Action for ``request``: ``cards``, or the referee's own (legal) fallback."""
    chosen = request.fallback.cards if cards is None else cards
    return pb.BotMessage(action=pb.Action(seq=request.seq, cards=chosen))


class Stream:
    """One Play stream. ``raw=True`` sends bytes as they are, unserialized."""

    def __init__(self, channel: grpc.Channel, first: Any = None, raw: bool = False) -> None:
        self.outbox: queue.Queue[Any] = queue.Queue()
        if raw:
            method = channel.stream_stream(
                PLAY,
                request_serializer=lambda b: b,
                response_deserializer=pb.RefereeMessage.FromString,
            )
        else:
            method = pb_grpc.ArenaStub(channel).Play
        self.call = method(self._messages())
        self.call.initial_metadata()  # the referee accepted the stream (DESIGN.md)
        if first is not None:
            self.send(first)

    def _messages(self) -> Iterator[Any]:
        while (message := self.outbox.get()) is not None:
            yield message

    def send(self, message: Any) -> None:
        self.outbox.put(message)

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()

    def __iter__(self) -> Iterator[pb.RefereeMessage]:
        return iter(self.call)


def play(stream: Stream, on_request: Callable[[pb.Request], list[Any]] | None = None) -> None:
    """Answer every request (``on_request`` gives what to send; default: the fallback)
    until the match ends; reports the faults the referee told this bot about."""
    for message in stream:
        kind = message.WhichOneof("kind")
        if kind == "request":
            request = message.request
            for out in on_request(request) if on_request else [answer(request)]:
                stream.send(out)
        elif kind == "verdict" and not message.verdict.accepted:
            v = message.verdict
            report(verdict=pb.FaultKind.Name(v.fault), seq=v.seq, reason=v.reason)
        elif kind == "match_end":
            report(match_end=message.match_end.result.reason)
            break
    stream.close()


def status_of(call: Iterable[Any]) -> str:
    """Read ``call`` to its end; the gRPC status code's name it ended with."""
    try:
        for _ in call:
            pass
    except grpc.RpcError as exc:
        return exc.code().name  # type: ignore[no-any-return, attr-defined]
    return "OK"
