"""Part C of bench/bots.py: one bot process alone against a replay server.

A bare grpc.aio server (no referee, no other bots) plays the requests one seat got in a
real match, over and over, to one ``bench/bots/timed_bot.py`` process, each the moment
the previous answer arrived — as the referee does, with a Verdict after each answer when
the bot's Hello asks for every Verdict, or with the acknowledgement riding on the next
request (``accepted_seq``) when it asks for faults only. With nothing else running, the
bot's CPU per round trip is its client's cost plus ``decide``'s, and the latency is the
bot's whole turnaround as the server sees it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

TIMED = Path(__file__).resolve().parent / "bots" / "timed_bot.py"


class Replay(pb_grpc.ArenaServicer):
    """Sends ``requests`` ``laps`` times to the one bot that connects; times each answer."""

    def __init__(self, requests: list[pb.Request], laps: int) -> None:
        self.requests = requests
        self.laps = laps
        self.latencies: list[float] = []
        self.faults_only = False

    async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
        await context.send_initial_metadata(())
        hello = (await context.read()).hello
        self.faults_only = hello.verdicts == pb.VERDICT_FAULTS_ONLY
        welcome = pb.Welcome(seat=0, match_id="replay", protocol=1, verdicts=hello.verdicts)
        await context.write(pb.RefereeMessage(welcome=welcome))
        seq = 0
        for _ in range(self.laps):
            for request in self.requests:
                seq += 1
                message = pb.RefereeMessage(request=request)
                message.request.seq = message.request.fallback.seq = seq
                if self.faults_only and seq > 1:
                    message.accepted_seq = seq - 1
                started = time.perf_counter()
                await context.write(message)
                action = await context.read()
                self.latencies.append(time.perf_counter() - started)
                if not self.faults_only:
                    played = action.action.cards
                    verdict = pb.Verdict(seq=seq, accepted=True, played=played)
                    await context.write(pb.RefereeMessage(verdict=verdict))
        end = pb.RefereeMessage(match_end=pb.MatchEnd())
        if self.faults_only:
            end.accepted_seq = seq
        await context.write(end)


async def replay_one(
    kit: Path, client: list[str], requests: list[pb.Request], laps: int
) -> tuple[dict[str, Any], list[float]]:
    """One timed bot on ``kit`` against the replay: its report and the latencies."""
    replay = Replay(requests, laps)
    server = grpc.aio.server()
    pb_grpc.add_ArenaServicer_to_server(replay, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        bot = await asyncio.create_subprocess_exec(
            sys.executable, str(TIMED), str(kit), "--server", f"127.0.0.1:{port}",
            "--token", "t", "--seed", "1", *client, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await bot.communicate()
    finally:
        await server.stop(None)
    report = json.loads(out.decode().strip().splitlines()[-1])
    return report, replay.latencies


def part_c(
    kits: dict[str, tuple[Path, list[str]]], requests: list[pb.Request], laps: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Each kit in turn, ``rounds`` times in rotating order; pooled figures per kit."""
    names = list(kits)
    reports: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
    latencies: dict[str, list[float]] = {k: [] for k in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            kit, client = kits[name]
            report, lat = asyncio.run(replay_one(kit, client, requests, laps))
            reports[name].append(report)
            latencies[name] += lat[len(requests) :]  # the first lap warms up
    out = {}
    for name in names:
        n = sum(g["decisions"] for g in reports[name]) - len(reports[name])
        ordered = sorted(latencies[name])
        out[name] = {
            "round_trips": float(len(ordered)),
            "cpu_us": 1e6 * sum(g["cpu_s"] for g in reports[name]) / n,
            "decide_us": 1e6 * sum(g["decide_s"] for g in reports[name]) / (n + len(reports[name])),
            "p50_us": 1e6 * ordered[len(ordered) // 2],
            "p99_us": 1e6 * ordered[int(len(ordered) * 0.99)],
        }
    return out
