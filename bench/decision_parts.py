"""The server's own work per decision, part by part (issue 20 item 2), no network.

Plays whole matches through the real :class:`~arena.referee.RefereeCore` as ``arena
serve`` drives it, each seat answering its request's fallback at once (what
``bench/bots/fallback_bot.py`` does), and times each part of a decision with
``perf_counter`` on this one thread:

- ``ask``: the core's ``ask`` — the sequence number and the seat's request (its view
  from :mod:`arena.game.views`, its new events, the fallback's frozen basis);
- ``fallback``: the request's fallback (computed when the wire message is built);
- ``encode``: the request's bytes as the server writes them (``server/wire.py``'s
  ``SeatWire.encode``: joined from encoded parts by ``server/request_wire.py``, the
  events through the match's ``EventCache``; no ``RefereeMessage`` is built);
- ``apply``: ``settle`` + ``apply`` (the machine, the fault policy, the record lines to
  a real ``RecordWriter`` on a temporary file);
- ``after``: what the trio ``Referee`` does after each answer (its log line, the verdict
  told, spectators' events).

The sum is the trio and asyncio threads' Python work per decision, without the
bridge's hops and gRPC itself. Figures are CPU time (``thread_time``), the best
round's mean per part, in µs per decision: the least disturbed by other work.

    .venv/bin/python bench/decision_parts.py [matches] [rounds]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from arena.cli.logs import configure_logging
from arena.game import MatchSetup
from arena.records import RecordHeader, RecordWriter, SeatRecord
from arena.referee import Referee, RefereeCore, TimeControl
from arena.referee.seats import LocalSeat
from arena.rules import RuleSet
from arena.server.limits import Limits
from arena.server.traffic import Ask, VerdictMode
from arena.server.wire import EventCache, SeatWire

PARTS = ("ask", "fallback", "encode", "apply", "after")


class _Nobody:
    name = "fallback"

    def decide(self, request: object) -> tuple[()]:  # never asked: the loop answers itself
        return ()


def one_match(seed: int, folder: Path, totals: dict[str, float]) -> int:
    """Play match ``seed``; add each part's seconds to ``totals``; return its decisions."""
    setup = MatchSetup(RuleSet(), seed)
    tc = TimeControl()
    seats = [LocalSeat(_Nobody()) for _ in range(4)]
    header = RecordHeader.for_setup(
        f"parts-{seed}", setup, [SeatRecord(f"seat{i}", "bench") for i in range(4)]
    )
    recorder = RecordWriter.open(folder / f"{seed}.jsonl", header, overwrite=True)
    referee = Referee(f"parts-{seed}", setup, seats, tc, recorder=recorder)
    core: RefereeCore = referee.core
    cache = EventCache()
    wires = [SeatWire(cache, VerdictMode.FAULTS_ONLY, Limits()) for _ in range(4)]
    clock = time.thread_time  # CPU time: steadier than the wall clock on a loaded machine
    t_ask = t_fb = t_enc = t_apply = t_after = 0.0
    while not core.finished:
        for decision in core.match.pending():
            t0 = clock()
            ask = core.ask(decision, core.tally.clock)
            t1 = clock()
            answer = ask.request.fallback
            t2 = clock()
            wires[decision.seat].encode(Ask(ask.seq, ask.request, 2000, 30000))
            t4 = clock()
            deal = core.match.snapshot().deal
            where = (deal.deal, deal.trick)
            outcome = core.settle(ask, answer, None, 0.001)
            verdict = core.apply(outcome)
            t5 = clock()
            referee._answered(outcome, verdict, where)
            referee._publish()
            t6 = clock()
            t_ask += t1 - t0
            t_fb += t2 - t1
            t_enc += t4 - t2
            t_apply += t5 - t4
            t_after += t6 - t5
            if core.finished:
                break
    core.close()  # the footer closes the writer's file
    for key, value in zip(PARTS, (t_ask, t_fb, t_enc, t_apply, t_after), strict=True):
        totals[key] += value
    return core.tally.decisions


def main() -> None:
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    configure_logging("warning")
    per_round: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            totals = dict.fromkeys(PARTS, 0.0)
            decisions = sum(one_match(seed, Path(tmp), totals) for seed in range(matches))
            per_round.append({k: v / decisions * 1e6 for k, v in totals.items()})
    print(f"{matches} matches × {rounds} rounds, {decisions} decisions per round; µs/decision")
    total = 0.0
    for key in PARTS:
        value = min(r[key] for r in per_round)
        total += value
        print(f"  {key:<10}{value:>8.1f}")
    print(f"  {'total':<10}{total:>8.1f}")


if __name__ == "__main__":
    main()
