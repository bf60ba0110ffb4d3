"""One load level of ``bench/remote.py``: N concurrent matches on a real ``arena serve``.

The server is a subprocess, as a competition runs it: ``arena serve --workers W`` (a
front and W worker processes) or, with ``workers=0``, one process (``--workers 1`` where
the arena has workers, no flag on a checkout that predates them, so the baseline's
code runs the very same level). The matches are created over gRPC at the front; the bulk
bots dial the ``seat_address`` returned with their tokens (``--dial seat``, the default:
with workers, each worker's seats straight to it) or the front (``--dial front``: with
workers every seat is redirected at Hello to the worker hosting its match, as a bot given
only the front's address is). The probe bots always dial the front.

Everything is read from outside the server, the same way for one process and for many:
resident memory and CPU from ``/proc`` for the front and all its descendants (summed),
the referee's per-decision latencies (the time it charged: ``latency_ms``) and faults
from the records the server wrote, the bots' CPU from their exit rusage.

Kept apart so that ``remote.py`` reads as the experiment and its table.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import importlib.util
import json
import os
import resource
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import grpc
import trio
from own_clock import receive_clock  # bench/own_clock.py: this checkout's, by path
from remote_kit import BENCH, BOT, PY, Spawner  # bench/remote_kit.py
from workers import cpu_of  # bench/workers.py: CPU seconds of processes, from /proc

from arena.referee import TimeControl
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

THINK_MS = 5.0  # the probe bots' think time (fair clocks)
PROBES = 8  # probe matches per level, played by thinking bots in a third client process
CPP_BOT = BENCH / "bots" / "cpp" / "many"  # make -C bench/bots/cpp
BOTS = ("python", "cpp")


def has_workers() -> bool:
    """Whether the arena on ``sys.path`` has ``arena serve --workers`` (2e73e7c has not)."""
    return importlib.util.find_spec("arena.cli.serve_workers") is not None


def served_by(workers: int) -> str:
    """What serves the level, for its table's title."""
    if workers:
        return f"arena serve --workers {workers} (a front, {workers} worker processes)"
    return "one process: arena serve " + ("--workers 1" if has_workers() else "(no workers)")


def serve_argv(
    workers: int, port: int, records: Path, matches: int, cap: float, cpu_pinning: str = ""
) -> list[str]:
    argv = [PY, "-m", "arena.cli.main", "serve", "--listen", f"127.0.0.1:{port}",
            "--records", str(records), "--open", "--log-level", "warning",
            "--matches-total", str(matches), "--matches-per-organiser", str(matches),
            "--join-timeout", str(cap), "--retention", "600"]  # fmt: skip
    if has_workers():
        argv += ["--workers", str(max(workers, 1))]
    elif workers > 1:
        raise SystemExit("bench/remote.py: this arena has no `arena serve --workers`")
    if cpu_pinning and has_pinning():
        argv += ["--cpu-pinning", cpu_pinning]
    return argv


def thread_cpus(pid: int) -> set[int]:
    """The CPUs any thread of ``pid`` may run on (a serving process keeps its two Python
    threads on one CPU, ``--cpu-pinning``: its main thread alone tells only that one)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found |= os.sched_getaffinity(int(task.name))
    return found or os.sched_getaffinity(pid)


def has_pinning() -> bool:
    """Whether the arena on ``sys.path`` has ``arena serve --cpu-pinning``."""
    return importlib.util.find_spec("arena.server.placement") is not None


def bot_argv(bot: str, target: str) -> list[str]:
    if bot == "cpp":
        if not CPP_BOT.exists():
            raise SystemExit("bench/remote.py --bot cpp: build it first: make -C bench/bots/cpp")
        return [str(CPP_BOT), "--server", target]
    return [PY, str(BOT), "--server", target, "--tokens-file", "-"]


# ------------------------------------------------------------------------ /proc


def family(pid: int) -> list[int]:
    """``pid`` and all its descendants now (Linux ``/proc/*/task/*/children``)."""
    out, i = [pid], 0
    while i < len(out):
        try:
            tasks = os.listdir(f"/proc/{out[i]}/task")
        except OSError:
            tasks = []
        for task in tasks:
            try:
                text = Path(f"/proc/{out[i]}/task/{task}/children").read_text()
            except OSError:
                continue
            out += [int(child) for child in text.split()]
        i += 1
    return out


def memory_of(pid: int) -> tuple[float, float]:
    """A process's resident memory now and at its peak (VmRSS, VmHWM), in MiB."""
    rss = hwm = 0.0
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return rss, hwm
    for line in lines:
        key, _, value = line.partition(":")
        if key == "VmRSS":
            rss = int(value.split()[0]) / 1024
        elif key == "VmHWM":
            hwm = int(value.split()[0]) / 1024
    return rss, hwm


