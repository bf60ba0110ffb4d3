"""``arena serve --workers 2`` against ``--workers 1``: decisions per second, side by side.

Each run starts a real ``arena serve --open --workers N`` on a free loopback port,
creates ``--matches`` matches over gRPC (``--deals`` deals each) and plays every seat
with a bot answering with the request's fallback, always two client processes (with two
workers, one per worker; with one, half the matches each):

- ``--bot python`` (default): ``bench/bots/fallback_bot.py``, grpc.aio, many seats on
  one asyncio loop;
- ``--bot cpp``: ``bench/bots/cpp/many`` (``make -C bench/bots/cpp``), C++ gRPC, a
  thread and a connection per seat.

The rate is answered requests over the wall time from the bots' start to the last
match's end. The bots share the cores with the servers, so their CPU is measured too
(each bot process's own rusage) and printed per decision beside the servers'. Runs
alternate (1, 2, 1, 2, ...) so both see the same machine load; the load average is
printed before and after. Issue #20's goal: >= 1.6x on a 2-core machine.

    .venv/bin/python bench/workers.py [--matches 64] [--deals 2] [--rounds 2] [--bot cpp]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

BENCH = Path(__file__).parent
ROOT = BENCH.parent
BOTS = {
    "python": [sys.executable, str(BENCH / "bots" / "fallback_bot.py"), "--tokens-file", "-"],
    "cpp": [str(BENCH / "bots" / "cpp" / "many")],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_of(pids: list[int]) -> float:
    """User + system CPU seconds of these processes so far (Linux /proc)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def one_run(workers: int, matches: int, deals: int, folder: Path, bot: str) -> dict[str, float]:
    """One server, ``matches`` matches of fallback bots; its figures."""
    port = free_port()
    log = folder / f"serve-{workers}-{port}.log"
    argv = [sys.executable, "-m", "arena.cli.main", "serve", "--listen", f"127.0.0.1:{port}",
            "--records", str(folder / f"records-{port}"), "--open", "--workers", str(workers),
            "--log-level", "warning", "--matches-total", str(matches + 8),
            "--matches-per-organiser", str(matches + 8), "--retention", "600"]  # fmt: skip
    with log.open("wb") as out:
        server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    bots: list[subprocess.Popen[str]] = []
    try:
        deadline = time.monotonic() + 120
        while "arena serving on" not in log.read_text():
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"arena serve did not start:\n{log.read_text()}")
            time.sleep(0.1)
        pids = [server.pid] + [int(p) for p in re.findall(r"\(pid (\d+)\)", log.read_text())]
        tc = pb.TimeControl(decision_ms=5000, bank_ms=30_000, grace_ms=10_000)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.MatchesStub(channel)
            created = [
                stub.Create(pb.CreateMatchRequest(seed=1000 + i, deals=deals, time_control=tc))
                for i in range(matches)
            ]
        groups: dict[str, list[str]] = {}
        for n, match in enumerate(created):
            key = match.seat_address if workers > 1 else str(n % 2)
            groups.setdefault(key, []).extend(match.seat_tokens)
        cpu_before = cpu_of(pids)
        started = time.monotonic()
        env = {**os.environ, "BENCH_PARENT_PID": str(os.getpid())}
        for key, tokens in groups.items():
            address = key if workers > 1 else f"127.0.0.1:{port}"
            client = subprocess.Popen(
                [*BOTS[bot], "--server", address],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT,
            )  # fmt: skip
            assert client.stdin is not None
            client.stdin.write("\n".join(tokens) + "\n")
            client.stdin.close()
            bots.append(client)
        tallies = [json.loads(c.stdout.read()) for c in bots if c.stdout is not None]
        wall = time.monotonic() - started
        cpu = cpu_of(pids) - cpu_before
        bot_cpu = 0.0
        for client in bots:  # the bot's own user + system CPU, from its exit rusage
            _, status, usage = os.wait4(client.pid, 0)
            client.returncode = os.waitstatus_to_exitcode(status)
            bot_cpu += usage.ru_utime + usage.ru_stime
    finally:
        for client in bots:
            if client.poll() is None:
                client.kill()
        server.terminate()
        server.wait(timeout=30)
    requests = sum(t["requests"] for t in tallies)
    errors = sum(t["error_count"] for t in tallies)
    ended = sum(t["ended"] for t in tallies)
    if errors or ended != 4 * matches:
        print(f"  note: {errors} stream errors, {ended}/{4 * matches} seats saw MatchEnd")
    return {"rate": requests / wall, "decisions": requests, "wall": wall, "cpu": cpu,
            "bot_cpu": bot_cpu}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=64, help="concurrent matches per run")
    parser.add_argument("--deals", type=int, default=2, help="deals per match")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each setting")
    parser.add_argument("--workers", type=int, default=2, help="the multi-worker setting")
    parser.add_argument(
        "--bot",
        choices=sorted(BOTS),
        default="python",
        help="the fallback bots' client (cpp: make -C bench/bots/cpp first)",
    )
    args = parser.parse_args()
    if args.bot == "cpp" and not Path(BOTS["cpp"][0]).exists():
        raise SystemExit("bench/workers.py: build the C++ client first: make -C bench/bots/cpp")
    print(f"cores {len(os.sched_getaffinity(0))}; bots: {args.bot}; load average before: {load()}")
    cpu: dict[int, list[tuple[float, float]]] = {1: [], args.workers: []}
    rates: dict[int, list[float]] = {1: [], args.workers: []}
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        for round_no in range(args.rounds):
            for workers in (1, args.workers):
                got = one_run(workers, args.matches, args.deals, Path(tmp), args.bot)
                rates[workers].append(got["rate"])
                per = max(got["decisions"], 1) / 1e6
                cpu[workers].append((got["cpu"] / per, got["bot_cpu"] / per))
                print(
                    f"round {round_no + 1} --workers {workers}: {got['decisions']:.0f} decisions "
                    f"in {got['wall']:.2f} s = {got['rate']:.0f}/s; server CPU {got['cpu']:.1f} s "
                    f"({got['cpu'] / per:.0f} µs/decision), bots {got['bot_cpu']:.1f} s "
                    f"({got['bot_cpu'] / per:.0f} µs/decision); load {load()}",
                    flush=True,
                )
    one, many = statistics.median(rates[1]), statistics.median(rates[args.workers])
    print(
        f"median decisions/s: --workers 1 {one:.0f}, --workers {args.workers} {many:.0f}: "
        f"ratio {many / one:.2f}x (goal >= 1.6x); load average after: {load()}"
    )
    for workers, pairs in cpu.items():
        server = statistics.median(p[0] for p in pairs)
        bots = statistics.median(p[1] for p in pairs)
        print(
            f"median CPU per decision, --workers {workers}: server {server:.0f} µs, bots "
            f"{bots:.0f} µs (bots/server {bots / server:.2f}); "
            f"2 cores bound the rate at {2e6 / (server + bots):.0f}/s"
        )


if __name__ == "__main__":
    main()
