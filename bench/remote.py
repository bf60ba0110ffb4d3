"""Time per referee decision over gRPC, beside a raw grpc.aio ping-pong; then load.

Part A, one match: the arena server runs in this process (trio referee + grpc.aio thread,
as ``arena serve``); four ``bench/bots/fallback_bot.py`` processes answer every request
at once with its fallback, so what the referee measures per decision (request sent →
answer received, ``Referee.latencies``) is the server's overhead plus the network. Beside
it, in the same run, a raw grpc.aio server (the same embedded ``GrpcThread``, no trio,
no referee) replays the very same wire messages — each request of that match, then its
verdict — to the same bot program, timing request written → answer read on its asyncio
loop: to one client (``raw1``, the ping-pong of the issue's goal, arena p50 ≤ 1.5×), to
four (``raw4``, the arena's topology), and to four with each verdict sent alongside the
next request instead of before it (``raw4v``, the arena's traffic). The paths run in
rounds, in rotating order, and their samples are pooled: load from elsewhere on the
machine then falls on all of them alike.

Part B, load: 50, 100 and 250 concurrent matches of one deal on one server (a fresh
server process per level, so its memory and CPU time are its own), the 4×N seats played
by two client processes with one grpc.aio stream and TCP connection per seat, at a 5 s
decision limit. Reports decisions/s, the referee's p50/p99 per decision, faults, the
server's and clients' CPU seconds and the server's resident memory (VmRSS before the
matches, VmHWM peak, VmRSS once they are over).

    .venv/bin/python bench/remote.py            # ~3 minutes
    .venv/bin/python bench/remote.py --quick    # ~30 s smoke run

Numbers are noisy on a 2-core machine shared with other work: read the ratios within
one run, and the load averages printed around it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import trio
from remote_kit import (  # bench/remote_kit.py: the script's directory is on sys.path
    BOT,
    LatencyRecorder,
    ScriptSeat,
    Spawner,
    Step,
    bridge_pingpong,
    die_with_parent,
    level_report,
    replay_raw,
)

from arena.cli.logs import configure_logging
from arena.game import MatchSetup
from arena.referee import Referee, TimeControl
from arena.rules import RuleSet
from arena.server.app import open_arena_server
from arena.server.host import MatchSpec

SEED = 7


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def flat(per_seat: Any) -> list[float]:
    return [x for seat in per_seat for x in seat]


# ------------------------------------------------------------------------ part A

PATHS = {
    "floor": "in-process seats (referee + convert, no network)",
    "raw1": "raw grpc.aio replay, 1 client process",
    "raw4": "raw grpc.aio replay, 4 client processes",
    "raw4v": "  the same, verdict overlapping the next request",
    "arena": "arena: trio referee + bridge + grpc.aio, 4 bots",
    "arena_play": "  arena, PLAY decisions only",
    "arena_bid": "  arena, BID decisions (concurrent windows)",
}


@dataclasses.dataclass
class PartA:
    deals: int
    rounds: int
    latencies: dict[str, list[float]] = dataclasses.field(
        default_factory=lambda: {key: [] for key in PATHS}
    )
    busy: dict[str, float] = dataclasses.field(default_factory=dict)  # s from first ask to last
    decisions: int = 0
    faults: int = 0
    states: set[str] = dataclasses.field(default_factory=set)
    bots: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    script_bytes: float = 0.0
    bridge: tuple[float, float] = (0.0, 0.0)
    bridge_trips: int = 0


async def capture(rules: RuleSet, tc: TimeControl, a: PartA) -> list[Step]:
    """The match with in-process seats: its wire messages and the floor latencies."""
    script: list[Step] = []
    floor = Referee("floor", MatchSetup(rules, SEED), [ScriptSeat(s, script) for s in range(4)], tc)
    started = time.perf_counter()
    await floor.run()
    a.busy["floor"] = time.perf_counter() - started
    a.latencies["floor"] = flat(floor.latencies)
    a.script_bytes = statistics.mean(step.request.ByteSize() for step in script)
    return script


async def play_arena(rules: RuleSet, tc: TimeControl, spawner: Spawner, a: PartA) -> None:
    """The real server and four bot processes: the referee's latencies per decision."""
    recorder = LatencyRecorder()
    async with open_arena_server(recorder_factory=lambda _h: (recorder, "")) as server:
        hosted = server.host.create(MatchSpec(rules=rules, seed=SEED, time_control=tc))
        argv = [sys.executable, str(BOT), "--server", server.target]
        procs = [spawner.spawn([*argv, f"--token={t}"]) for t in hosted.tokens if t is not None]
        await hosted.done.wait()
        a.bots += [json.loads(out) for out in await spawner.wait_all(procs)]
    referee = hosted.referee
    assert referee is not None, hosted.error
    a.latencies["arena"] += flat(referee.latencies)
    a.latencies["arena_play"] += [x for k, _, x in recorder.answers if k == "play"]
    a.latencies["arena_bid"] += [x for k, _, x in recorder.answers if k == "bid"]
    a.busy["arena"] = a.busy.get("arena", 0.0) + recorder.span()
    a.decisions += referee.decisions
    a.faults += len(referee.faults) + referee.late_answers
    a.states.add(hosted.state.value)


