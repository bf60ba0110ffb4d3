"""The plumbing every Python bot needs: connect, say hello, answer requests.

A bot is one function, ``decide(request, table) -> list of card codes`` (empty = pass a
bid). :func:`run` connects to the referee (``--server``/``ARENA_SERVER``) with the seat
token (``--token``/``ARENA_TOKEN``), answers every request with the same sequence number,
and returns when the match ends. With a registered bot's key (``--bot-key``/
``ARENA_BOT_KEY``, docs/competition.md) it waits in the server's lobby instead and plays
every match it is seated in, ``--parallel`` at once. Against a TLS server it trusts
``--tls-ca``/``ARENA_TLS_CA`` (``--tls`` alone: the system's roots) and, for mutual TLS,
presents ``--tls-cert``/``--tls-key`` (``ARENA_TLS_CERT``/``ARENA_TLS_KEY``).
Cards travel as enums; here they become 2-character codes (``TS``, ``SJ``) and
``arena.rules.Card`` values, so the referee's own rules library (``arena.rules``) can
check a move before it is sent.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.protobuf import text_format
from google.protobuf.message import Message

from arena.rules import Card, CardOrder, Rank, RuleSet, Suit, Trump, card_order
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

_SUITS = {pb.SPADES: "S", pb.HEARTS: "H", pb.CLUBS: "C", pb.DIAMONDS: "D"}
_CODES = {v: k for k, v in _SUITS.items()}


def card_from_pb(card: pb.Card) -> Card:
    if card.suit == pb.JOKER:
        return Card.parse("SJ" if card.rank == pb.SMALL_JOKER else "BJ")
    return Card.parse(Rank(card.rank).code + _SUITS[card.suit])


def card_to_pb(card: Card) -> pb.Card:
    if card.suit is None:
        return pb.Card(suit=pb.JOKER, rank=int(card.rank))  # type: ignore[arg-type]
    return pb.Card(suit=_CODES[card.suit.value], rank=int(card.rank))  # type: ignore[arg-type]


def cards(message_cards: object) -> list[Card]:
    return [card_from_pb(c) for c in message_cards]  # type: ignore[attr-defined]


@dataclass
class Table:
    """What the bot knows between requests: its seat and the rules."""

    seat: int = -1
    rules: RuleSet = field(default_factory=RuleSet)
    faults: int = 0

    def order(self, view: pb.View) -> CardOrder:
        """Effective suits and card order for this deal (once trump is declared)."""
        suit = None if view.trump.no_trump or not view.trump.suit else Suit(_SUITS[view.trump.suit])
        return card_order(Trump(Rank(view.trump.level), suit), self.rules)


Decide = Callable[[pb.Request, Table], list[Card]]


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
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
    parser.add_argument(
        "--bot-key",
        default=os.environ.get("ARENA_BOT_KEY", ""),
        help="a registered bot's key (default $ARENA_BOT_KEY): wait in the server's lobby and "
        "play every match it is seated in, instead of one match with --token",
    )
    parser.add_argument(
        "--parallel",
        type=int,
        default=1,
        metavar="N",
        help="with --bot-key: matches to play at once (default 1)",
    )
    parser.add_argument("--name", default=None, help="the name shown in results")
    parser.add_argument("--seed", type=int, default=None, help="seed for the bot's own choices")
    parser.add_argument(
        "--transcript",
        default=os.environ.get("ARENA_TRANSCRIPT"),
        metavar="FILE",
        help="append every message received and sent to FILE, in protobuf text format",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        default=_ENV_TLS,
        help="connect with TLS (implied by --tls-ca; default $ARENA_TLS)",
    )
    parser.add_argument(
        "--tls-ca",
        default=os.environ.get("ARENA_TLS_CA") or None,
        metavar="PEM",
        help="trust the server certificates this CA signed (default $ARENA_TLS_CA)",
    )
    parser.add_argument(
        "--tls-cert",
        default=os.environ.get("ARENA_TLS_CERT") or None,
        metavar="PEM",
        help="this bot's client certificate, for mutual TLS (default $ARENA_TLS_CERT)",
    )
    parser.add_argument(
        "--tls-key",
        default=os.environ.get("ARENA_TLS_KEY") or None,
        metavar="PEM",
        help="the client certificate's key (default $ARENA_TLS_KEY)",
    )
    parser.add_argument(
        "--reconnect",
        type=float,
        default=30.0,
        metavar="S",
        help="keep reconnecting this long after a lost connection (default 30)",
    )
    args = parser.parse_args()
    global _transcript, _tls, _lobby
    _transcript = args.transcript
    _lobby = (args.bot_key, max(1, args.parallel)) if args.bot_key and not args.token else None
    _tls = TlsFiles(args.tls or bool(args.tls_ca or args.tls_cert), args.tls_ca, args.tls_cert,
                    args.tls_key)  # fmt: skip
    return args


@dataclass(frozen=True)
class TlsFiles:
    """How to reach the referee: plaintext, or TLS trusting ``ca`` (None: the system's
    roots) and presenting ``cert``/``key`` when the server asks for a client certificate."""

    enabled: bool = False
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    def channel(self, server: str) -> grpc.Channel:
        if not self.enabled:
            return grpc.insecure_channel(server)

        def read(path: str | None) -> bytes | None:
            return None if path is None else Path(path).read_bytes()

        credentials = grpc.ssl_channel_credentials(read(self.ca), read(self.key), read(self.cert))
        return grpc.secure_channel(server, credentials)


_ENV_TLS = os.environ.get("ARENA_TLS", "") not in ("", "0")  # ARENA_TLS=1: TLS, system roots
_transcript: str | None = None  # the --transcript file, remembered by parse_args for run
_lobby: tuple[str, int] | None = None  # --bot-key and --parallel, remembered for run
_tls = TlsFiles(  # the --tls options, remembered by parse_args for run (or the environment)
    _ENV_TLS or bool(os.environ.get("ARENA_TLS_CA")),
    os.environ.get("ARENA_TLS_CA") or None,
    os.environ.get("ARENA_TLS_CERT") or None,
    os.environ.get("ARENA_TLS_KEY") or None,
)


def _log(arrow: str, message: Message) -> None:
    """Append one message to the transcript (the seat token in a Hello is masked)."""
    if _transcript is None:
        return
    if isinstance(message, pb.BotMessage) and message.HasField("hello"):
        masked = pb.BotMessage()
        masked.CopyFrom(message)
        masked.hello.token = "<seat token>"
        message = masked
    stamp = time.strftime("%H:%M:%S") + f".{int(time.time() * 1000) % 1000:03d}"
    with open(_transcript, "a", encoding="utf-8") as out:
        out.write(f"# {stamp} {arrow} {type(message).__name__}\n")
        text = text_format.MessageToString(message, as_utf8=True)
        out.write(_ONE_LINE_CARD.sub(r"{ suit: \1 rank: \2 }", text))


# A Card block (four lines in text format) rewritten on one line, still valid text format.
_ONE_LINE_CARD = re.compile(r"\{\n\s*suit: (\w+)\n\s*rank: (\w+)\n\s*\}")


def run(
    decide: Decide,
    name: str,
    server: str,
    token: str,
    version: str = "1.0",
    reconnect_for: float = 30.0,
) -> int:
    """Play one match; returns 0 when it ended normally.

    If the connection drops (the referee restarted, the network blinked), it connects
    again with the same token for up to ``reconnect_for`` seconds: the referee re-sends
    the pending request, and every request carries the whole view, so nothing is lost.
    """
    if not token and _lobby is not None:
        return play_lobby(decide, name, server, _lobby[0], _lobby[1], version, reconnect_for)
    if not token:
        print(f"{name}: no seat token (--token or ARENA_TOKEN)", file=sys.stderr)
        return 2
    table = Table()
    lost_at: float | None = None
    where, moves = server, 0
    while True:
        outcome = _session(decide, name, where, token, version, table)
        if outcome == "ended":
            return 0
        if outcome == "refused":
            return 1
        if outcome.startswith(MOVED) and moves < 3:  # arena serve --workers: the seat's worker
            where, moves = outcome[len(MOVED) :], moves + 1
            continue
        where, moves = server, 0  # lost: ask the address we were given again
        lost_at = lost_at or time.monotonic()
        if time.monotonic() - lost_at > reconnect_for:
            print(f"{name}: gave up reconnecting after {reconnect_for:.0f}s", file=sys.stderr)
            return 1
        time.sleep(0.5)


# ``arena serve --workers``: a seat token sent to the front is refused with
# FAILED_PRECONDITION and this trailing metadata, naming the worker that hosts the seat.
SEAT_ADDRESS = "arena-seat-address"
MOVED = "moved:"


def _session(decide: Decide, name: str, server: str, token: str, version: str, table: Table) -> str:
    """One stream: "ended" (MatchEnd), "lost" (connection gone), "refused" (rejected) or
    "moved:HOST:PORT" (the seat plays at that address: docs/workers.md)."""
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()

    def messages() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    with _tls.channel(server) as channel:
        call = pb_grpc.ArenaStub(channel).Play(messages())
        try:
            call.initial_metadata()  # wait until the referee accepted the stream
            hello = pb.Hello(token=token, name=name, version=version, protocol=1)
            outbox.put(pb.BotMessage(hello=hello))
            _log("sent", pb.BotMessage(hello=hello))
            for message in call:
                _log("received", message)
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    table.seat = message.welcome.seat
                    table.rules = RuleSet.from_mapping(
                        {k: json.loads(v) for k, v in message.welcome.rules.items()}
                    )
                elif kind == "request":
                    request = message.request
                    try:
                        chosen = decide(request, table)
                    except Exception as exc:  # a bug in the bot: play the referee's fallback
                        print(
                            f"{name}: decide failed ({exc!r}); playing the fallback",
                            file=sys.stderr,
                        )
                        chosen = cards(request.fallback.cards)
                    action = pb.Action(seq=request.seq, cards=[card_to_pb(c) for c in chosen])
                    outbox.put(pb.BotMessage(action=action))
                    _log("sent", pb.BotMessage(action=action))
                elif kind == "verdict" and not message.verdict.accepted:
                    table.faults += 1
                    print(
                        f"{name}: fault on seq {message.verdict.seq}: {message.verdict.reason}",
                        file=sys.stderr,
                    )
                elif kind == "match_end":
                    return "ended"
        except grpc.RpcError as exc:
            code = exc.code()
            for key, value in exc.trailing_metadata() or ():  # type: ignore[attr-defined]
                if key == SEAT_ADDRESS and code == grpc.StatusCode.FAILED_PRECONDITION:
                    return MOVED + str(value)  # this seat plays at another address
            print(f"{name}: {code.name}: {exc.details()}", file=sys.stderr)
            if code == grpc.StatusCode.ALREADY_EXISTS and table.seat >= 0:
                return "lost"  # back too soon: the referee has not yet seen the old stream go
            if code in (
                grpc.StatusCode.UNAUTHENTICATED,
                grpc.StatusCode.ALREADY_EXISTS,
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.INVALID_ARGUMENT,
            ):
                return "refused"
            return "lost"
        finally:
            outbox.put(None)
    return "lost"  # the stream ended without a MatchEnd


def play_lobby(
    decide: Decide,
    name: str,
    server: str,
    bot_key: str,
    parallel: int = 1,
    version: str = "1.0",
    reconnect_for: float = 30.0,
) -> int:
    """Wait in the server's lobby with a bot key and play every seat it offers, each in
    its own thread, until the lobby is gone for longer than ``reconnect_for`` seconds
    (a server restart is shorter) or the key is refused (returns 1).

    A seat offered again (after a restart, or after this bot rejoined) while it is
    still being played is not played twice.
    """
    playing: set[tuple[str, int]] = set()
    lock = threading.Lock()

    def play(offer: pb.SeatOffer) -> None:
        try:
            run(decide, name, server, offer.seat_token, version, reconnect_for)
        finally:
            with lock:
                playing.discard((offer.match_id, offer.seat))

    lost_at: float | None = None
    while True:
        join = pb.LobbyJoin(
            bot_key=bot_key, parallel=parallel, name=name, version=version, protocol=1
        )
        try:
            with _tls.channel(server) as channel:
                for message in pb_grpc.LobbyStub(channel).Join(join):
                    lost_at = None
                    if message.WhichOneof("kind") == "welcome":
                        print(f"{name}: in the lobby as {message.welcome.bot}", file=sys.stderr)
                        continue
                    offer = message.offer
                    with lock:
                        if (offer.match_id, offer.seat) in playing:
                            continue
                        playing.add((offer.match_id, offer.seat))
                    threading.Thread(target=play, args=(offer,), daemon=True).start()
        except grpc.RpcError as exc:
            code = exc.code()
            if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                print(f"{name}: {code.name}: {exc.details()}", file=sys.stderr)
                return 1
        lost_at = lost_at or time.monotonic()
        if time.monotonic() - lost_at > reconnect_for:
            print(f"{name}: gave up on the lobby after {reconnect_for:.0f}s", file=sys.stderr)
            return 1
        time.sleep(0.5)
