"""The parts of ``bench/remote.py``: child processes, the raw replay server, a load level.

Kept apart so that ``remote.py`` reads as the experiment and its table.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

import trio

from arena.game import Action, Event, MatchEnded, Request
from arena.referee import Fault, SeatVerdict, TimeControl
from arena.rules import RuleSet
from arena.server import convert
from arena.server.app import open_arena_server
from arena.server.bridge import GrpcServerConfig, open_grpc_server
from arena.server.host import HostedMatch, MatchSpec, MatchState
from arena.server.limits import Limits
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

BENCH = Path(__file__).parent
BOT = BENCH / "bots" / "fallback_bot.py"
PY = sys.executable


# ------------------------------------------------------------------------ processes


def die_with_parent() -> None:
    """In a child started by :class:`Spawner`: end when the parent does (Linux), by a
    SIGTERM taken as Ctrl-C so that this child's own children are ended too."""
    parent = os.environ.get("BENCH_PARENT_PID")
    if parent and sys.platform == "linux":
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != int(parent):  # the parent was already gone
            os._exit(1)


class Spawner:
    """Child processes that end with this one: terminated (then killed) when the ``with``
    block is left however it is left (Ctrl-C included); children that honour
    ``BENCH_PARENT_PID`` also ask the kernel to end them if this process dies first."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def __enter__(self) -> Spawner:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        live = [p for p in self.procs if p.poll() is None]
        for p in live:
            p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 3
        for p in live:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def spawn(self, argv: Sequence[str], stdin: str | None = None) -> subprocess.Popen[str]:
        """Start ``argv`` (from the trio thread itself: PR_SET_PDEATHSIG follows the
        thread that forked), writing ``stdin`` to it if given."""
        env = {**os.environ, "BENCH_PARENT_PID": str(os.getpid())}
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.procs.append(proc)
        if stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            proc.stdin.close()
            proc.stdin = None  # so that communicate() leaves it alone
        return proc

    async def wait_all(
        self, procs: Sequence[subprocess.Popen[str]], timeout: float = 120
    ) -> list[str]:
        """Each process's last line of output, once all have exited.

        Raises ``RuntimeError`` if one printed nothing (its stderr attached), and
        ``trio.TooSlowError`` after ``timeout`` (the processes are then left to ``__exit__``).
        """
        lines = []
        with trio.fail_after(timeout):
            for p in procs:
                out, err = await trio.to_thread.run_sync(p.communicate, abandon_on_cancel=True)
                if not out.strip():
                    raise RuntimeError(f"{p.args!r} exited {p.returncode}:\n{err[-3000:]}")
                lines.append(out.strip().splitlines()[-1])
        return lines


# ------------------------------------------------------------------------ in-process seats


class LatencyRecorder:
    """A match recorder that keeps only the kind, request time and latency (seconds) of
    each accepted answer."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, float, float]] = []

    def answer(
        self, *, kind: str, requested_at_ms: float, latency_ms: float, fault: object, **_: Any
    ) -> None:
        if fault is None:
            self.answers.append((kind, requested_at_ms / 1000, latency_ms / 1000))

    def span(self) -> float:
        """Seconds from the first request to the last answer."""
        if not self.answers:
            return 0.0
        return max(t + x for _, t, x in self.answers) - min(t for _, t, _ in self.answers)

    def deck(self, *_: Any) -> None: ...
    def events(self, *_: Any) -> None: ...
    def penalty(self, *_: Any) -> None: ...
    def forfeit(self, *_: Any) -> None: ...
    def cancel(self, *_: Any) -> None: ...
    def close(self, *_: Any) -> None: ...


@dataclasses.dataclass
class Step:
    """One decision as the wire saw it: the seat asked, its request, the verdict after."""

    seat: int
    request: pb.RefereeMessage
    verdict: pb.RefereeMessage | None = None


class ScriptSeat:
    """An in-process seat that answers with the fallback, converting each request to its
    wire message exactly as ``RemoteSeat`` does, and keeping them as a replay script."""

    name = "script"
    version = "bench"

    def __init__(self, seat: int, script: list[Step]) -> None:
        self.seat = seat
        self.script = script
        self._open: dict[int, Step] = {}

    async def ask(self, seq: int, request: Request, deadline_ms: int, bank_ms: int) -> Action:
        step = Step(self.seat, convert.request_to_pb(seq, request, deadline_ms, bank_ms))
        self.script.append(step)
        self._open[seq] = step
        await trio.lowlevel.checkpoint()
        return request.fallback

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        self._open.pop(verdict.seq).verdict = convert.verdict_to_pb(verdict)

    def tell_events(self, events: Sequence[Event]) -> None:
        return None

    async def finish(self, result: MatchEnded, faults: Sequence[Fault], record: str) -> None:
        await trio.lowlevel.checkpoint()


