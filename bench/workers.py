"""``arena serve --workers 2`` against ``--workers 1``: decisions per second, side by side.

Each run starts a real ``arena serve --open --workers N`` on a free loopback port,
creates ``--matches`` matches over gRPC (``--deals`` deals each) and plays every seat
with ``bench/bots/fallback_bot.py`` (answers with the request's fallback: a cheap bot),
always two client processes (with two workers, one per worker; with one, half the
matches each). The rate is answered requests over the wall time from the bots' start to
the last match's end. Runs alternate (1, 2, 1, 2, ...) so both see the same machine
load; the load average is printed before and after. Issue #20's goal: >= 1.6x on a
2-core machine.

    .venv/bin/python bench/workers.py [--matches 64] [--deals 2] [--rounds 2]
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
BOT = BENCH / "bots" / "fallback_bot.py"


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


def one_run(workers: int, matches: int, deals: int, folder: Path) -> dict[str, float]:
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
            bot = subprocess.Popen(
                [sys.executable, str(BOT), "--server", address, "--tokens-file", "-"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT,
            )  # fmt: skip
            assert bot.stdin is not None
            bot.stdin.write("\n".join(tokens) + "\n")
            bot.stdin.close()
            bots.append(bot)
        tallies = [json.loads(bot.stdout.read()) for bot in bots if bot.stdout is not None]
        for bot in bots:
            bot.wait(timeout=60)
        wall = time.monotonic() - started
        cpu = cpu_of(pids) - cpu_before
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        server.terminate()
        server.wait(timeout=30)
    requests = sum(t["requests"] for t in tallies)
    errors = sum(t["error_count"] for t in tallies)
    ended = sum(t["ended"] for t in tallies)
    if errors or ended != 4 * matches:
        print(f"  note: {errors} stream errors, {ended}/{4 * matches} seats saw MatchEnd")
    return {"rate": requests / wall, "decisions": requests, "wall": wall, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=64, help="concurrent matches per run")
    parser.add_argument("--deals", type=int, default=2, help="deals per match")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each setting")
    parser.add_argument("--workers", type=int, default=2, help="the multi-worker setting")
    args = parser.parse_args()
    print(f"cores {len(os.sched_getaffinity(0))}; load average before: {load()}")
    rates: dict[int, list[float]] = {1: [], args.workers: []}
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        for round_no in range(args.rounds):
            for workers in (1, args.workers):
                got = one_run(workers, args.matches, args.deals, Path(tmp))
                rates[workers].append(got["rate"])
                print(
                    f"round {round_no + 1} --workers {workers}: {got['decisions']:.0f} decisions "
                    f"in {got['wall']:.2f} s = {got['rate']:.0f}/s; server CPU {got['cpu']:.1f} s "
                    f"({1e6 * got['cpu'] / max(got['decisions'], 1):.0f} µs/decision); "
                    f"load {load()}",
                    flush=True,
                )
    one, many = statistics.median(rates[1]), statistics.median(rates[args.workers])
    print(
        f"median decisions/s: --workers 1 {one:.0f}, --workers {args.workers} {many:.0f}: "
        f"ratio {many / one:.2f}x (goal >= 1.6x); load average after: {load()}"
    )


if __name__ == "__main__":
    main()
