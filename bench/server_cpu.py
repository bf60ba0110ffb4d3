"""Where the server's CPU per decision goes: per thread, and (``--profile``) per function.

Runs one arena match (``--deals``, default 6) on an embedded server (as ``arena serve``:
``open_arena_server``) with four ``bench/bots/fallback_bot.py`` processes answering at
once, and prints the server process's CPU per decision split by thread (read from
``/proc/self/task``: the trio thread, the gRPC thread, grpc's own C threads). Beside it, in
the same run and interleaved, the raw grpc.aio replay of the same messages to four
clients (``bench/remote_kit.replay_raw``): its CPU per round trip is the yardstick of
issue 20's CPU goal.

``--profile`` adds a yappi CPU profile of every Python thread of the arena rounds (yappi is
a measuring tool only, not a dependency: ``pip install yappi`` into the venv first), its
top functions by own CPU time, per decision (``--profile-out F``: the trio thread's as a
pstats file, for callers and callees).

The trio thread's own figures (issue 20, branch t21trio), for its driving of the game
apart from the game itself:

- ``--parts``: its CPU (``thread_time``) inside the referee core's ``ask``/``settle``/
  ``apply`` (the game) and the rest (trio, the referee's task, the seat, the door, the
  hops); with ``BENCH_DRIVING_PARTS=1`` also inside the driving's own functions;
- ``--count``: scheduler passes (I/O waits) and task steps per decision (a trio
  ``Instrument``);
- ``--calls``: Python and C calls per decision outside the core, by function
  (``sys.setprofile``, slow): counts, which the machine's load moves far less than times.

``--syscalls`` (branch t22edge): system calls per decision (per round trip for the raw
path), by thread and by call, from ``perf trace -s`` attached to this process around each
round (root or ``perf_event_paranoid`` ≤ 1; perf's tracing slows the run, so read the
counts, not the CPU figures, of such a run). ``futex`` is mostly the GIL changing hands.

    .venv/bin/python bench/server_cpu.py [--deals 6] [--rounds 3] [--profile] [--parts]
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

import trio
from remote_kit import (
    BOT,
    ReplayArena,
    ScriptSeat,
    Spawner,
    Step,
    die_with_parent,
    replay_raw,
)

from arena.cli.logs import configure_logging
from arena.game import MatchSetup
from arena.referee import Referee, TimeControl
from arena.rules import RuleSet
from arena.server.app import open_arena_server
from arena.server.bridge import GrpcServerConfig, open_grpc_server
from arena.server.host import MatchSpec
from arena.v1 import arena_pb2_grpc as pb_grpc

SEED = 7
TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of each thread of this process, by thread name
    (numbered threads of one name are summed)."""
    out: dict[str, float] = defaultdict(float)
    named = {t.native_id: t.name for t in threading.enumerate()}
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        name = named.get(int(task.name), f"C: {name}")
        out[_kind(name)] += (int(fields[11]) + int(fields[12])) / TICK
        out[f"system: {_kind(name)}"] += int(fields[12]) / TICK
        try:
            status = (task / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.endswith("ctxt_switches:") or "ctxt_switches" in line:
                key, value = line.split(":")
                out[f"switches ({key.split('_')[0]}): {_kind(name)}"] += int(value)
    return out


def _kind(name: str) -> str:
    if name.startswith("arena-grpc"):
        return "grpc.aio thread (asyncio)"
    if name == "MainThread":
        return "main thread (trio)"
    if name.startswith("Trio"):
        return "trio worker threads"
    return name.rstrip("0123456789")


class StepCounter(trio.abc.Instrument):
    """Counts on the trio thread (``--count``): scheduler passes (I/O waits, and how many
    of them could block), task steps by task name. Counts, unlike times, do not move with
    the machine's load."""

    def __init__(self) -> None:
        self.passes = 0
        self.blocking = 0
        self.steps: dict[str, int] = defaultdict(int)

    def before_io_wait(self, timeout: float) -> None:
        self.passes += 1
        self.blocking += timeout > 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps[task.name.rsplit(".", 1)[-1]] += 1


class SyscallTrace:
    """``--syscalls``: ``perf trace -s -p <this process>`` around one round; the counts
    summed per (path, thread, system call). Counts, steady under load."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], int] = defaultdict(int)
        self._proc: subprocess.Popen[bytes] | None = None
        self._out = ""

    async def start(self) -> None:
        fd, self._out = tempfile.mkstemp(suffix=".perf-trace")
        os.close(fd)
        argv = ["perf", "trace", "-s", "-p", str(os.getpid()), "-o", self._out]
        self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await trio.sleep(1.0)  # attached before the bots start answering

    def stop(self, path: str) -> None:
        assert self._proc is not None
        named = {t.native_id: t.name for t in threading.enumerate()}
        self._proc.send_signal(signal.SIGINT)
        self._proc.wait()
        thread = ""
        for line in Path(self._out).read_text().splitlines():
            head = re.match(r"\s*(.+?) \((\d+)\), \d+ events", line)
            if head:
                tid = int(head.group(2))
                thread = _kind(named.get(tid, f"C: {head.group(1)}"))
                continue
            row = re.match(r"\s+([a-z_0-9]+)\s+(\d+)\s+\d+\s+[\d.]+", line)
            if row and thread:
                self.counts[(path, thread, row.group(1))] += int(row.group(2))
        os.unlink(self._out)

    async def replay_raw(
        self, script: list[Step], clients: int, spawner: Spawner, verdicts: bool
    ) -> tuple[list[float], float, float]:
        """``remote_kit.replay_raw`` with the trace attached once its server runs."""
        servicer = ReplayArena(script, clients, False, verdicts)
        registrations = [partial(pb_grpc.add_ArenaServicer_to_server, servicer)]
        config = GrpcServerConfig(service_names=("arena.v1.Arena",))
        async with open_grpc_server(registrations, config) as server:
            await self.start()
            argv = [sys.executable, str(BOT), "--server", server.target]
            cpu = time.process_time()
            await spawner.wait_all([spawner.spawn([*argv, f"--token={s}"]) for s in range(clients)])
            cpu = time.process_time() - cpu
            self.stop("raw")
        if servicer.error:
            raise RuntimeError(f"raw replay failed: {servicer.error}")
        return servicer.latencies, servicer.wall, cpu

    def report(self, path: str, n: int) -> None:
        if not n:
            return
        by_thread: dict[str, int] = defaultdict(int)
        for (p, thread, _), count in self.counts.items():
            if p == path:
                by_thread[thread] += count
        total = sum(by_thread.values())
        print(
            f"  system calls per {'decision' if path == 'arena' else 'round trip'} ({path}):"
            f" {total / n:.2f}"
        )
        for thread, count in sorted(by_thread.items(), key=lambda kv: -kv[1]):
            if count / n < 0.05:
                continue
            calls = sorted(
                ((c, k[2]) for k, c in self.counts.items() if k[0] == path and k[1] == thread),
                reverse=True,
            )
            each = ", ".join(f"{name} {c / n:.2f}" for c, name in calls if c / n >= 0.05)
            print(f"    {thread:<30}{count / n:>6.2f}: {each}")


class GamePart:
    """``--parts``: the trio thread's CPU inside the referee core's calls (the game's
    work: ``ask``, ``settle``, ``apply``), timed in place with ``thread_time``; the rest
    of the thread's CPU is the driving (trio, the referee's task, the seat, the hops)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        from arena.referee.core import RefereeCore

        for name in ("ask", "settle", "apply"):
            setattr(RefereeCore, name, self._timed(f"core {name}", getattr(RefereeCore, name)))
        if os.environ.get("BENCH_DRIVING_PARTS"):  # the driving's parts too (more overhead)
            from arena.referee import Referee
            from arena.server.door import SeatDoor
            from arena.server.remote import RemoteSeat

            for cls, name in (
                (Referee, "_step"),
                (Referee, "_ask"),
                (Referee, "_publish"),
                (Referee, "_answered"),
                (RemoteSeat, "ask"),
                (RemoteSeat, "_send"),
                (SeatDoor, "wait"),
            ):
                setattr(cls, name, self._timed(name, getattr(cls, name)))

    def _timed(self, name: str, fn: Any) -> Any:
        seconds = self.seconds
        clock = time.thread_time
        if inspect.iscoroutinefunction(fn):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                began = clock()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    seconds[name] += clock() - began

            return timed_async

        def timed(*args: Any, **kwargs: Any) -> Any:
            began = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                seconds[name] += clock() - began

        return timed


