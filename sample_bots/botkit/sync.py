"""The simple client: blocking gRPC, one thread per match.

Easiest to read and to debug (a breakpoint in ``decide`` just stops the bot), and
``decide`` may block (sleep, wait on a lock, call a slow library) without holding up
anything else. It costs more CPU per decision than the asyncio client
(:mod:`botkit.aio`): grpcio's blocking streams move every message through a queue and
a thread. ``--client sync`` (or ``ARENA_BOT_CLIENT=sync``) selects it for any botkit bot.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from botkit.options import log_message, settings
from botkit.seat import Decide, Dialer, Lobby, Seat, moved_to, outcome_of

RETRY_S = 0.5  # the pause between two connection attempts


def run_sync(
    decide: Decide,
    name: str,
    server: str,
    token: str,
    version: str = "1.0",
    reconnect_for: float = 30.0,
) -> int:
    """Play one match with the blocking client; 0 when it ended normally (see
    :func:`botkit.run` for the reconnection rules)."""
    seat = Seat(decide, name, version, every_verdict=settings.verdicts == "every")
    dialer = Dialer(seat, server, reconnect_for, RETRY_S)
    while (status := dialer.next(_session(seat, dialer.address, token))) is None:
        time.sleep(dialer.pause)
    return status


def _session(seat: Seat, server: str, token: str) -> str:
    """One stream: "ended" (MatchEnd), "lost" (connection gone), "refused" (rejected) or
    "moved:HOST:PORT" (the seat plays at that address: docs/workers.md)."""
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()

    def messages() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    with settings.tls.channel(server) as channel:
        call = pb_grpc.ArenaStub(channel).Play(messages())
        try:
            call.initial_metadata()  # wait until the referee accepted the stream
            hello = seat.hello(token)
            outbox.put(hello)
            log_message("sent", hello)
            for message in call:
                log_message("received", message)
                reply = seat.receive(message)
                if reply is not None:
                    outbox.put(reply)
                    log_message("sent", reply)
                elif seat.ended:
                    return "ended"
        except grpc.RpcError as exc:
            code = exc.code()
            moved = moved_to(code, exc.trailing_metadata())
            if moved is not None:
                return moved  # this seat plays at another address
            seat.say(f"{code.name}: {exc.details()}")
            return outcome_of(code, seat.table.seat >= 0)
        finally:
            outbox.put(None)
    return "lost"  # the stream ended without a MatchEnd


def play_lobby_sync(decide: Decide, lobby: Lobby) -> int:
    """Wait in the lobby and play every seat it offers, each in its own thread (see
    :func:`botkit.play_lobby`)."""

    def play(offer: pb.SeatOffer) -> None:
        try:
            run_sync(decide, lobby.name, lobby.server, offer.seat_token, lobby.version,
                     lobby.reconnect_for)  # fmt: skip
        finally:
            lobby.played(offer)

    while True:
        code, details = None, ""
        try:
            with settings.tls.channel(lobby.server) as channel:
                for message in pb_grpc.LobbyStub(channel).Join(lobby.join):
                    offer = lobby.offer(message)
                    if offer is not None:
                        threading.Thread(target=play, args=(offer,), daemon=True).start()
        except grpc.RpcError as exc:
            code, details = exc.code(), exc.details() or ""
        if (status := lobby.next(code, details)) is not None:
            return status
        time.sleep(lobby.retry_s)
