"""A cheating bot: at its first PLAY request, mid-deal, it tries every RPC it can reach
with what a seat has (the match id from its Welcome, its own seat token) to read the
other hands, then waits for ``$CHEAT_GO`` (the test looks at the match meanwhile) and
plays the referee's fallbacks to the end.

Each attempt is reported as ``{"attack": ..., "code": ..., "received": [...]}``: the
status it ended with and every line or event it got (none, if the server holds)."""

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import grpc
from hostile_kit import SERVER, TOKEN, Stream, answer, hello, report

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


def attempt(name: str, call: Callable[[], Any]) -> None:
    received: list[str] = []
    try:
        result = call()
        items: Iterable[Any] = result if hasattr(result, "__next__") else [result]
        for item in items:
            received.append(str(item))
        code = "OK"
    except grpc.RpcError as exc:
        code = exc.code().name  # type: ignore[attr-defined]
    report(attack=name, code=code, received=received)


def attack(channel: grpc.Channel, match_id: str) -> None:
    matches = pb_grpc.MatchesStub(channel)
    as_seat = (("authorization", f"Bearer {TOKEN}"),)
    for who, metadata in (("anonymous", ()), ("seat token", as_seat)):
        for name, rpc, request in (
            ("FetchRecord", matches.FetchRecord, pb.FetchRecordRequest(match_id=match_id)),
            ("FetchRecord full", matches.FetchRecord,
             pb.FetchRecordRequest(match_id=match_id, full=True)),
            ("Watch", matches.Watch, pb.WatchRequest(match_id=match_id)),
            ("List", matches.List, pb.ListMatchesRequest()),
            ("Get", matches.Get, pb.GetMatchRequest(match_id=match_id)),
            ("Create", matches.Create, pb.CreateMatchRequest()),
            ("Cancel", matches.Cancel, pb.CancelMatchRequest(match_id=match_id)),
        ):  # fmt: skip
            attempt(f"{name} as {who}", lambda: rpc(request, metadata=metadata, timeout=5))  # noqa: B023
    # Another seat's stream with a token guessed from its own (one character changed).
    guess = TOKEN[:-1] + ("0" if TOKEN[-1] != "0" else "1")

    def other_seat() -> Any:
        stream = Stream(channel, hello(token=guess, name="cheat"))
        try:
            return list(stream)
        finally:
            stream.close()

    attempt("Play with a guessed token", other_seat)


def main() -> None:
    with grpc.insecure_channel(SERVER) as channel:
        stream = Stream(channel, hello(name="cheat"))
        attacked = False
        for message in stream:
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                welcome = message.welcome
                report(welcome_seat=welcome.seat, match_id=welcome.match_id)
            elif kind == "request":
                request = message.request
                if request.kind == pb.PLAY and not attacked:
                    attacked = True
                    attack(channel, welcome.match_id)
                    report(paused=True, deal=request.view.deal_number,
                           hand=[str(c) for c in request.view.hand])  # fmt: skip
                    deadline = time.monotonic() + 60
                    while not os.path.exists(os.environ["CHEAT_GO"]):
                        if time.monotonic() > deadline:
                            break
                        time.sleep(0.05)
                stream.send(answer(request))
            elif kind == "match_end":
                report(match_end=message.match_end.result.reason)
                break
        stream.close()


main()