# ------------------------------------------------------------------------ raw replay


class ReplayArena(pb_grpc.ArenaServicer):
    """A raw grpc.aio Arena: replays a script's requests to ``clients`` streams (seat mod
    clients) on the asyncio loop, timing each request written → answer read.

    Each answer's verdict is written before the next request; with ``overlap`` it is not
    awaited first, so that it travels alongside the next request, as the referee's does.
    """

    def __init__(
        self, script: list[Step], clients: int, overlap: bool = False, verdicts: bool = True
    ) -> None:
        self.script = script
        self.clients = clients
        self.overlap = overlap
        self.verdicts = verdicts  # False: request and answer only (VERDICT_FAULTS_ONLY's shape)
        self.streams: dict[int, Any] = {}
        self.latencies: list[float] = []
        self.wall = 0.0
        self.error = ""
        self._done: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        await context.send_initial_metadata(())
        hello = await context.read()
        seat = int(hello.hello.token)
        await context.write(pb.RefereeMessage(welcome=pb.Welcome(seat=seat)))
        if self._done is None:
            self._done = asyncio.Event()
        self.streams[seat] = context
        if len(self.streams) == self.clients:
            self._runner = asyncio.create_task(self._replay())
        await self._done.wait()

    async def _replay(self) -> None:
        assert self._done is not None
        writing: dict[int, asyncio.Task[None]] = {}  # one write at a time per stream
        try:
            started = time.perf_counter()
            for step in self.script:
                stream = self.streams[step.seat % self.clients]
                t = time.perf_counter()
                if step.seat % self.clients in writing:
                    await writing.pop(step.seat % self.clients)
                await stream.write(step.request)
                await stream.read()
                self.latencies.append(time.perf_counter() - t)
                if step.verdict is None or not self.verdicts:
                    continue
                if self.overlap:
                    writing[step.seat % self.clients] = asyncio.ensure_future(
                        stream.write(step.verdict)
                    )
                else:
                    await stream.write(step.verdict)
            self.wall = time.perf_counter() - started
            for task in writing.values():
                await task
            for stream in self.streams.values():
                await stream.write(pb.RefereeMessage(match_end=pb.MatchEnd()))
        except Exception as exc:  # a client went away: the caller finds it gone too
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._done.set()


async def replay_raw(
    script: list[Step], clients: int, spawner: Spawner, overlap: bool = False, verdicts: bool = True
) -> tuple[list[float], float, float]:
    """(latencies s, wall s, server CPU s) of one replay."""
    servicer = ReplayArena(script, clients, overlap, verdicts)
    registrations = [partial(pb_grpc.add_ArenaServicer_to_server, servicer)]
    config = GrpcServerConfig(service_names=("arena.v1.Arena",))
    async with open_grpc_server(registrations, config) as server:
        argv = [PY, str(BOT), "--server", server.target]
        cpu = time.process_time()
        await spawner.wait_all([spawner.spawn([*argv, f"--token={s}"]) for s in range(clients)])
        cpu = time.process_time() - cpu
    if servicer.error:
        raise RuntimeError(f"raw replay failed: {servicer.error}")
    return servicer.latencies, servicer.wall, cpu


async def bridge_pingpong(round_trips: int, spawner: Spawner) -> dict[str, float]:
    """``bench/bridge_pingpong.py``'s servers and client: median µs per structure."""
    sys.path.insert(0, str(BENCH))
    import bridge_pingpong as bp

    return await bp.measure_all(round_trips, spawner.spawn, spawner.wait_all)


# ------------------------------------------------------------------------ one load level