async def part_a(deals: int, rounds: int, spawner: Spawner) -> PartA:
    """Rounds of the arena and the raw replays in rotating order, pooled, so that load
    from elsewhere on the machine falls on all of them alike."""
    rules = RuleSet.from_mapping({"deals": deals})
    tc = TimeControl()
    a = PartA(deals, rounds)
    script = await capture(rules, tc, a)
    order = ("arena", "raw1", "raw4", "raw4v")
    for r in range(rounds):
        for path in order[r % 4 :] + order[: r % 4]:
            if path == "arena":
                await play_arena(rules, tc, spawner, a)
            else:
                clients, overlap = int(path[3]), path.endswith("v")
                latencies, busy = await replay_raw(script, clients, spawner, overlap)
                a.latencies[path] += latencies
                a.busy[path] = a.busy.get(path, 0.0) + busy
    a.bridge_trips = 500 * (1 + rounds)
    a.bridge = await bridge_pingpong(a.bridge_trips, spawner)
    return a


def print_a(a: PartA) -> None:
    requests = sum(b["requests"] for b in a.bots)
    request_b = sum(b["request_bytes"] for b in a.bots) / requests
    action_b = sum(b["action_bytes"] for b in a.bots) / requests
    print(
        f"\nPart A — one match over gRPC, seed {SEED}, {a.deals} deals, played {a.rounds}× "
        f"interleaved with the raw replays: {a.decisions} arena decisions "
        f"({'/'.join(sorted(a.states))}), faults + late answers: {a.faults}"
    )
    print(
        f"  messages: request {request_b:.0f} B on average (script {a.script_bytes:.0f} B), "
        f"action {action_b:.0f} B, plus a verdict after each answer; bot think time ≈ 0"
    )
    raw = a.latencies["raw1"]
    raw50, raw99 = statistics.median(raw), pct(raw, 0.99)
    print(f"  {'path':<50}{'n':>6}{'p50 µs':>9}{'p99 µs':>9}{'p50 ×raw1':>11}{'p99 ×raw1':>11}")
    for key, label in PATHS.items():
        lat = a.latencies[key]
        p50, p99 = statistics.median(lat), pct(lat, 0.99)
        print(
            f"  {label:<50}{len(lat):>6}{p50 * 1e6:>9.0f}{p99 * 1e6:>9.0f}"
            f"{p50 / raw50:>10.2f}×{p99 / raw99:>10.2f}×"
        )
    floor_rate = len(a.latencies["floor"]) / a.busy["floor"]
    print(
        f"  one match end to end: arena {a.decisions / a.busy['arena']:.0f} decisions/s, "
        f"in-process seats {floor_rate:.0f}/s"
    )
    raw_us, bridge_us = a.bridge
    print(
        f"  bench/bridge_pingpong (one ~20 B message each way, {a.bridge_trips} round trips): raw "
        f"{raw_us:.0f} µs, bridge {bridge_us:.0f} µs, {bridge_us / raw_us:.2f}×"
    )
    arena50 = statistics.median(a.latencies["arena"])
    verdict = "met" if arena50 <= 1.5 * raw50 else "NOT met"
    same = ", ".join(
        f"{arena50 / statistics.median(a.latencies[k]):.2f}× {k}" for k in ("raw4", "raw4v")
    )
    print(f"  goal arena p50 ≤ 1.5 × raw1 p50: {arena50 / raw50:.2f}× — {verdict} ({same})")


