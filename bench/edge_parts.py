"""The gRPC thread's own Python per decision, part by part, on one thread (issue 20).

Captures every request of whole matches played by the real referee (each seat answering
its fallback at once, as ``bench/bots/fallback_bot.py`` does), then times what the Play
stream does with them on the grpc.aio thread, apart from gRPC and the loop (the
request's fallback, computed lazily when the edge first reads it, is left out: it is
the referee's, ``bench/decision_parts.py``):

- ``request``: a request as the bytes gRPC writes — ``SeatWire.encode`` where it exists,
  else (an older checkout) ``SeatWire.message`` plus the serializer gRPC ran on it;
- ``answer``: the bot's answer read (``BotMessage`` parsed, ``SeatWire.answer``).

CPU time (``thread_time``), the best of the rounds, µs per decision. Being one thread and
no network it is steady on a loaded machine: run it against an older checkout with
``PYTHONPATH=/path/to/checkout`` to compare the same parts.

    .venv/bin/python bench/edge_parts.py [matches] [rounds]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from arena.cli.logs import configure_logging
from arena.game import MatchSetup
from arena.referee import Referee, TimeControl
from arena.referee.seats import LocalSeat
from arena.rules import RuleSet
from arena.server import view_wire
from arena.server.limits import Limits
from arena.server.traffic import Ask, VerdictMode
from arena.server.wire import EventCache, SeatWire
from arena.v1 import arena_pb2 as pb


class _Nobody:
    name = "fallback"

    def decide(self, request: object) -> tuple[()]:  # never asked: the loop answers
        return ()


def capture(seed: int) -> list[tuple[int, Ask, bytes]]:
    """(seat, the edge's Ask, the answer's bytes) of every decision of match ``seed``."""
    seats = [LocalSeat(_Nobody()) for _ in range(4)]
    core = Referee(f"edge-{seed}", MatchSetup(RuleSet(), seed), seats, TimeControl()).core
    out: list[tuple[int, Ask, bytes]] = []
    while not core.finished:
        for decision in core.match.pending():
            ask = core.ask(decision, core.tally.clock)
            fallback = ask.request.fallback
            answer = pb.BotMessage()
            answer.action.seq = ask.seq
            answer.action.MergeFromString(view_wire.ACTION_CARDS.encode(fallback))
            item = Ask(ask.seq, ask.request, 2000, 30_000, ask.seq - 1)
            out.append((decision.seat, item, answer.SerializeToString()))
            core.apply(core.settle(ask, fallback, None, 0.001))
            if core.finished:
                break
    return out


def _writer(wire: SeatWire) -> Callable[[Ask], bytes]:
    encode = getattr(wire, "encode", None)
    if encode is not None:
        return encode  # type: ignore[no-any-return]
    return lambda item: wire.message(item).SerializeToString()


def main() -> None:
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    configure_logging("warning")
    decisions = [d for seed in range(matches) for d in capture(seed)]
    best = {"request": 1e9, "answer": 1e9}
    for _ in range(rounds):
        cache = EventCache()
        wires = [SeatWire(cache, VerdictMode.FAULTS_ONLY, Limits()) for _ in range(4)]
        writers = [_writer(w) for w in wires]
        clock = time.thread_time
        t_request = t_answer = 0.0
        for seat, item, answer in decisions:
            t0 = clock()
            writers[seat](item)
            t1 = clock()
            wires[seat].answer(pb.BotMessage.FromString(answer))
            t_answer += clock() - t1
            t_request += t1 - t0
        best["request"] = min(best["request"], t_request)
        best["answer"] = min(best["answer"], t_answer)
    print(f"{matches} matches, {len(decisions)} decisions, best of {rounds}; µs/decision")
    for part in ("request", "answer"):
        print(f"  {part:<10}{best[part] / len(decisions) * 1e6:>8.1f}")


if __name__ == "__main__":
    main()
