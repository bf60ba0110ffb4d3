"""The game alone, and the game plus the edge's request encoding, in one process (t22edge).

Runs the real :class:`~arena.referee.Referee` over ``matches`` 4-deal matches with
in-process seats that answer their fallback after one checkpoint (a remote ask's wait is
one scheduler pass) and, with ``bytes``, encode each request as the Play stream does
(:meth:`SeatWire.encode`, one ``EventCache`` per match shared by its seats). Meant to be
run under cachegrind twice, with two match counts, to read instructions per decision by
difference (start-up cancels out)::

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        .venv/bin/python bench/edge_floor.py 1 none     # then 5 none, 1 bytes, 5 bytes

(``bench/server_cpu.py``'s floor converts with ``request_to_pb`` and builds a Verdict per
decision, heavier than the server's path; this one is the game as the server drives it.)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import trio

from arena.cli.logs import configure_logging
from arena.game import Action, Event, MatchEnded, MatchSetup, Request
from arena.referee import Fault, Referee, SeatVerdict, TimeControl
from arena.rules import RuleSet
from arena.server.limits import Limits
from arena.server.traffic import Ask, VerdictMode
from arena.server.wire import EventCache, SeatWire


class FallbackSeat:
    """Answers its fallback after one checkpoint; encodes each request if given a wire."""

    name = "fallback"
    version = "bench"

    def __init__(self, seat: int, wire: SeatWire | None) -> None:
        self.seat = seat
        self.wire = wire

    async def ask(self, seq: int, request: Request, deadline_ms: int, bank_ms: int) -> Action:
        if self.wire is not None:
            self.wire.encode(Ask(seq, request, deadline_ms, bank_ms))
        await trio.lowlevel.checkpoint()
        return request.fallback

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        return None

    def tell_events(self, events: Sequence[tuple[int, Event]]) -> None:
        return None

    async def finish(self, result: MatchEnded, faults: Sequence[Fault], record: str) -> None:
        await trio.lowlevel.checkpoint()


async def main(matches: int, encode: bool) -> None:
    rules = RuleSet.from_mapping({"deals": 4})
    decisions = 0
    for _ in range(matches):
        cache = EventCache()
        seats = [
            FallbackSeat(s, SeatWire(cache, VerdictMode.FAULTS_ONLY, Limits()) if encode else None)
            for s in range(4)
        ]
        referee = Referee("floor", MatchSetup(rules, 7), seats, TimeControl())
        await referee.run()
        decisions += referee.decisions
    print(f"{decisions} decisions")


if __name__ == "__main__":
    configure_logging("error")
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 1, sys.argv[2:3] == ["bytes"])