def memory_mib() -> tuple[float, float]:
    """This process's resident memory now and at its peak (VmRSS, VmHWM), in MiB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@dataclasses.dataclass
class Probe:
    """Samples the host every 50 ms: when every seat is connected, when play starts."""

    hosted: list[HostedMatch]
    connected_at: float | None = None
    first_running_at: float | None = None

    async def run(self) -> None:
        while True:
            now = trio.current_time()
            if self.first_running_at is None and any(h.referee for h in self.hosted):
                self.first_running_at = now
            seats = [r for h in self.hosted for s in range(4) if (r := h.remote(s))]
            if self.connected_at is None and all(r.ever_connected.is_set() for r in seats):
                self.connected_at = now
            await trio.sleep(0.05)


THINK_MS = 5.0  # the probe bots' think time (fair clocks)
PROBES = 8  # probe matches per level, played by thinking bots in a third client process


async def level_report(n: int, deals: int, cap: float, spawner: Spawner) -> dict[str, Any]:
    """Run ``n`` concurrent matches of fallback bots (2 client processes) on a fresh server,
    plus :data:`PROBES` matches whose bots think :data:`THINK_MS` (a third process): what
    they are charged, against their own measured think time, is the fair-clock figure."""
    rules = RuleSet.from_mapping({"deals": deals})
    tc = TimeControl(decision_ms=5000, bank_ms=30_000, grace_ms=10_000)
    notes: list[str] = []
    # one organiser (this process) creates every match: lift its bound on live matches
    limits = dataclasses.replace(Limits(), matches_per_organiser=n + PROBES)
    limits = dataclasses.replace(limits, matches_total=max(limits.matches_total, n + PROBES))
    async with open_arena_server(limits=limits) as server:
        rss_base, _ = memory_mib()
        cpu_base = cpu_seconds(resource.RUSAGE_SELF)
        hosted = [
            server.host.create(
                MatchSpec(rules=rules, seed=1000 + i, time_control=tc, connect_timeout=cap)
            )
            for i in range(n + PROBES)
        ]
        hosted, probes = hosted[:n], hosted[n:]
        probe = Probe(hosted)
        argv = [PY, str(BOT), "--server", server.target, "--tokens-file", "-"]
        shares = ["\n".join(t for h in hosted[k::2] for t in h.tokens if t) for k in range(2)]
        procs = [spawner.spawn(argv, stdin=share) for share in shares]
        thinkers = "\n".join(t for h in probes for t in h.tokens if t)
        procs.append(spawner.spawn([*argv, "--think-ms", str(THINK_MS)], stdin=thinkers))
        started = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(probe.run)
            with trio.move_on_after(cap) as capped:
                for h in hosted + probes:
                    await h.done.wait()
            nursery.cancel_scope.cancel()
        ended = trio.current_time()
        cpu_server = cpu_seconds(resource.RUSAGE_SELF) - cpu_base
        rss_after, _ = memory_mib()
        if capped.cancelled_caught:
            notes.append(f"capped at {cap:.0f} s: unfinished matches cancelled")
            for h in hosted + probes:
                server.host.cancel(h.id, "bench time cap")
            with trio.move_on_after(10):
                for h in hosted + probes:
                    await h.done.wait()
        outs = await spawner.wait_all(procs, timeout=30)
        _, rss_peak = memory_mib()
    tallies = [json.loads(out) for out in outs]
    for tally in tallies:
        if tally["error_count"]:
            notes.append(f"client stream errors {tally['error_count']}: {tally['errors'][:2]}")
    thinker = tallies[-1]
    charged = sorted(x for h in probes if h.referee for seat in h.referee.latencies for x in seat)
    referees = [h.referee for h in hosted if h.referee is not None]
    latencies = sorted(x for r in referees for seat in r.latencies for x in seat)
    failed = [h.error for h in hosted if h.state is MatchState.FAILED]
    if failed:
        notes.append(f"{len(failed)} failed: {failed[0]}")
    late = sum(r.late_answers for r in referees)
    if late:
        notes.append(f"{late} late answers")
    first = probe.first_running_at if probe.first_running_at is not None else started
    decisions = sum(r.decisions for r in referees)
    return {
        "matches": n,
        "finished": sum(h.state is MatchState.FINISHED for h in hosted),
        "decisions": decisions,
        "connect_s": (probe.connected_at or ended) - started,
        "play_s": ended - first,
        "rate": decisions / max(ended - first, 1e-9),
        "p50": latencies[len(latencies) // 2] if latencies else float("nan"),
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        if latencies
        else float("nan"),
        "faults": sum(len(r.faults) for r in referees),
        "verdicts": sum(t["verdicts"] for t in tallies[:2]),
        "acks": sum(t["acks"] for t in tallies[:2]),
        "charged_p50": charged[len(charged) // 2] if charged else float("nan"),
        "charged_p99": charged[min(len(charged) - 1, int(len(charged) * 0.99))]
        if charged
        else float("nan"),
        "charged_max": charged[-1] if charged else float("nan"),
        "think_p50": thinker.get("think_p50", float("nan")),
        "think_p99": thinker.get("think_p99", float("nan")),
        "think_max": thinker.get("think_max", float("nan")),
        "allowance": tc.allowance_ms / 1000,
        "cpu_server": cpu_server,
        "cpu_clients": cpu_seconds(resource.RUSAGE_CHILDREN),
        "rss_base": rss_base,
        "rss_peak": rss_peak,
        "rss_after": rss_after,
        "notes": notes,
    }