def memory_mib(pids: list[int]) -> tuple[float, float]:
    """Summed resident memory now and summed peaks (VmRSS, VmHWM) of ``pids``, in MiB."""
    each = [memory_of(pid) for pid in pids]
    return sum(m[0] for m in each), sum(m[1] for m in each)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ------------------------------------------------------------------------ records


@dataclasses.dataclass
class Played:
    """One match's record, as far as the level needs it."""

    decisions: int = 0
    faults: int = 0
    finished: bool = False
    latencies: list[float] = dataclasses.field(default_factory=list)  # s, accepted answers
    cycles: list[float] = dataclasses.field(default_factory=list)  # s, request → next request
    charged: dict[int, float] = dataclasses.field(default_factory=dict)  # seq → s, accepted


def read_record(path: Path) -> tuple[str, Played]:
    """(match id, what was played) from a ``<id>.jsonl`` record.

    A decision's cycle is from its request to the first request the referee sent after
    its answer arrived (in the match's clock): the charged time plus the server's own
    turnaround, which fair clocks leave out of the charged time."""
    played, requests, answered = Played(), [], []
    match_id, cancelled, footer = path.stem, False, False
    for line in path.read_text().splitlines():
        item = json.loads(line)
        kind = item.get("type")
        if kind == "answer":
            played.decisions += 1
            requests.append(item["requested_at_ms"] / 1000)
            if item.get("verdict") == "fault":
                played.faults += 1
            elif item.get("verdict") == "accepted":
                played.latencies.append(item["latency_ms"] / 1000)
                played.charged[item["seq"]] = item["latency_ms"] / 1000
                answered.append((item["requested_at_ms"] / 1000, item["latency_ms"] / 1000))
        elif kind == "header":
            match_id = item.get("match_id", match_id)
        elif kind == "cancel":
            cancelled = True
        elif kind == "footer":
            footer = True
    played.finished = footer and not cancelled
    requests.sort()
    for at, latency in answered:
        j = bisect.bisect_left(requests, at + latency)
        if j < len(requests):
            played.cycles.append(requests[j] - at)
    return match_id, played


def beyond_own(trace: Path, played_by: dict[str, Played]) -> list[float]:
    """Sorted, per decision of a bot run with ``--trace`` (``fallback_bot.py``, the C++
    ``many``): what it was charged (its record) minus its time on the bot's machine,
    from its request's arrival to its answer's departure by that machine's kernel: the
    referee's share of the charge.
    Both kernel times are read to the tick (±1 each), so two ticks are added against the
    referee: what is left is never too small, and up to four ticks too large."""
    try:
        rows = json.loads(trace.read_text())
    except (OSError, ValueError):
        return []
    tick = receive_clock().measure_jiffy() or 0.0  # the kernel's tick, TCP_INFO's unit
    out = []
    for token, seq, *_, arrived, departed in rows:
        charged = played_by[token].charged.get(seq) if token in played_by else None
        if charged is None or arrived is None or departed is None:
            continue
        out.append(charged - (departed - arrived) + 2 * tick)
    return sorted(out)


