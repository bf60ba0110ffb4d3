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
import sys
import threading
import time
from pathlib import Path
from typing import Any

import trio
from remote_kit import BOT, Spawner, die_with_parent
from server_cpu import SEED, _load

from arena.cli.logs import configure_logging
from arena.referee import TimeControl
from arena.rules import RuleSet
from arena.server import loop_clock
from arena.server.app import open_arena_server
from arena.server.host import MatchSpec

PASSES = [0, 0.0]  # passes, seconds in select()


def grpc_thread_ns() -> int:
    """The gRPC thread's CPU time (ns, ``/proc/self/task/*/schedstat``: exact, unlike the
    10 ms ticks of ``stat``)."""
    for thread in threading.enumerate():
        if thread.name.startswith("arena-grpc") and thread.native_id is not None:
            path = Path(f"/proc/self/task/{thread.native_id}/schedstat")
            return int(path.read_text().split()[0])
    return 0


class _Counting(loop_clock.IterationClock):
    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        t0 = time.thread_time()
        ready = super().select(timeout)
        PASSES[0] += 1
        PASSES[1] += time.thread_time() - t0
        return ready


def _new_event_loop() -> asyncio.AbstractEventLoop:
    clock = _Counting()
    # the loop class of this checkout (with eager wake-ups where it has them)
    loop_class = getattr(loop_clock, "_ClockedLoop", None)
    loop = asyncio.SelectorEventLoop(clock) if loop_class is None else loop_class(clock)
    loop_clock._CLOCKS[loop] = clock
    return loop


async def arena_round(rules: RuleSet, spawner: Spawner) -> tuple[int, float, float]:
    """(decisions, the gRPC thread's CPU s, the process's CPU s) of one match (as
    ``bench/server_cpu.py``'s round, with the thread's CPU read exactly)."""
    async with open_arena_server() as server:
        hosted = server.host.create(MatchSpec(rules=rules, seed=SEED, time_control=TimeControl()))
        argv = [sys.executable, str(BOT), "--server", server.target]
        procs = [spawner.spawn([*argv, f"--token={t}"]) for t in hosted.tokens if t is not None]
        grpc_ns, cpu = grpc_thread_ns(), time.process_time()
        await hosted.done.wait()
        grpc_ns, cpu = grpc_thread_ns() - grpc_ns, time.process_time() - cpu
        await spawner.wait_all(procs)
    assert hosted.referee is not None, hosted.error
    return hosted.referee.decisions, grpc_ns / 1e9, cpu


async def main(args: argparse.Namespace) -> None:
    loop_clock.new_event_loop = _new_event_loop  # type: ignore[assignment]
    rules = RuleSet.from_mapping({"deals": args.deals})
    print(f"load average before: {_load()}")
    with Spawner() as spawner:
        await arena_round(rules, spawner)  # warm-up
        decisions, grpc_cpu, process_cpu = 0, 0.0, 0.0
        passes, selected = PASSES[0], PASSES[1]
        for _ in range(args.rounds):
            n, grpc_s, process_s = await arena_round(rules, spawner)
            decisions += n
            grpc_cpu += grpc_s
            process_cpu += process_s
        passes, selected = PASSES[0] - passes, PASSES[1] - selected
    print(f"{decisions} decisions over {args.rounds} rounds")
    print(f"  loop passes per decision        {passes / decisions:6.2f}")
    print(f"  select() CPU per decision       {selected / decisions * 1e6:6.1f} µs")
    print(f"  grpc.aio thread CPU per decision {grpc_cpu / decisions * 1e6:5.0f} µs")
    print(f"  server process CPU per decision  {process_cpu / decisions * 1e6:5.0f} µs")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    configure_logging("error")
    die_with_parent()
    trio.run(main, parser.parse_args())
