"""Answers its first play with a card it does not hold and its first follow after that
with one card too many; then plays the referee's fallbacks."""

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play

from arena.v1 import arena_pb2 as pb

SUITS = (pb.SPADES, pb.HEARTS, pb.CLUBS, pb.DIAMONDS)
ALL = [pb.Card(suit=s, rank=r) for s in SUITS for r in range(2, 15)]  # type: ignore[arg-type]
cheats = ["not held", "wrong count"]


def key(card: pb.Card) -> tuple[int, int]:
    return card.suit, card.rank


def on_request(request: pb.Request) -> list[pb.BotMessage]:
    hand = {key(c) for c in request.view.hand}
    if request.kind != pb.PLAY or not cheats:
        return [answer(request)]
    if cheats[0] == "not held":
        cheats.pop(0)
        missing = next(c for c in ALL if key(c) not in hand)
        return [answer(request, [missing] * max(1, request.count))]
    if request.count:  # following: one card more than the lead
        cheats.pop(0)
        return [answer(request, request.view.hand[: request.count + 1])]
    return [answer(request)]


with grpc.insecure_channel(SERVER) as channel:
    play(Stream(channel, hello(name="illegal")), on_request)