class CallCounter:
    """``--calls``: Python and C function calls on the trio thread per decision, by
    area (``sys.setprofile``: slow, but a count, steady under any load). The game's
    share is every call made inside the referee core's ``ask``/``settle``/``apply``."""

    GAME = ("ask", "settle", "apply")

    def __init__(self) -> None:
        self.calls: dict[str, int] = defaultdict(int)
        self._depth = 0  # > 0: inside a core call

    def start(self) -> None:
        sys.setprofile(self._event)

    def stop(self) -> None:
        sys.setprofile(None)

    def _event(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            if self._depth or (code.co_name in self.GAME and code.co_filename.endswith("core.py")):
                self._depth += 1
                self.calls["game"] += 1
            else:
                self.calls[f"{_area(code.co_filename)} {code.co_name}"] += 1
        elif event == "return":
            if self._depth:
                self._depth -= 1
        elif event == "c_call":
            key = "game" if self._depth else f"C {getattr(arg, '__qualname__', '?')}"
            self.calls[key] += 1


class GcTimer:
    """CPU time the cyclic garbage collector takes (``gc.callbacks``), per generation."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.runs = [0, 0, 0]
        self._began = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.thread_time()
        else:
            self.seconds[info["generation"]] += time.thread_time() - self._began
            self.runs[info["generation"]] += 1


def diff(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before.get(k, 0.0) for k in after}


async def arena_round(
    rules: RuleSet, spawner: Spawner, syscalls: SyscallTrace | None = None
) -> tuple[int, dict[str, float], float]:
    """(decisions, CPU s per thread, process CPU s) of one match."""
    async with open_arena_server() as server:
        hosted = server.host.create(MatchSpec(rules=rules, seed=SEED, time_control=TimeControl()))
        if syscalls is not None:  # after the server's threads started: perf sees them
            await syscalls.start()
        argv = [sys.executable, str(BOT), "--server", server.target]
        procs = [spawner.spawn([*argv, f"--token={t}"]) for t in hosted.tokens if t is not None]
        before, cpu, main = thread_cpu(), time.process_time(), time.thread_time()
        await hosted.done.wait()
        cpu = time.process_time() - cpu
        threads = diff(thread_cpu(), before)
        threads["main thread_time"] = time.thread_time() - main
        await spawner.wait_all(procs)
        if syscalls is not None:
            syscalls.stop("arena")
    assert hosted.referee is not None, hosted.error
    return hosted.referee.decisions, threads, cpu


async def main(args: argparse.Namespace) -> None:
    rules = RuleSet.from_mapping({"deals": args.deals})
    for _warm in range(2):  # the second run is timed: the first pays for first calls
        script: list[Step] = []
        seats = [ScriptSeat(s, script) for s in range(4)]
        floor = Referee("capture", MatchSetup(rules, SEED), seats, TimeControl())
        floor_cpu = time.process_time()
        await floor.run()
        floor_us = (time.process_time() - floor_cpu) / floor.decisions * 1e6
    yappi: Any = None
    if args.profile:
        import yappi  # a measuring tool, only with --profile (not a dependency)

        yappi.set_clock_type("cpu")
    totals: dict[str, float] = defaultdict(float)
    threads: dict[str, float] = defaultdict(float)
    decisions = 0
    raw_cpu, raw_trips = 0.0, 0
    counter = StepCounter() if args.count else None
    parts = GamePart() if args.parts else None
    call_counter = CallCounter() if args.calls else None
    syscalls = SyscallTrace() if args.syscalls else None
    gc_timer = GcTimer()
    gc_count, gc_time = [0, 0, 0], [0.0, 0.0, 0.0]
    print(f"load average before: {_load()}")
    with Spawner() as spawner:
        for r in range(args.rounds):
            order = ("arena", "raw") if r % 2 == 0 else ("raw", "arena")
            for path in order:
                if args.only and path != args.only:
                    continue
                if path == "raw":
                    replay = replay_raw if syscalls is None else syscalls.replay_raw
                    latencies, _, cpu = await replay(script, 4, spawner, verdicts=False)
                    raw_cpu += cpu
                    raw_trips += len(latencies)
                    continue
                if yappi is not None:
                    yappi.start(builtins=False, profile_threads=True)
                gc_runs = list(gc_timer.runs), list(gc_timer.seconds)
                if counter is not None:
                    trio.lowlevel.add_instrument(counter)
                if parts is not None:
                    parts.seconds.clear()
                if call_counter is not None:
                    call_counter.start()
                n, per_thread, cpu = await arena_round(rules, spawner, syscalls)
                if call_counter is not None:
                    call_counter.stop()
                if parts is not None:
                    totals["main thread_time"] += per_thread.pop("main thread_time")
                    for k, v in parts.seconds.items():
                        totals[k if k.startswith("core ") else f"part {k}"] += v
                if counter is not None:
                    trio.lowlevel.remove_instrument(counter)
                for g in range(3):
                    gc_count[g] += gc_timer.runs[g] - gc_runs[0][g]
                    gc_time[g] += gc_timer.seconds[g] - gc_runs[1][g]
                if yappi is not None:
                    yappi.stop()
                decisions += n
                totals["process"] += cpu
                per_thread.pop("main thread_time", None)
                for k, v in per_thread.items():
                    threads[k] += v
    raw_us = raw_cpu / raw_trips * 1e6 if raw_trips else float("nan")
    arena_us = totals["process"] / decisions * 1e6 if decisions else float("nan")
    print(f"{decisions} arena decisions, {raw_trips} raw round trips, {args.rounds} rounds each")
    print(f"  arena server CPU per decision {arena_us:.0f} µs = {arena_us / raw_us:.2f}× raw")
    print(f"  raw grpc.aio (4 clients) CPU per round trip {raw_us:.0f} µs")
    print(f"  in-process seats (referee + request_to_pb, no network) {floor_us:.0f} µs")
    for name, seconds in sorted(threads.items(), key=lambda kv: -kv[1]):
        if name.startswith(("switches", "system")):
            continue
        print(f"    {name:<34}{seconds / decisions * 1e6:>8.0f} µs")
    for name, seconds in sorted(threads.items(), key=lambda kv: -kv[1]):
        if name.startswith("system") and seconds / decisions >= 5e-6:
            print(f"    {'of which ' + name:<34}{seconds / decisions * 1e6:>8.0f} µs")
    gcs = ", ".join(
        f"gen{g} {gc_count[g] / decisions:.2f}/dec {gc_time[g] / decisions * 1e6:.0f} µs"
        for g in range(3)
    )
    print(f"  cyclic GC per decision (arena rounds): {gcs}")
    print("  context switches per decision:")
    for name, count in sorted(threads.items(), key=lambda kv: -kv[1]):
        if name.startswith("switches") and count / decisions >= 0.05:
            print(f"    {name:<60}{count / decisions:>6.2f}")
    if parts is not None:
        game = sum(v for k, v in totals.items() if k.startswith("core "))
        main = totals["main thread_time"]
        each = ", ".join(
            f"{k[5:]} {v / decisions * 1e6:.0f}" for k, v in totals.items() if k.startswith("core ")
        )
        rest = (main - game) / decisions * 1e6
        print(
            f"  trio thread (thread_time) {main / decisions * 1e6:.0f} µs/decision: the core"
            f" {game / decisions * 1e6:.0f} ({each}), the rest {rest:.0f}"
        )
        for k, v in totals.items():
            if k.startswith("part "):
                print(f"    {k[5:]:<24}{v / decisions * 1e6:>6.0f} µs (inclusive)")
    if call_counter is not None:
        c = call_counter.calls
        rest = sum(v for k, v in c.items() if k != "game")
        print(
            f"  trio thread calls per decision: game {c['game'] / decisions:.1f},"
            f" the rest {rest / decisions:.1f}:"
        )
        for k, v in sorted(c.items(), key=lambda kv: -kv[1]):
            if k != "game" and v / decisions >= 0.5:
                print(f"    {k:<58}{v / decisions:>6.1f}")
    if counter is not None:
        print(
            f"  trio thread per decision: {counter.passes / decisions:.2f} scheduler passes"
            f" ({counter.blocking / decisions:.2f} may block),"
            f" {sum(counter.steps.values()) / decisions:.2f} task steps:"
        )
        for name, count in sorted(counter.steps.items(), key=lambda kv: -kv[1]):
            if count / decisions >= 0.01:
                print(f"    {name:<58}{count / decisions:>6.2f}")
    if syscalls is not None:
        syscalls.report("arena", decisions)
        syscalls.report("raw", raw_trips)
    print(f"load average after: {_load()}")
    if yappi is not None:
        _print_profile(yappi, decisions, args.top)
        if args.profile_out:  # the trio thread's, for pstats (callers, callees)
            main_ids = [t.id for t in yappi.get_thread_stats() if t.name == "_MainThread"]
            stats = yappi.get_func_stats(filter={"ctx_id": main_ids[0]})
            stats.save(args.profile_out, type="pstat")
    if args.json_out:
        figures = {"arena_us": arena_us, "raw_us": raw_us, "threads": threads}
        Path(args.json_out).write_text(json.dumps(figures))


def _area(module: str) -> str:
    """A function's part of the server, by its file."""
    path = Path(module)
    parts = path.parts
    if "arena" in parts and "site-packages" not in parts:
        i = len(parts) - 1 - parts[::-1].index("arena")
        return "/".join(parts[i : i + 2]) if parts[i + 1 : i + 2] != (path.name,) else "arena"
    for lib in ("trio", "asyncio", "grpc", "structlog", "google", "outcome", "sniffio"):
        if lib in parts:
            return lib
    return path.name


def _print_profile(yappi: Any, decisions: int, top: int) -> None:
    names = {t.id: t.name for t in yappi.get_thread_stats()}
    areas: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for tid, tname in names.items():
        for s in yappi.get_func_stats(filter={"ctx_id": tid}):
            areas["trio thread" if tname == "_MainThread" else "asyncio thread"][
                _area(s.module)
            ] += s.tsub
    for thread, by_area in areas.items():
        total = sum(by_area.values())
        print(f"\n  {thread}: own Python time by area, share of the thread's profiled time")
        for area, seconds in sorted(by_area.items(), key=lambda kv: -kv[1])[:14]:
            print(f"    {area:<28}{seconds / total * 100:6.1f}%")
    for tid, tname in names.items():
        stats = yappi.get_func_stats(filter={"ctx_id": tid})
        rows = sorted(stats, key=lambda s: -s.tsub)
        total = sum(s.tsub for s in rows)
        if total / decisions * 1e6 < 5:
            continue
        print(f"\n  thread {tname}: {total / decisions * 1e6:.0f} µs of Python per decision")
        for s in rows[:top]:
            where = f"{Path(s.module).name}:{s.lineno} {s.name}"
            own, incl = s.tsub / decisions * 1e6, s.ttot / decisions * 1e6
            print(f"    {own:7.1f} own {incl:7.1f} incl  {s.ncall / decisions:6.2f}/dec  {where}")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="yappi, every thread")
    parser.add_argument("--profile-out", default=None, help="the trio thread's, pstat")
    parser.add_argument("--top", type=int, default=25, help="functions listed per thread")
    parser.add_argument("--count", action="store_true", help="trio passes, task steps")
    parser.add_argument("--calls", action="store_true", help="function calls (slow)")
    parser.add_argument("--parts", action="store_true", help="the core's share, timed in place")
    parser.add_argument("--syscalls", action="store_true", help="perf trace, per thread")
    parser.add_argument("--json-out", default=None)
    parser.add_argument("--only", choices=["arena", "raw"], default=None, help="one path")
    return parser.parse_args()


if __name__ == "__main__":
    configure_logging("error")
    die_with_parent()
    trio.run(main, parse())
