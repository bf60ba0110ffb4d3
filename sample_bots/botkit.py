"""The plumbing every Python bot needs: connect, say hello, answer requests.

A bot is one function, ``decide(request, table) -> list of card codes`` (empty = pass a
bid). :func:`run` connects to the referee (``--server``/``ARENA_SERVER``) with the seat
token (``--token``/``ARENA_TOKEN``), answers every request with the same sequence number,
and returns when the match ends. Cards travel as enums; here they become 2-character
codes (``TS``, ``SJ``) and ``arena.rules.Card`` values, so the referee's own rules
library (``arena.rules``) can check a move before it is sent.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import grpc

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
    parser.add_argument("--name", default=None, help="the name shown in results")
    parser.add_argument("--seed", type=int, default=None, help="seed for the bot's own choices")
    return parser.parse_args()


def run(decide: Decide, name: str, server: str, token: str, version: str = "1.0") -> int:
    """Play one match; returns 0 when it ended normally."""
    if not token:
        print(f"{name}: no seat token (--token or ARENA_TOKEN)", file=sys.stderr)
        return 2
    table = Table()
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()

    def messages() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    with grpc.insecure_channel(server) as channel:
        call = pb_grpc.ArenaStub(channel).Play(messages())
        try:
            call.initial_metadata()  # wait until the referee accepted the stream
            outbox.put(
                pb.BotMessage(hello=pb.Hello(token=token, name=name, version=version, protocol=1))
            )
            for message in call:
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
                elif kind == "verdict" and not message.verdict.accepted:
                    table.faults += 1
                    print(
                        f"{name}: fault on seq {message.verdict.seq}: {message.verdict.reason}",
                        file=sys.stderr,
                    )
                elif kind == "match_end":
                    break
        except grpc.RpcError as exc:
            print(f"{name}: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
        finally:
            outbox.put(None)
    return 0