def pct(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


# ------------------------------------------------------------------------ the level


@dataclasses.dataclass
class Sampler:
    """Every 100 ms: the server family's summed RSS (its peak), and the records folder:
    when the first match started (its record appears) and when all had."""

    pid: int
    records: Path
    expected: int
    rss_peak: float = 0.0
    first_running_at: float | None = None
    all_running_at: float | None = None

    async def run(self) -> None:
        while True:
            rss, _ = memory_mib(family(self.pid))
            self.rss_peak = max(self.rss_peak, rss)
            started = sum(1 for _ in self.records.glob("*.jsonl"))
            now = trio.current_time()
            if started and self.first_running_at is None:
                self.first_running_at = now
            if started >= self.expected and self.all_running_at is None:
                self.all_running_at = now
            await trio.sleep(0.1)


def bulk_shares(
    hosted: list[pb.CreateMatchResponse], front: str, dial: str
) -> list[tuple[str, str]]:
    """The two bulk bot processes' (address, tokens): ``dial="front"`` has both dial the
    front with alternate matches, so with workers every seat is redirected at Hello;
    ``dial="seat"`` has each dial the ``seat_address`` that ``Create`` returned with its
    tokens, as an organiser hands each bot its address (docs/workers.md): with two
    workers, one process per worker and no connection at the front (one process: the
    same as ``front``). With more addresses than processes, the rest stay on the front."""

    def tokens(matches: list[pb.CreateMatchResponse]) -> str:
        return "\n".join(t for h in matches for t in h.seat_tokens)

    def address(h: pb.CreateMatchResponse) -> str:  # a checkout before workers has none
        return getattr(h, "seat_address", "") or front

    addresses = sorted({address(h) for h in hosted})
    if dial == "front" or len(addresses) != 2:
        return [(front, tokens(hosted[k::2])) for k in range(2)]
    by_address = {at: [h for h in hosted if address(h) == at] for at in addresses}
    return [(at, tokens(matches)) for at, matches in by_address.items()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def create(target: str, count: int, deals: int) -> list[pb.CreateMatchResponse]:
    """``count`` matches created over gRPC (seeds 1000, 1001, ...; 5 s per decision)."""
    tc = pb.TimeControl(decision_ms=5000, bank_ms=30_000, grace_ms=10_000)
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.MatchesStub(channel)
        return [
            stub.Create(pb.CreateMatchRequest(seed=1000 + i, deals=deals, time_control=tc))
            for i in range(count)
        ]


async def start_server(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        # not from the worktree: ``python -m`` puts the working directory first on sys.path,
        # ahead of PYTHONPATH's older checkout
        cwd = log.parent
        server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
    with trio.move_on_after(120):
        while "arena serving on" not in log.read_text():
            if server.poll() is not None:
                break
            await trio.sleep(0.1)
        else:
            return server
    server.kill()
    raise SystemExit(f"arena serve did not start:\n{log.read_text()[-3000:]}")


def pinned(argv: list[str], cpus: str) -> list[str]:
    """``argv`` run by ``taskset -c cpus`` (its children inherit the affinity)."""
    if cpus and shutil.which("taskset") is None:
        raise SystemExit("bench/remote.py --pin needs taskset (util-linux)")
    return ["taskset", "-c", cpus, *argv] if cpus else argv


async def level_report(
    n: int,
    deals: int,
    cap: float,
    spawner: Spawner,
    workers: int,
    bot: str,
    pin: str = "",
    think_ms: int = 0,
    dial: str = "seat",
    cpu_pinning: str = "",
) -> dict[str, Any]:
    """Run ``n`` concurrent matches of fallback bots (``bot``: 2 client processes) on a
    fresh ``arena serve``, plus :data:`PROBES` matches whose Python bots think
    :data:`THINK_MS` (a third process): what they are charged, against their own measured
    think time, is the fair-clock figure. ``pin`` (``SERVER:BOTS``, CPU lists), for
    reading only: the server and the bots each on their own CPUs, so that the share of
    the charged time that is the bots waiting for a CPU held by the server (or the
    reverse) can be told from the server's own delay. ``think_ms``: the bulk bots wait
    that long before each answer (no CPU), to run the level below saturation."""
    server_cpus, _, bot_cpus = pin.partition(":")
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
        records = Path(tmp) / "records"
        records.mkdir()
        target = f"127.0.0.1:{free_port()}"
        port = int(target.rsplit(":", 1)[1])
        argv = serve_argv(workers, port, records, n + PROBES, cap, cpu_pinning)
        argv = pinned(argv, server_cpus)
        server = await start_server(argv, Path(tmp) / "serve.log")
        try:
            return await _play_level(
                n, deals, cap, spawner, bot, server, target, records, bot_cpus, think_ms, dial
            )
        finally:
            server.terminate()
            try:
                await trio.to_thread.run_sync(server.wait, 30)
            except subprocess.TimeoutExpired:
                server.kill()


async def _play_level(
    n: int,
    deals: int,
    cap: float,
    spawner: Spawner,
    bot: str,
    server: subprocess.Popen[bytes],
    target: str,
    records: Path,
    bot_cpus: str = "",
    think_ms: int = 0,
    dial: str = "seat",
) -> dict[str, Any]:
    notes: list[str] = []
    pids = family(server.pid)
    cpus = sorted(set().union(*(thread_cpus(pid) for pid in pids)))
    rss_base, _ = memory_mib(pids)
    base_of = {pid: memory_of(pid)[0] for pid in pids}
    created = await trio.to_thread.run_sync(create, target, n + PROBES, deals)
    hosted, probes = created[:n], created[n:]
    cpu_base, bots_base = cpu_of(pids), children_cpu()
    thinking = ["--think-ms", str(think_ms)] if think_ms else []
    traces = [records.parent / f"bulk{k}.json" for k in range(2)]  # their kernel's times
    procs = [
        spawner.spawn(
            pinned([*bot_argv(bot, at), *thinking, "--trace", str(path)], bot_cpus),
            stdin=share + "\n",
        )
        for (at, share), path in zip(bulk_shares(hosted, target, dial), traces, strict=True)
    ]
    thinkers = "\n".join(t for h in probes for t in h.seat_tokens)
    trace = records.parent / "probes.json"  # the thinkers' own timestamps, kernel's included
    thinking_ = ["--think-ms", str(THINK_MS), "--trace", str(trace)]
    thinker_argv = pinned([*bot_argv("python", target), *thinking_], bot_cpus)
    procs.append(spawner.spawn(thinker_argv, stdin=thinkers))
    sampler = Sampler(server.pid, records, n + PROBES)
    started = trio.current_time()
    outs: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sampler.run)
        try:
            outs = await spawner.wait_all(procs[:2], timeout=cap)
        except (RuntimeError, trio.TooSlowError) as exc:
            notes.append(f"bots: {type(exc).__name__}: {exc}"[:300])
            for proc in procs[:2]:
                proc.kill()
        ended = trio.current_time()
        pids = family(server.pid)
        cpu_server = cpu_of(pids) - cpu_base
        _, rss_peak = memory_mib(pids)
        rss_after, _ = memory_mib(pids)
        cpu_bots = children_cpu() - bots_base
        grown = [f"{base_of.get(pid, 0):.0f}→{memory_of(pid)[1]:.0f}" for pid in pids]
        notes.append(
            f"RSS MiB by process (front first), start → peak: {', '.join(grown)}; the sum "
            f"sampled every 100 ms peaked at {sampler.rss_peak:.0f}"
        )
        try:
            outs += await spawner.wait_all(procs[2:], timeout=30)
        except (RuntimeError, trio.TooSlowError) as exc:
            notes.append(f"probe bots: {type(exc).__name__}: {exc}"[:300])
        nursery.cancel_scope.cancel()
    tallies = [json.loads(out) for out in outs]
    retried = sum(t.get("retries", 0) for t in tallies[:2])
    if retried:
        notes.append(f"openings the server refused (UNAVAILABLE) and the bots retried: {retried}")
    for tally in tallies:
        if tally.get("error_count"):
            notes.append(f"client stream errors {tally['error_count']}: {tally.get('errors')}")
    played = dict(read_record(path) for path in records.glob("*.jsonl"))
    bulk = [played[h.match_id] for h in hosted if h.match_id in played]
    latencies = sorted(x for p in bulk for x in p.latencies)
    cycles = sorted(x for p in bulk for x in p.cycles)
    thought = [played[h.match_id] for h in probes if h.match_id in played]
    charged = sorted(x for p in thought for x in p.latencies)
    finished = sum(p.finished for p in bulk)
    if finished < n:
        notes.append(f"{n - finished} of {n} matches did not finish")
    thinker = tallies[-1] if len(tallies) == 3 else {}
    by_token = {
        t: played[h.match_id] for h in probes if h.match_id in played for t in h.seat_tokens
    }
    beyond = beyond_own(trace, by_token)
    by_token = {
        t: played[h.match_id] for h in hosted if h.match_id in played for t in h.seat_tokens
    }
    bulk_beyond = sorted(x for path in traces for x in beyond_own(path, by_token))
    decisions = sum(p.decisions for p in bulk)
    first = sampler.first_running_at if sampler.first_running_at is not None else started
    return {
        "matches": n,
        "finished": finished,
        "decisions": decisions,
        "connect_s": (sampler.all_running_at or ended) - started,
        "play_s": ended - first,
        "rate": decisions / max(ended - first, 1e-9),
        "p50": pct(latencies, 0.5),
        "p99": pct(latencies, 0.99),
        "cycle_p50": pct(cycles, 0.5),
        "cycle_p99": pct(cycles, 0.99),
        "faults": sum(p.faults for p in bulk),
        "verdicts": sum(t.get("verdicts", 0) for t in tallies[:2]),
        "redirects": sum(t.get("redirects", 0) for t in tallies[:2]),
        "charged_p50": pct(charged, 0.5),
        "charged_p99": pct(charged, 0.99),
        "charged_max": charged[-1] if charged else float("nan"),
        "think_p50": thinker.get("think_p50", float("nan")),
        "think_p99": thinker.get("think_p99", float("nan")),
        "think_max": thinker.get("think_max", float("nan")),
        "allowance": getattr(TimeControl(), "allowance_ms", 50) / 1000,  # server default
        "beyond_p50": pct(beyond, 0.5),
        "beyond_p99": pct(beyond, 0.99),
        "beyond_max": beyond[-1] if beyond else float("nan"),
        "beyond_n": len(beyond),
        "bulk_beyond_p50": pct(bulk_beyond, 0.5),
        "bulk_beyond_p99": pct(bulk_beyond, 0.99),
        "bulk_beyond_max": bulk_beyond[-1] if bulk_beyond else float("nan"),
        "bulk_beyond_n": len(bulk_beyond),
        "cpu_server": cpu_server,
        "cpu_clients": cpu_bots,
        "processes": len(pids),
        "server_cpus": cpus,
        "bulk_think_ms": think_ms,
        "rss_base": rss_base,
        "rss_peak": rss_peak,
        "rss_sampled_peak": sampler.rss_peak,
        "rss_after": rss_after,
        "notes": notes,
    }
