"""Time and CPU per referee decision over gRPC, beside raw grpc.aio replays; then load.

Part A, one match: the arena server runs in this process (trio referee + grpc.aio thread,
as ``arena serve``); four ``bench/bots/fallback_bot.py`` processes answer every request
at once with its fallback (asking for ``VERDICT_FAULTS_ONLY`` where the protocol has it),
so what the referee measures per decision is the server's overhead plus the network.
Beside it, in the same run, a raw grpc.aio server (the same embedded ``GrpcThread``, no
trio, no referee) replays the very same requests to the same bot program, timing request
written → answer read on its asyncio loop: to one client (``raw1``), to four (``raw4``,
the arena's topology and, with acknowledgements riding on requests, its traffic shape:
the p50 goal's yardstick), and to four with a verdict after each answer (``raw4v``, the
shape of the original protocol). And ``door4``: the same replay to four clients served
through arena's own bridge (``SeatDoor``, ``Hop``, ``PlayWriter``, ``EAGER_WAKEUP``:
``remote_kit.replay_door``) by a trio task that sends the recorded bytes and costs nothing
else: the floor of any arena with trio as its runtime, in the goals' own units. Server
CPU per decision is the process's CPU time over the decisions (round trips) of each path.
The paths run in rounds, in rotating order, their samples pooled: load from elsewhere
then falls on all of them alike. Then
``bench/bridge_pingpong.py``'s five bridge structures.

Part B, load: 50, 100 and 250 concurrent matches of one deal on a fresh real ``arena
serve`` per level (``bench/remote_level.py``): one process (the default; ``--workers 1``
where the arena has workers, no flag on an older checkout), or ``--workers N``: a front
and N worker processes: the bulk bots dial the ``seat_address`` that ``Create`` returned
with their tokens, as an organiser hands it to each bot (``--dial front``: they dial the
front and are redirected at Hello, as a bot given only the front's address is; the probe
bots always are). The 4×N seats are played by two client
processes (``--bot python``: ``bench/bots/fallback_bot.py``, one grpc.aio stream and
TCP connection per seat on one loop; ``--bot cpp``: ``bench/bots/cpp/many``, a thread
per seat, for bots cheap next to the server on a 2-core machine) at a 5 s decision
limit, plus 8 probe matches whose Python bots think 5 ms (a third process): the time
they were charged against the think time they measured themselves, and per decision
against their whole time on their machine, by their own kernel (``fallback_bot.py
--trace``: the request's arrival to the answer's departure, their waits for a CPU
included), which decides the fair-clock verdict. The bulk bots trace their kernel's
times the same way, so the level also gives the referee's share of every charge (its
p99 "beyond the bots' own", beside the charged p99, which at saturation is mostly the
bots' own wait for a CPU on this machine).
Reports decisions/s, the referee's p50/p99 per decision (the time it charged, from the
records) and the p99 cycle (request to the next request after the answer: the charged
time plus the server's turnaround), faults, the server's CPU seconds (front and workers)
beside the bots', and the resident memory of the front and workers summed (VmRSS before
the matches, the sum of each process's VmHWM peak, VmRSS once they are over).
Two options are for reading, not for goals: ``--pin SERVER:BOTS`` runs the server and the
bots on CPUs of their own (``taskset``), which tells the server's share of the charged
time from its threads waiting behind bot threads for a CPU; ``--bot-think-ms N`` has the
bulk bots sleep N ms before each answer, to run a level below the machine's saturation.

The summary prints each goal of issue 20 with its figure and ratio; ``--json-out FILE``
keeps the figures and ``--baseline FILE`` (an earlier run's, e.g. on the code before a
change: ``PYTHONPATH=/path/to/old/checkout``) adds the ratio to it.

    .venv/bin/python bench/remote.py            # ~5 minutes
    .venv/bin/python bench/remote.py --quick    # ~1 minute smoke run
    .venv/bin/python bench/remote.py --only b --levels 250 --workers 2 --bot cpp \
        --baseline base.json    # base.json: the same with PYTHONPATH=<old checkout>, no --workers

Numbers are noisy on a 2-core machine shared with other work: read the ratios within
one run, and the load averages printed around it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import trio
from remote_goals import goals, print_summary  # bench/remote_goals.py: the summary
from remote_kit import (  # bench/remote_kit.py: the script's directory is on sys.path
    BOT,
    PIN,
    LatencyRecorder,
    ScriptSeat,
    Spawner,
    Step,
    bridge_pingpong,
    die_with_parent,
    door_available,
    on_one_cpu,
    replay_door,
    replay_raw,
    timed_asks,
)
from remote_level import BOTS, PROBES, THINK_MS, level_report, served_by
from server_cpu import diff, thread_cpu  # bench/server_cpu.py: CPU per thread

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
    "raw4v": "  the same plus a verdict per answer (overlapping)",
    "door4": "arena's bridge, a referee costing nothing, 4 cl.",
    "arena": "arena, 4 bots: the referee's ask → its answer",
    "arena_charged": "  arena, the time charged (kernel/loop clock)",
    "arena_play": "  charged, PLAY decisions only",
    "arena_bid": "  charged, BID decisions (concurrent windows)",
}


@dataclasses.dataclass
class PartA:
    deals: int
    rounds: int
    latencies: dict[str, list[float]] = dataclasses.field(
        default_factory=lambda: {key: [] for key in PATHS}
    )
    busy: dict[str, float] = dataclasses.field(default_factory=dict)  # s from first ask to last
    cpu: dict[str, float] = dataclasses.field(default_factory=dict)  # server CPU s per path
    trips: dict[str, int] = dataclasses.field(default_factory=dict)  # decisions per path
    decisions: int = 0
    faults: int = 0
    states: set[str] = dataclasses.field(default_factory=set)
    bots: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    script_bytes: float = 0.0
    bridge: dict[str, float] = dataclasses.field(default_factory=dict)
    bridge_trips: int = 0
    threads: dict[str, float] = dataclasses.field(default_factory=dict)  # arena CPU s by thread
    verdicts: int = 0  # Verdict messages the arena's bots received
    acks: int = 0  # acknowledgements that rode on another message


async def capture(rules: RuleSet, tc: TimeControl, a: PartA) -> list[Step]:
    """The match with in-process seats: its wire messages, the floor latencies and CPU
    (of a second run: the first pays for first calls)."""
    for _ in range(2):
        script: list[Step] = []
        seats = [ScriptSeat(s, script) for s in range(4)]
        floor = Referee("floor", MatchSetup(rules, SEED), seats, tc)
        started, cpu = time.perf_counter(), time.process_time()
        await floor.run()
        a.cpu["floor"] = time.process_time() - cpu
        a.trips["floor"] = floor.decisions
    a.busy["floor"] = time.perf_counter() - started
    a.latencies["floor"] = flat(floor.latencies)
    a.script_bytes = statistics.mean(step.request.ByteSize() for step in script)
    return script


async def play_arena(rules: RuleSet, tc: TimeControl, spawner: Spawner, a: PartA) -> None:
    """The real server and four bot processes: the referee's latencies per decision.
    ``arena``, the p50 goal's figure, is the referee's own turnaround around each ask
    (both bridge hops and the edge, as the raw replays' written → read), whatever the
    bot is charged (``arena_charged``: the fair clock, docs/architecture.md)."""
    recorder = LatencyRecorder()
    turnaround: list[float] = []
    with timed_asks(turnaround):
        async with open_arena_server(recorder_factory=lambda _h: (recorder, "")) as server:
            hosted = server.host.create(MatchSpec(rules=rules, seed=SEED, time_control=tc))
            argv = [sys.executable, str(BOT), "--server", server.target]
            procs = [spawner.spawn([*argv, f"--token={t}"]) for t in hosted.tokens if t is not None]
            cpu, threads = time.process_time(), thread_cpu()
            with on_one_cpu(server.grpc, with_this_thread=True):
                await hosted.done.wait()
            a.cpu["arena"] = a.cpu.get("arena", 0.0) + time.process_time() - cpu
            for name, seconds in diff(thread_cpu(), threads).items():
                if not name.startswith("switches"):
                    a.threads[name] = a.threads.get(name, 0.0) + seconds
            a.bots += [json.loads(out) for out in await spawner.wait_all(procs)]
    a.latencies["arena"] += turnaround
    referee = hosted.referee
    assert referee is not None, hosted.error
    a.latencies["arena_charged"] += flat(referee.latencies)
    a.latencies["arena_play"] += [x for k, _, x in recorder.answers if k == "play"]
    a.latencies["arena_bid"] += [x for k, _, x in recorder.answers if k == "bid"]
    a.busy["arena"] = a.busy.get("arena", 0.0) + recorder.span()
    a.decisions += referee.decisions
    a.trips["arena"] = a.decisions
    a.faults += len(referee.faults) + referee.late_answers
    a.states.add(hosted.state.value)


async def part_a(deals: int, rounds: int, spawner: Spawner) -> PartA:
    """Rounds of the arena and the raw replays in rotating order, pooled, so that load
    from elsewhere on the machine falls on all of them alike."""
    rules = RuleSet.from_mapping({"deals": deals})
    tc = TimeControl()
    a = PartA(deals, rounds)
    script = await capture(rules, tc, a)
    order = ("arena", "raw1", "raw4", "raw4v") + (("door4",) if door_available() else ())
    for r in range(rounds):
        for path in order[r % len(order) :] + order[: r % len(order)]:
            if path == "arena":
                await play_arena(rules, tc, spawner, a)
                continue
            if path == "door4":  # arena's bridge, a referee that costs nothing
                latencies, busy, cpu = await replay_door(script, 4, spawner)
            else:
                clients, verdicts = int(path[3]), path.endswith("v")
                latencies, busy, cpu = await replay_raw(
                    script, clients, spawner, overlap=verdicts, verdicts=verdicts
                )
            a.latencies[path] += latencies
            a.busy[path] = a.busy.get(path, 0.0) + busy
            a.cpu[path] = a.cpu.get(path, 0.0) + cpu
            a.trips[path] = a.trips.get(path, 0) + len(latencies)
    a.verdicts = sum(b.get("verdicts", 0) for b in a.bots)
    a.acks = sum(b.get("acks", 0) for b in a.bots)
    a.bridge_trips = 1000
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
        f"action {action_b:.0f} B; bot think time ≈ 0; {a.verdicts} verdict messages and "
        f"{a.acks} acks riding on other messages for {requests} requests"
    )
    raw = a.latencies["raw1"]
    raw50, raw99 = statistics.median(raw), pct(raw, 0.99)
    raw4 = statistics.median(a.latencies["raw4"])
    print(
        f"  {'path':<50}{'n':>6}{'p50 µs':>9}{'p99 µs':>9}{'p50 ×raw1':>11}{'p99 ×raw1':>11}"
        f"{'p50 ×raw4':>11}"
    )
    for key, label in PATHS.items():
        lat = a.latencies[key]
        if not lat:  # door4 on an older arena (a baseline's checkout)
            continue
        p50, p99 = statistics.median(lat), pct(lat, 0.99)
        print(
            f"  {label:<50}{len(lat):>6}{p50 * 1e6:>9.0f}{p99 * 1e6:>9.0f}"
            f"{p50 / raw50:>10.2f}×{p99 / raw99:>10.2f}×{p50 / raw4:>10.2f}×"
        )
    print(
        "  (a charge is dated by the kernel's receive time, to its tick taken off in the bot's "
        "favour: answers within a tick or two of the request are charged 0; "
        "docs/architecture.md, 'The kernel's receive time')"
    )
    floor_rate = len(a.latencies["floor"]) / a.busy["floor"]
    print(
        f"  one match end to end: arena {a.decisions / a.busy['arena']:.0f} decisions/s, "
        f"in-process seats {floor_rate:.0f}/s"
    )
    cpu = {k: a.cpu[k] / a.trips[k] * 1e6 for k in a.cpu if a.trips.get(k)}
    print(
        "  server CPU per decision (round trip), µs: "
        + ", ".join(
            f"{k} {cpu[k]:.0f}"
            for k in ("arena", "floor", "raw1", "raw4", "raw4v", "door4")
            if k in cpu
        )
    )
    if "raw4" in cpu:
        print(
            "  server CPU per decision ×raw4: "
            + ", ".join(f"{k} {cpu[k] / cpu['raw4']:.2f}×" for k in ("arena", "door4") if k in cpu)
            + " (door4: the bridge's floor, a referee that costs nothing)"
        )
    split = sorted(a.threads.items(), key=lambda kv: -kv[1])
    print(
        "  arena's CPU per decision by thread, µs: "
        + ", ".join(f"{k} {v / a.trips['arena'] * 1e6:.0f}" for k, v in split[:4])
    )
    base = a.bridge.get("raw", float("nan"))
    print(
        f"  bench/bridge_pingpong ({a.bridge_trips} round trips, ~20 B each way), median µs: "
        + ", ".join(f"{k} {v:.0f} ({v / base:.2f}×)" for k, v in a.bridge.items())
    )


# ------------------------------------------------------------------------ part B


async def part_b(args: argparse.Namespace, spawner: Spawner) -> list[Any]:
    reports = []
    for n in args.levels:
        argv = [sys.executable, __file__, "--level", str(n), "--deals", str(args.deals)]
        argv += ["--workers", str(args.workers), "--bot", args.bot, "--cap", str(args.cap)]
        argv += ["--pin", args.pin] if args.pin else []
        argv += ["--bot-think-ms", str(args.bot_think_ms), "--dial", args.dial]
        argv += ["--cpu-pinning", args.cpu_pinning] if args.cpu_pinning else []
        proc = spawner.spawn(argv)
        cap = args.cap
        try:
            (out,) = await spawner.wait_all([proc], timeout=cap + 90)
        except (RuntimeError, trio.TooSlowError) as exc:
            reports.append({"matches": n, "failed": f"{type(exc).__name__}: {exc}"[-600:]})
            proc.kill()
        else:
            reports.append(json.loads(out))
    return reports


DIALS = {"seat": "seat_address", "front": "front (redirected at Hello)"}


def print_b(reports: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(
        f"\nPart B — concurrent matches on {served_by(args.workers)}; {args.deals} deal(s) "
        f"each, {args.bot} fallback bots in 2 client processes, decision limit 5 s, cap "
        f"{args.cap:.0f} s per level; CPU and RSS summed over the server's processes"
        + (f"; bulk bots dial the {DIALS[args.dial]}" if args.workers > 1 else "")
        + (f"; pinned (server:bots CPUs) {args.pin}" if args.pin else "")
        + (f"; the bulk bots think {args.bot_think_ms} ms" if args.bot_think_ms else "")
    )
    head = (
        f"  {'matches':>7}{'done':>6}{'decisions':>10}{'conn s':>8}{'play s':>8}{'dec/s':>8}"
        f"{'p50 ms':>8}{'p99 ms':>8}{'cyc p99':>8}{'faults':>7}"
        f"{'CPU s srv/bots':>15}{'RSS MiB base/peak/after':>25}"
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
            f"{r['cycle_p99'] * 1e3:>8.1f}{r['faults']:>7}{cpu:>15}{mem:>25}"
        )
        per = max(r["decisions"], 1) / 1e6
        print(
            f"          CPU per decision: server {r['cpu_server'] / per:.0f} µs, bots "
            f"{r['cpu_clients'] / per:.0f} µs; {r['processes']} server processes, "
            f"{r['redirects']} seats redirected at Hello; the server on CPUs "
            f"{','.join(map(str, r.get('server_cpus', [])))}"
        )
        if r.get("bulk_think_ms"):
            over = [r[q] * 1e3 - r["bulk_think_ms"] for q in ("p50", "p99")]
            print(
                f"          the bulk bots slept {r['bulk_think_ms']} ms per answer: charged "
                f"p50 / p99 beyond that sleep {over[0]:.1f} / {over[1]:.1f} ms"
            )
        if r.get("bulk_beyond_n"):
            beyond = "/".join(f"{r[f'bulk_beyond_{q}'] * 1e3:.1f}" for q in ("p50", "p99", "max"))
            print(
                f"          charged beyond the bulk bots' own time on their machine (by its "
                f"kernel, as the thinkers' below), p50/p99/max ms: {beyond} "
                f"({r['bulk_beyond_n']} decisions)"
            )
        if r["notes"]:
            print(f"          {'; '.join(r['notes'])}")
    print(
        f"  fair clocks: {PROBES} more matches per level whose bots think {THINK_MS:g} ms; "
        "the time they were charged against their own think time (ms): as their Python "
        "measured it (read to write), and per decision beyond all their time on their "
        "machine (the request's arrival to the answer's departure by its kernel, waits "
        "for a CPU included; two ticks added against the referee): the referee's share"
    )
    head = f"{'charged p50/p99/max':>24}{'think p50/p99/max':>22}{'beyond own p50/p99/max':>26}"
    print(f"  {'matches':>7}{head}{'verdict':>10}")
    for r in reports:
        if "failed" in r:
            continue
        charged = "/".join(f"{r[f'charged_{q}'] * 1e3:.1f}" for q in ("p50", "p99", "max"))
        think = "/".join(f"{r[f'think_{q}'] * 1e3:.1f}" for q in ("p50", "p99", "max"))
        if r.get("beyond_n"):
            beyond = "/".join(f"{r[f'beyond_{q}'] * 1e3:.1f}" for q in ("p50", "p99", "max"))
            fair = r["beyond_max"] <= r["allowance"]
        else:  # an older bot program: no kernel times
            beyond, fair = "—", r["charged_max"] <= r["think_max"] + r["allowance"]
        verdict = "fair" if fair else "UNFAIR"
        print(f"  {r['matches']:>7}{charged:>24}{think:>22}{beyond:>26}{verdict:>10}")


# ------------------------------------------------------------------------ summary


def selfplay_rate() -> float:
    """``arena selfplay --json`` decisions/s: four random bots, no invariant checks."""
    argv = [sys.executable, "-m", "arena.cli.main", "selfplay", "--json", "--no-check"]
    argv += ["--bots", "random,random,random,random", "--matches", "6", "--seed", "1"]
    # cwd: not the worktree, which ``-m`` would put ahead of PYTHONPATH's older checkout
    done = subprocess.run(argv, capture_output=True, text=True, check=True, cwd="/")
    return float(json.loads(done.stdout)["decisions_per_s"])


# ------------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    with Spawner() as spawner:
        if args.level:
            report = await level_report(
                args.level,
                args.deals,
                args.cap,
                spawner,
                args.workers,
                args.bot,
                args.pin,
                args.bot_think_ms,
                args.dial,
                args.cpu_pinning,
            )
            print(json.dumps(report), flush=True)
            return
        began = time.perf_counter()
        print(f"load average before: {load()}  (2-core machine: other work skews the numbers)")
        a, b = None, []
        if args.only in (None, "a"):
            a = await part_a(args.deals_a, args.rounds, spawner)
            print_a(a)
        if args.only in (None, "b"):
            b = await part_b(args, spawner)
            print_b(b, args)
        figures = goals(a, b, await trio.to_thread.run_sync(selfplay_rate))
        figures["load_workers"] = args.workers
        figures["load_cpp_bots"] = float(args.bot == "cpp")
        before = json.loads(Path(args.baseline).read_text()) if args.baseline else None
        print_summary(figures, before)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(figures, indent=1) + "\n")
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
    parser.add_argument("--cap", type=float, default=None, help="seconds per level (120)")
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="serve part B with arena serve --workers N (default 0: one process)",
    )
    parser.add_argument(
        "--bot",
        choices=BOTS,
        default="python",
        help="part B's bulk bots: fallback_bot.py, or cpp (make -C bench/bots/cpp first)",
    )
    parser.add_argument(
        "--pin",
        default="",
        metavar="SERVER:BOTS",
        help="part B, for reading only: CPU lists for taskset, e.g. 0:1 runs the server "
        "(front and workers) on CPU 0 and every bot process on CPU 1",
    )
    parser.add_argument(
        "--bot-think-ms",
        type=int,
        default=0,
        help="part B, for reading only: the bulk bots sleep this long before each answer, "
        "so the level runs below the machine's saturation (the charged times include it)",
    )
    parser.add_argument(
        "--dial",
        choices=["seat", "front"],
        default="seat",
        help="part B with workers: the bulk bots dial the seat_address returned with their "
        "tokens (seat, the default) or the front, redirected at Hello (front)",
    )
    parser.add_argument(
        "--cpu-pinning",
        choices=["auto", "off"],
        default="",
        help="arena serve's --cpu-pinning (default auto: each serving process's two Python "
        "threads on one CPU): part B passes it on (not to an arena without it); part A's "
        "servers (arena, door4, and the raw replays' one thread) do the same while they "
        "serve, unless off",
    )
    parser.add_argument("--only", choices=["a", "b"], default=None, help="run one part")
    parser.add_argument("--json-out", default=None, help="write the goals' figures here")
    parser.add_argument("--baseline", default=None, help="a --json-out of an earlier run")
    parser.add_argument("--level", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    quick = args.quick
    args.deals_a = args.deals_a or (2 if quick else 6)
    args.rounds = args.rounds or (1 if quick else 3)
    args.levels = args.levels or ([10, 25] if quick else [50, 100, 250])
    # 250 one-deal matches are ~28k decisions: ~20 s on a quiet 2-core machine, ~55 s at
    # load 12; the cap is only a guard against a level that never ends
    args.cap = args.cap or (10.0 if quick else 120.0)
    PIN["on"] = args.cpu_pinning != "off"  # part A's servers, as arena serve's default
    return args


if __name__ == "__main__":
    configure_logging("error")
    die_with_parent()
    try:
        trio.run(main, parse())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
