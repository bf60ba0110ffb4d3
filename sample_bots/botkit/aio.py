"""The asyncio client (the samples' default): grpc.aio streams on one event loop.

Each message is read and written on the loop's thread, with no queue and no extra
thread between the stream and ``decide`` — the cheapest way for a Python bot to talk
to the referee (bench/bots.py measures it against the blocking client). ``decide``
runs on the loop: a bot that must block for long (a slow library, a sleep) should use
the sync client instead, or ``await`` in its own coroutine with :func:`play_async`.
"""

from __future__ import annotations

import asyncio
from functools import partial

import grpc
import grpc.aio

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from botkit.options import log_message, settings
from botkit.seat import Decide, Dialer, Lobby, Seat, moved_to, outcome_of

HANDSHAKE_S = 10.0
"""How long a stream may take to be accepted (the server's initial metadata) before the
client drops it and connects again: a peer that takes the TCP connection but never
speaks gRPC (a wedged server, a wrong port) must not hold the bot forever."""
RETRY_S = 0.5  # the pause between two connection attempts


async def play_async(
    decide: Decide,
    name: str,
    server: str,
    token: str,
    version: str = "1.0",
    reconnect_for: float = 30.0,
) -> int:
    """Play one match on the running event loop; 0 when it ended normally, 1 when the
    token was refused or the referee stayed away longer than ``reconnect_for`` seconds
    (see :func:`botkit.run`)."""
    seat = Seat(decide, name, version, every_verdict=settings.verdicts == "every")
    dialer = Dialer(seat, server, reconnect_for, RETRY_S)
    while (status := dialer.next(await _session(seat, dialer.address, token))) is None:
        await asyncio.sleep(dialer.pause)
    return status


async def _session(seat: Seat, server: str, token: str) -> str:
    """One stream: "ended" (MatchEnd), "lost" (connection gone), "refused" (rejected) or
    "moved:HOST:PORT" (the seat plays at that address: docs/workers.md)."""
    async with settings.tls.aio_channel(server) as channel:
        call = pb_grpc.ArenaStub(channel).Play()  # type: ignore[call-arg]  # grpc-stubs: sync
        try:
            await asyncio.wait_for(call.initial_metadata(), HANDSHAKE_S)
            hello = seat.hello(token)
            log_message("sent", hello)
            await call.write(hello)
            while True:
                message: pb.RefereeMessage = await call.read()  # type: ignore[assignment]
                if message is grpc.aio.EOF:  # type: ignore[attr-defined]
                    return "lost"  # the stream ended without a MatchEnd
                log_message("received", message)
                reply = seat.receive(message)
                if reply is not None:
                    log_message("sent", reply)
                    await call.write(reply)
                elif seat.ended:
                    return "ended"
        except TimeoutError:
            seat.say(f"no answer from {server} within {HANDSHAKE_S:.0f}s")
            return "lost"
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details()
            trailing: object = exc.trailing_metadata()
        except asyncio.InvalidStateError:  # it ended as we wrote: its status says why
            code, details = await call.code(), await call.details()
            trailing = await call.trailing_metadata()
        finally:
            call.cancel()
        moved = moved_to(code, trailing)
        if moved is not None:
            return moved  # this seat plays at another address
        seat.say(f"{code.name}: {details}")
        return outcome_of(code, seat.table.seat >= 0)


async def lobby_async(decide: Decide, lobby: Lobby) -> int:
    """Wait in the lobby and play every seat it offers, each as a task on this loop (see
    :func:`botkit.play_lobby`)."""
    playing: set[asyncio.Task[int]] = set()  # the loop keeps only weak references
    while True:
        code, details = None, ""
        try:
            async with settings.tls.aio_channel(lobby.server) as channel:
                async for message in pb_grpc.LobbyStub(channel).Join(lobby.join):
                    offer = lobby.offer(message)
                    if offer is None:
                        continue
                    task = asyncio.create_task(play_async(decide, lobby.name, lobby.server,
                        offer.seat_token, lobby.version, lobby.reconnect_for))  # fmt: skip
                    playing.add(task)
                    task.add_done_callback(partial(_played, lobby, offer, playing))
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
        if (status := lobby.next(code, details)) is not None:
            return status
        await asyncio.sleep(lobby.retry_s)


def _played(
    lobby: Lobby, offer: pb.SeatOffer, playing: set[asyncio.Task[int]], task: asyncio.Task[int]
) -> None:
    playing.discard(task)
    lobby.played(offer)
