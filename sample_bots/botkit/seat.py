"""One seat's side of the ``Arena.Play`` stream, and the lobby's, without I/O (the
clients feed them).

Both clients (asyncio and sync) hand each :class:`RefereeMessage` to :meth:`Seat.receive`
and send what it returns, so what a bot does with a message (decide, count a fault,
stop at ``MatchEnd``) is written once and the clients only move bytes. Likewise where to
connect next and when to give up (:class:`Dialer`), and which lobby offers to play
(:class:`Lobby`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

import grpc

from arena.rules import Card
from arena.v1 import arena_pb2 as pb
from botkit.cards import Table, Turn, to_pb

Decide = Callable[[Turn, Table], Sequence[Card]]
"""A bot: the cards to answer a turn with (``[]``: pass a bid)."""

PROTOCOL = 1


class Seat:
    """What a bot does with each referee message; one per match, kept across reconnections
    (the table, the fault count and the last answer survive a lost stream)."""

    def __init__(
        self,
        decide: Decide,
        name: str,
        version: str = "1.0",
        every_verdict: bool = False,
        err: TextIO = sys.stderr,
    ) -> None:
        self.decide = decide
        self.name = name
        self.version = version
        self.every_verdict = every_verdict
        self.err = err
        self.table = Table()
        self.ended = False
        self.answered = 0  # the seq of the last answer sent
        self.received = 0  # messages from the referee, over every stream of the match
        self.accepted = 0  # the highest seq the referee said it accepted
        self.faults_only = False  # the referee's Welcome: Verdicts only for faults

    def hello(self, token: str) -> pb.BotMessage:
        mode = pb.VERDICT_EVERY_ANSWER if self.every_verdict else pb.VERDICT_FAULTS_ONLY
        hello = pb.Hello(
            token=token, name=self.name, version=self.version, protocol=PROTOCOL, verdicts=mode
        )
        return pb.BotMessage(hello=hello)

    def receive(self, message: pb.RefereeMessage) -> pb.BotMessage | None:
        """The answer to send for ``message``, if any; sets :attr:`ended` at MatchEnd.

        With Verdicts for faults only, an accepted answer's acknowledgement is the
        ``accepted_seq`` of the next message (whatever its kind); a fault still comes
        as a Verdict of its own, at once.
        """
        self.received += 1
        if message.accepted_seq:
            self.accepted = message.accepted_seq
        kind = message.WhichOneof("kind")
        if kind == "request":
            return self._answer(message.request)
        if kind == "welcome":
            self.table.welcome(message.welcome)
            self.faults_only = message.welcome.verdicts == pb.VERDICT_FAULTS_ONLY
        elif kind == "verdict":
            verdict = message.verdict
            if verdict.accepted:
                self.accepted = max(self.accepted, verdict.seq)
            else:
                self.table.faults += 1
                self.say(f"fault on seq {verdict.seq}: {verdict.reason}")
        elif kind == "match_end":
            self.ended = True
        return None

    def _answer(self, request: pb.Request) -> pb.BotMessage:
        turn = Turn(request, self.table)
        try:
            chosen = self.decide(turn, self.table)
        except Exception as exc:  # a bug in the bot: play the referee's fallback
            self.say(f"decide failed ({exc!r}); playing the fallback")
            chosen = turn.fallback_cards
        self.answered = request.seq
        return pb.BotMessage(action=pb.Action(seq=request.seq, cards=to_pb(chosen)))

    def say(self, text: str) -> None:
        print(f"{self.name}: {text}", file=self.err, flush=True)


# ``arena serve --workers``: a seat token sent to the front is refused with
# FAILED_PRECONDITION and this trailing metadata, naming the worker that hosts the seat.
SEAT_ADDRESS = "arena-seat-address"
MOVED = "moved:"
MAX_MOVES = 3  # redirects followed in a row before the address given is asked again


def moved_to(code: object, trailing: object) -> str | None:
    """The outcome "moved:HOST:PORT" when the referee sent this seat to another address
    (docs/workers.md), else None."""
    if code != grpc.StatusCode.FAILED_PRECONDITION:
        return None
    for key, value in trailing or ():  # type: ignore[attr-defined]
        if key == SEAT_ADDRESS:
            return MOVED + str(value)
    return None


class Patience:
    """How long a client keeps trying to reach a referee that went away: ``seconds``
    from the first failure since it last heard from it (for a seat's stream and for the
    lobby alike)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._since: float | None = None

    def heard(self) -> None:
        """The referee answered: the next failure starts the clock again."""
        self._since = None

    def exhausted(self) -> bool:
        """A failure now: True when the referee has been away longer than allowed."""
        now = time.monotonic()
        self._since = self._since or now
        return now - self._since > self.seconds


