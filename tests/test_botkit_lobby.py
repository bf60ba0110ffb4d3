"""botkit's lobby and reconnection rules (``botkit.seat``: :class:`Lobby`, :class:`Dialer`),
which both clients share: which offers a bot plays, when it stops waiting. Without a
server (the rules do no I/O), then a real sample bot with each client against an
address where nobody listens: it gives up after ``--reconnect`` seconds, exit status 1.
The lobby with a real server is in tests/test_competition*.py."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from arena.v1 import arena_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sample_bots"))

from botkit.seat import Dialer, Lobby, Seat

ROOT = Path(__file__).resolve().parent.parent


def _offer(match: str, seat: int) -> pb.LobbyMessage:
    return pb.LobbyMessage(offer=pb.SeatOffer(match_id=match, seat=seat, seat_token="t"))


def test_a_seat_offered_again_while_played_is_not_played_twice() -> None:
    err = io.StringIO()
    lobby = Lobby("me", "127.0.0.1:1", "bk-x", parallel=2, err=err)
    assert lobby.join.bot_key == "bk-x" and lobby.join.parallel == 2
    assert lobby.offer(pb.LobbyMessage(welcome=pb.LobbyWelcome(bot="me"))) is None
    assert "in the lobby as me" in err.getvalue()
    first = lobby.offer(_offer("m1", 0))
    assert first is not None and first.match_id == "m1"
    assert lobby.offer(_offer("m1", 0)) is None  # the lobby offered it again (a rejoin)
    assert lobby.offer(_offer("m1", 1)) is not None  # another seat of the same match
    lobby.played(first)
    assert lobby.offer(_offer("m1", 0)) is not None  # over: it may be offered anew


def test_a_refused_key_stops_at_once_and_says_why() -> None:
    err = io.StringIO()
    lobby = Lobby("me", "127.0.0.1:1", "bk-x", reconnect_for=60, err=err)
    assert lobby.next(grpc.StatusCode.UNAVAILABLE, "down") is None  # a restart: join again
    assert lobby.next(grpc.StatusCode.PERMISSION_DENIED, "bot disabled") == 1
    assert "PERMISSION_DENIED: bot disabled" in err.getvalue()


def test_the_lobby_gives_up_only_after_being_away_for_reconnect_for() -> None:
    lobby = Lobby("me", "127.0.0.1:1", "bk-x", reconnect_for=0.2, err=io.StringIO())
    assert lobby.next() is None  # the first failure starts the clock
    time.sleep(0.3)
    lobby.offer(_offer("m1", 0))  # the lobby came back: the clock stops
    assert lobby.next() is None
    time.sleep(0.3)
    assert lobby.next() == 1


def test_a_seat_that_played_on_after_a_loss_gets_its_whole_reconnect_time_again() -> None:
    seat = Seat(lambda turn, table: [], "me", err=io.StringIO())
    dialer = Dialer(seat, "127.0.0.1:1", reconnect_for=0.2, retry_s=0.0)
    assert dialer.next("lost") is None
    time.sleep(0.3)
    seat.receive(pb.RefereeMessage(welcome=pb.Welcome(seat=1)))  # back, and playing
    assert dialer.next("lost") is None  # a new loss, long after the first: try again
    time.sleep(0.3)
    assert dialer.next("lost") == 1


def _nobody() -> str:
    """An address on 127.0.0.1 where nothing listens (bound, never listening)."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    _KEEP.append(held)
    return f"127.0.0.1:{held.getsockname()[1]}"


_KEEP: list[socket.socket] = []


@pytest.mark.parametrize("client", ["asyncio", "sync"])
def test_a_lobby_bot_gives_up_on_an_absent_server(client: str) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(ROOT / "sample_bots/random_bot.py"), "--server", _nobody(),
         "--bot-key", "bk-x", "--reconnect", "1", "--client", client],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "gave up on the lobby after 1s" in done.stderr
    assert time.monotonic() - started < 30
