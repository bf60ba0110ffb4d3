"""A seat client's side of ``Arena.Play``: the connect loop and its command-line options.

Arena's own seat client (:class:`~arena.botzone.seat.BotzoneSeat`, run by ``arena
botzone-seat``) connects like any bot: open the stream, wait until the referee accepted
it, say hello with the seat token, answer each request, and connect again with the same
token after a lost stream (the referee re-sends the pending request), giving up after
``reconnect_for`` seconds or on a refusal. The loop lives here once.
``sample_bots/botkit`` does the same for bot authors and stays a standalone copy: a bot
author copies that folder, and arena does not import it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import queue
import time
from collections.abc import Callable, Iterable, Iterator
from typing import cast

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

Answer = Callable[[pb.Request], pb.Action]
RETRY_S = 0.5  # the pause between two connection attempts
# ``arena serve --workers``: a seat token sent to the front is refused with
# FAILED_PRECONDITION and this trailing metadata naming the worker that hosts the seat
# (the name arena.server.workers.front sends, kept here so a seat client does not load
# the server to read it; tests/test_botzone_seat.py checks they agree).
SEAT_ADDRESS = "arena-seat-address"
MAX_MOVES = 3  # redirects followed in a row before the address given is asked again
# A refusal ends the seat; anything else (the server went away) is worth another try.
REFUSED = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
    }
)


def add_seat_options(parser: argparse.ArgumentParser) -> None:
    """``--server`` and ``--token``, defaulting to ``ARENA_SERVER``/``ARENA_TOKEN`` as
    ``arena match`` sets them for every bot command it starts."""
    parser.add_argument(
        "--server",
        default=os.environ.get("ARENA_SERVER", "127.0.0.1:50051"),
        help="referee address host:port (default $ARENA_SERVER)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("ARENA_TOKEN", ""),
        help="this seat's token (default $ARENA_TOKEN)",
    )


@dataclasses.dataclass
class SeatClient:
    """One seat of one match: who to be, and what to do with each message."""

    server: str
    token: str
    name: str
    version: str
    answer: Answer
    say: Callable[[str], None]
    reconnect_for: float = 30.0
    on_welcome: Callable[[pb.Welcome], None] = lambda _welcome: None
    seat: int = -1  # known from the first Welcome

    def hello(self) -> pb.BotMessage:
        """Hello, asking for Verdicts on faults only (an accepted answer's acknowledgement
        rides on the next message, which this client does not need)."""
        hello = pb.Hello(
            token=self.token, name=self.name, version=self.version, protocol=1,
            verdicts=pb.VERDICT_FAULTS_ONLY,
        )  # fmt: skip
        return pb.BotMessage(hello=hello)

    def play(self) -> int:
        """Play the match: 0 when it ended, 1 when refused or gone too long, 2 without
        a token."""
        if not self.token:
            self.say("no seat token (--token or ARENA_TOKEN)")
            return 2
        lost_at: float | None = None
        given, moves = self.server, 0
        while True:
            outcome = self._session()
            if outcome == "ended":
                return 0
            if outcome == "refused":
                return 1
            if outcome == "moved" and moves < MAX_MOVES:  # to the worker hosting the seat
                moves += 1
                continue
            self.server, moves = given, 0  # lost: ask the address we were given again
            lost_at = lost_at or time.monotonic()
            if time.monotonic() - lost_at > self.reconnect_for:
                self.say(f"gave up reconnecting after {self.reconnect_for:.0f}s")
                return 1
            time.sleep(RETRY_S)

    def _session(self) -> str:
        """One stream: "ended" (MatchEnd), "lost" (connection gone), "refused", or
        "moved" (:attr:`server` is now the worker that hosts the seat)."""
        outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()

        def messages() -> Iterator[pb.BotMessage]:
            while (message := outbox.get()) is not None:
                yield message

        with grpc.insecure_channel(self.server) as channel:
            call = pb_grpc.ArenaStub(channel).Play(messages())
            try:
                call.initial_metadata()  # wait until the referee accepted the stream
                outbox.put(self.hello())
                for message in call:
                    kind = message.WhichOneof("kind")
                    if kind == "request":
                        outbox.put(pb.BotMessage(action=self.answer(message.request)))
                    elif kind == "welcome":
                        self.seat = message.welcome.seat
                        self.on_welcome(message.welcome)
                    elif kind == "verdict" and not message.verdict.accepted:
                        self.say(f"fault on seq {message.verdict.seq}: {message.verdict.reason}")
                    elif kind == "match_end":
                        return "ended"
            except grpc.RpcError as exc:
                code = exc.code()
                if code == grpc.StatusCode.FAILED_PRECONDITION:
                    metadata = exc.trailing_metadata()
                    trailing = cast(Iterable[tuple[str, str]], metadata or ())
                    for key, value in trailing:
                        if key == SEAT_ADDRESS:
                            self.server = str(value)
                            return "moved"
                self.say(f"{code.name}: {exc.details()}")
                if code == grpc.StatusCode.ALREADY_EXISTS and self.seat >= 0:
                    return "lost"  # back before the referee saw the old stream go
                return "refused" if code in REFUSED else "lost"
            finally:
                outbox.put(None)
        return "lost"  # the stream ended without a MatchEnd


__all__ = ["Answer", "SeatClient", "add_seat_options"]