class Dialer:
    """Where a client connects next, after each session's outcome: the one reconnection
    rule of both clients (:mod:`botkit.aio`, :mod:`botkit.sync`), kept free of I/O so the
    two can differ only in how they wait.

    ``next(outcome)`` returns an exit status (0 ended, 1 refused or gave up) or None,
    after which :attr:`address` is where to connect and :attr:`pause` how long to wait
    first (0 for a redirect, the retry pause after a lost stream)."""

    def __init__(self, seat: Seat, server: str, reconnect_for: float, retry_s: float) -> None:
        self.seat, self.server = seat, server
        self.patience, self.retry_s = Patience(reconnect_for), retry_s
        self.address, self.pause = server, 0.0
        self._moves = 0
        self._received = 0

    def next(self, outcome: str) -> int | None:
        if outcome == "ended":
            return 0
        if outcome == "refused":
            return 1
        if outcome.startswith(MOVED) and self._moves < MAX_MOVES:  # arena serve --workers
            self.address, self._moves, self.pause = outcome[len(MOVED) :], self._moves + 1, 0.0
            return None
        self.address, self._moves = self.server, 0  # lost: ask the address we were given again
        if self.seat.received != self._received:  # it played since the last loss
            self._received = self.seat.received
            self.patience.heard()
        if self.patience.exhausted():
            self.seat.say(f"gave up reconnecting after {self.patience.seconds:.0f}s")
            return 1
        self.pause = self.retry_s
        return None


class Lobby:
    """A bot waiting in the server's lobby (docs/competition.md), free of I/O: what to
    send (:attr:`join`), which offers to play (a seat offered again while it is being
    played is not played twice), and when to stop (the key refused, or the lobby away
    longer than ``reconnect_for``). Both clients join with it and only move messages."""

    def __init__(self, name: str, server: str, bot_key: str, parallel: int = 1,
                 version: str = "1.0", reconnect_for: float = 30.0, retry_s: float = 0.5,
                 err: TextIO = sys.stderr) -> None:  # fmt: skip
        self.name, self.server, self.version, self.err = name, server, version, err
        self.reconnect_for = reconnect_for  # for the lobby and each seat's stream
        self.join = pb.LobbyJoin(
            bot_key=bot_key, parallel=parallel, name=name, version=version, protocol=PROTOCOL
        )
        self.patience, self.retry_s = Patience(reconnect_for), retry_s
        self._playing: set[tuple[str, int]] = set()
        self._lock = threading.Lock()  # the sync client's matches end on their own threads

    def offer(self, message: pb.LobbyMessage) -> pb.SeatOffer | None:
        """The seat to play now, for a message of the lobby; None for the welcome and for
        a seat already being played (call :meth:`played` when its match is over)."""
        self.patience.heard()
        if message.WhichOneof("kind") == "welcome":
            self.say(f"in the lobby as {message.welcome.bot}")
            return None
        offer = message.offer
        with self._lock:
            if (offer.match_id, offer.seat) in self._playing:
                return None
            self._playing.add((offer.match_id, offer.seat))
        return offer

    def played(self, offer: pb.SeatOffer) -> None:
        with self._lock:
            self._playing.discard((offer.match_id, offer.seat))

    def next(self, code: object = None, details: str = "") -> int | None:
        """After the lobby stream ended (``code``: its gRPC status, None without one): 1
        when the key was refused or the lobby stayed away too long, else None: wait
        :attr:`retry_s` and join again."""
        if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            self.say(f"{getattr(code, 'name', code)}: {details}")
            return 1
        if self.patience.exhausted():
            self.say(f"gave up on the lobby after {self.patience.seconds:.0f}s")
            return 1
        return None

    def say(self, text: str) -> None:
        print(f"{self.name}: {text}", file=self.err, flush=True)


def outcome_of(code: object, seated: bool) -> str:
    """How a stream that failed with status ``code`` ends: "refused" (stop) or "lost"
    (connect again). ``ALREADY_EXISTS`` after this bot was seated means it came back
    before the referee saw its old stream go: try again."""
    if code == grpc.StatusCode.ALREADY_EXISTS and seated:
        return "lost"
    refused = (
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    return "refused" if code in refused else "lost"
