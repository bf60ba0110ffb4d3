"""A bot that records every message it gets, for tests/test_verdict_modes.py.

    python tests/verdict_bot.py MODE REPORT [--illegal N]

MODE is ``every`` (a Hello without ``verdicts``: the protocol's original behaviour, a
Verdict per answer) or ``faults`` (``VERDICT_FAULTS_ONLY``). It answers each request with
the referee's own fallback, except its first PLAY request from the Nth request on, which
it answers with no cards (an illegal play). At MatchEnd it writes, as JSON to REPORT, what
it received in order: each message's kind, its ``accepted_seq``, and the request's or
verdict's seq (and whether the verdict accepted).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


async def play(mode: str, report: str, illegal_from: int) -> None:
    server, token = os.environ["ARENA_SERVER"], os.environ["ARENA_TOKEN"]
    seen: list[dict[str, Any]] = []
    requests = 0
    illegal_sent = False
    async with grpc.aio.insecure_channel(server) as channel:
        call = pb_grpc.ArenaStub(channel).Play()
        await call.initial_metadata()
        hello = pb.Hello(token=token, name=f"verdict-{mode}", version="0", protocol=1)
        if mode == "faults":
            hello.verdicts = pb.VERDICT_FAULTS_ONLY
        await call.write(pb.BotMessage(hello=hello))
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:  # type: ignore[attr-defined]
                break
            kind = message.WhichOneof("kind")
            entry: dict[str, Any] = {"kind": kind, "ack": message.accepted_seq}
            seen.append(entry)
            if kind == "welcome":
                entry["verdicts"] = int(message.welcome.verdicts)
            elif kind == "verdict":
                entry.update(seq=message.verdict.seq, accepted=message.verdict.accepted)
            elif kind == "request":
                request = message.request
                requests += 1
                entry["seq"] = request.seq
                cards = list(request.fallback.cards)
                wrong = requests >= illegal_from > 0 and request.kind == pb.PLAY
                if wrong and not illegal_sent:
                    cards, illegal_sent = [], True
                    entry["illegal"] = True
                action = pb.Action(seq=request.seq, cards=cards)
                await call.write(pb.BotMessage(action=action))
            elif kind == "match_end":
                break
        await call.done_writing()
    with open(report, "w", encoding="utf-8") as out:
        json.dump(seen, out)


if __name__ == "__main__":
    illegal = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--illegal" else 0
    asyncio.run(play(sys.argv[1], sys.argv[2], illegal))
