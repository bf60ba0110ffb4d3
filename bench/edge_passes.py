"""The gRPC thread's asyncio loop passes per decision, in place (issue 20).

A pass of the loop is one ``select()`` and the callbacks ready after it: the raw grpc.aio
server makes about four per round trip (the read's completion, the task reading and
writing, the write's completion, the task reading again). This runs the matches of
``bench/server_cpu.py`` (an embedded server, four ``fallback_bot.py`` processes) with the
gRPC thread's selector counting its passes and the time it spent in them outside
``select()``, and prints them per decision beside the thread's CPU. A count, not a time:
steady on a loaded machine. Compare checkouts with ``PYTHONPATH``:

    PYTHONPATH=/work/main .venv/bin/python bench/edge_passes.py [--deals 4] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import trio
from remote_kit import Spawner, die_with_parent
from server_cpu import _load, arena_round

from arena.cli.logs import configure_logging
from arena.rules import RuleSet
from arena.server import loop_clock

PASSES = [0, 0.0]  # passes, seconds in select()


class _Counting(loop_clock.IterationClock):
    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        t0 = time.thread_time()
        ready = super().select(timeout)
        PASSES[0] += 1
        PASSES[1] += time.thread_time() - t0
        return ready


def _new_event_loop() -> asyncio.AbstractEventLoop:
    clock = _Counting()
    loop = asyncio.SelectorEventLoop(clock)
    loop_clock._CLOCKS[loop] = clock
    return loop


async def main(args: argparse.Namespace) -> None:
    loop_clock.new_event_loop = _new_event_loop  # type: ignore[assignment]
    rules = RuleSet.from_mapping({"deals": args.deals})
    print(f"load average before: {_load()}")
    with Spawner() as spawner:
        await arena_round(rules, spawner)  # warm-up
        decisions, grpc_cpu = 0, 0.0
        passes, selected = PASSES[0], PASSES[1]
        for _ in range(args.rounds):
            n, threads, _cpu = await arena_round(rules, spawner)
            decisions += n
            grpc_cpu += threads.get("grpc.aio thread (asyncio)", 0.0)
        passes, selected = PASSES[0] - passes, PASSES[1] - selected
    print(f"{decisions} decisions over {args.rounds} rounds")
    print(f"  loop passes per decision        {passes / decisions:6.2f}")
    print(f"  select() CPU per decision       {selected / decisions * 1e6:6.1f} µs")
    print(f"  grpc.aio thread CPU per decision {grpc_cpu / decisions * 1e6:5.0f} µs")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    configure_logging("error")
    die_with_parent()
    trio.run(main, parser.parse_args())