# ------------------------------------------------------------------------ part B


async def part_b(levels: list[int], deals: int, cap: float, spawner: Spawner) -> list[Any]:
    reports = []
    for n in levels:
        argv = [sys.executable, __file__, "--level", str(n), "--deals", str(deals)]
        proc = spawner.spawn([*argv, "--cap", str(cap)])
        try:
            (out,) = await spawner.wait_all([proc], timeout=cap + 90)
        except (RuntimeError, trio.TooSlowError) as exc:
            reports.append({"matches": n, "failed": f"{type(exc).__name__}: {exc}"[-600:]})
            proc.kill()
        else:
            reports.append(json.loads(out))
    return reports


def print_b(reports: list[dict[str, Any]], deals: int, cap: float) -> None:
    print(
        f"\nPart B — concurrent matches on one server ({deals} deal(s) each, fallback bots in "
        f"2 client processes, decision limit 5 s, cap {cap:.0f} s per level)"
    )
    head = (
        f"  {'matches':>7}{'done':>6}{'decisions':>10}{'conn s':>8}{'play s':>8}{'dec/s':>8}"
        f"{'p50 ms':>8}{'p99 ms':>8}{'faults':>7}"
        f"{'CPU s srv/cli':>14}{'RSS MiB base/peak/after':>25}"
    )
    print(head)
    for r in reports:
        if "failed" in r:
            print(f"  {r['matches']:>7}  level failed: {r['failed']}")
            continue
        mem = f"{r['rss_base']:.0f} / {r['rss_peak']:.0f} / {r['rss_after']:.0f}"
        cpu = f"{r['cpu_server']:.1f} / {r['cpu_clients']:.1f}"
        print(
            f"  {r['matches']:>7}{r['finished']:>6}{r['decisions']:>10}{r['connect_s']:>8.1f}"
            f"{r['play_s']:>8.1f}{r['rate']:>8.0f}{r['p50'] * 1e3:>8.2f}{r['p99'] * 1e3:>8.2f}"
            f"{r['faults']:>7}{cpu:>14}{mem:>25}"
        )
        if r["notes"]:
            print(f"          {'; '.join(r['notes'])}")


# ------------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    with Spawner() as spawner:
        if args.level:
            report = await level_report(args.level, args.deals, args.cap, spawner)
            print(json.dumps(report), flush=True)
            return
        began = time.perf_counter()
        print(f"load average before: {load()}  (2-core machine: other work skews the numbers)")
        if args.only in (None, "a"):
            print_a(await part_a(args.deals_a, args.rounds, spawner))
        if args.only in (None, "b"):
            print_b(await part_b(args.levels, args.deals, args.cap, spawner), args.deals, args.cap)
        print(f"\nload average after: {load()}; total {time.perf_counter() - began:.0f} s")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a ~30 s smoke run")
    parser.add_argument("--deals-a", type=int, default=None, help="deals in part A (6)")
    parser.add_argument("--rounds", type=int, default=None, help="part A rounds (3)")
    parser.add_argument("--levels", type=int, nargs="*", default=None, help="50 100 250")
    parser.add_argument("--deals", type=int, default=1, help="deals per match in part B")
    parser.add_argument("--cap", type=float, default=None, help="seconds per level (60)")
    parser.add_argument("--only", choices=["a", "b"], default=None, help="run one part")
    parser.add_argument("--level", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    quick = args.quick
    args.deals_a = args.deals_a or (2 if quick else 6)
    args.rounds = args.rounds or (1 if quick else 3)
    args.levels = args.levels or ([10, 25] if quick else [50, 100, 250])
    args.cap = args.cap or (10.0 if quick else 60.0)
    return args


if __name__ == "__main__":
    configure_logging("error")
    die_with_parent()
    try:
        trio.run(main, parse())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
