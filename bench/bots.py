"""What a Python bot spends per decision: botkit's asyncio client vs its sync client vs
the botkit before them, and random_bot's decision before and after the card tables.

Part A, one real ``arena serve --workers 1`` on loopback (one process: the botkit of
``--base`` predates the workers' redirect): in rounds, in rotating order, a match of four
``random_bot`` processes (``bench/bots/timed_bot.py``, same seeds, so the same
games) on each kit: ``today`` (botkit and random_bot as of ``--base``, checked out with
``git show``: cards parsed from strings, the blocking client), ``sync`` and ``asyncio``
(this botkit: card tables, ready-made ``Turn``; the two clients). Per decision: the bot
process's CPU (all threads, from its first decision to its last: the client's share
plus ``decide``'s), ``decide``'s own CPU, and the latency the referee
charged (request written → answer read, ``latency_ms`` in the record; the server's own
part is the same for all three).

Part B, in this process: random_bot's decision — the request's cards off the wire, the
choice, the Action built — over every request of a two-deal match (made by the server's
own conversion), with today's kit and this one.

Part C, one bot alone (``bench/bots_replay.py``): a bare grpc.aio server replays seat 0's
requests of that match ``--laps`` times to one timed bot, each as soon as the previous
answer arrived, with a Verdict per answer or the acknowledgement riding along, as the
bot's Hello asks. Nothing else runs, so the CPU per round trip is the bot's own (client
plus ``decide``), and ``asyncio/every`` (the asyncio client asking for every Verdict)
splits the client's saving from the protocol's.

    .venv/bin/python bench/bots.py              # ~3 minutes
    .venv/bin/python bench/bots.py --rounds 1 --deals 1 --laps 2   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from bots_replay import part_c  # bench/bots_replay.py: the script's directory is on sys.path

from arena.game import MatchSetup, Request
from arena.referee import play_match
from arena.rules import RuleSet
from arena.server.convert import request_to_pb
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
TIMED = ROOT / "bench" / "bots" / "timed_bot.py"
BASE = "2e73e7c"  # main before the asyncio client and the card tables
KITS = ("today", "sync", "asyncio")


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def old_kit(base: str, folder: Path) -> Path:
    """botkit.py and random_bot.py as they were at ``base``, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("botkit.py", "random_bot.py"):
        text = subprocess.run(
            ["git", "show", f"{base}:sample_bots/{name}"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        (folder / name).write_text(text)
    return folder


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "arena.cli.main", "serve", "--listen", f"127.0.0.1:{port}",
            "--open", "--workers", "1", "--records", str(folder / "records")]  # fmt: skip
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server, f"127.0.0.1:{port}"
        time.sleep(0.1)
    server.kill()
    raise SystemExit("arena serve did not start")


def play(target: str, records: Path, kit: str, kits: dict[str, Path], seed: int, deals: int
         ) -> tuple[list[dict[str, Any]], list[float]]:  # fmt: skip
    """One match of four timed bots on ``kit``: their reports and the charged latencies."""
    with grpc.insecure_channel(target) as channel:
        created = pb_grpc.MatchesStub(channel).Create(
            pb.CreateMatchRequest(seed=seed, deals=deals), timeout=30
        )
    client = [] if kit == "today" else ["--client", kit]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    bots = [
        subprocess.Popen(
            [
                sys.executable,
                str(TIMED),
                str(kits[kit]),
                "--server",
                target,
                "--token",
                token,
                "--seed",
                str(seed * 4 + n),
                *client,
            ],
            stdout=subprocess.PIPE,
            env=env,
        )
        for n, token in enumerate(created.seat_tokens)
    ]
    reports = []
    for bot in bots:
        out, _ = bot.communicate(timeout=600)
        reports.append(json.loads(out.decode().strip().splitlines()[-1]))
    path = records / f"{created.match_id}.jsonl"
    for _ in range(100):
        if path.exists() and b'"type":"footer"' in path.read_bytes():
            break
        time.sleep(0.05)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    latencies = [line["latency_ms"] for line in lines if line.get("type") == "answer"]
    assert all(r["code"] == 0 for r in reports), reports
    return reports, latencies


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def part_a(kits: dict[str, Path], rounds: int, deals: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="bench-bots-") as tmp:
        server, target = start_server(Path(tmp))
        reports: dict[str, list[dict[str, Any]]] = {k: [] for k in KITS}
        latencies: dict[str, list[float]] = {k: [] for k in KITS}
        try:
            for r in range(rounds):
                order = KITS[r % 3 :] + KITS[: r % 3]  # rotate: drift falls on all alike
                for kit in order:
                    got, lat = play(target, Path(tmp) / "records", kit, kits, 100 + r, deals)
                    reports[kit] += got
                    latencies[kit] += lat
                    print(f"  round {r + 1} {kit:8} {sum(g['decisions'] for g in got)} decisions")
        finally:
            server.terminate()
            server.wait(timeout=30)
    out = {}
    for kit in KITS:
        n = sum(g["decisions"] for g in reports[kit])
        gaps = n - len(reports[kit])  # first to last decision of each bot
        out[kit] = {
            "decisions": n,
            "cpu_us": 1e6 * sum(g["cpu_s"] for g in reports[kit]) / gaps,
            "decide_us": 1e6 * sum(g["decide_s"] for g in reports[kit]) / n,
            "p50_ms": pct(latencies[kit], 0.5),
            "p99_ms": pct(latencies[kit], 0.99),
        }
    return out


class Capture:
    """An in-process seat that keeps each request as the server sends it."""

    name = "capture"

    def __init__(self, into: list[pb.Request]) -> None:
        self.into = into

    def decide(self, request: Request) -> tuple[Any, ...]:
        self.into.append(request_to_pb(1, request, 1000, 1000).request)
        return tuple(request.fallback)


def import_kit(folder: Path) -> tuple[Any, Any]:
    """``botkit`` and ``random_bot`` from ``folder``, as modules of their own."""
    for name in ("botkit", "random_bot"):
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
    sys.path.insert(0, str(folder))
    try:
        import botkit
        import random_bot
    finally:
        sys.path.remove(str(folder))
    return botkit, random_bot


RULES = RuleSet.from_mapping({"deals": 2})


def capture() -> list[pb.Request]:
    """Every request of a two-deal match, as the server converts it."""
    requests: list[pb.Request] = []
    play_match(MatchSetup(RULES, 9), [Capture(requests) for _ in range(4)])  # type: ignore[list-item]
    return requests


def part_b(kits: dict[str, Path], requests: list[pb.Request], repeat: int) -> dict[str, float]:
    rules = RULES
    old, old_random = import_kit(kits["today"])
    new, new_random = import_kit(kits["asyncio"])
    tables = {"today": [old.Table(s, rules) for s in range(4)],
              "new": [new.Table(s, rules) for s in range(4)]}  # fmt: skip
    rng = random.Random(1)

    def today(request: pb.Request) -> pb.Action:
        chosen = old_random.decide(request, tables["today"][request.view.seat], rng)
        return pb.Action(seq=request.seq, cards=[old.card_to_pb(c) for c in chosen])

    def tables_now(request: pb.Request) -> pb.Action:
        table = tables["new"][request.view.seat]
        chosen = new_random.decide(new.Turn(request, table), table, rng)
        return pb.Action(seq=request.seq, cards=new.to_pb(chosen))

    times: dict[str, list[float]] = {"today": [], "tables": []}
    for _ in range(repeat):
        for name, answer in (("today", today), ("tables", tables_now)):
            started = time.process_time()
            for request in requests:
                answer(request)
            times[name].append((time.process_time() - started) / len(requests))
    return {name: 1e6 * statistics.median(t) for name, t in times.items()} | {
        "requests": float(len(requests))
    }


def show_a(a: dict[str, dict[str, float]]) -> None:
    base = a["today"]
    print(f"\npart A: {'kit':9} {'decisions':>9} {'bot CPU µs/dec':>15} {'ratio':>6} "
          f"{'decide µs':>10} {'p50 ms':>7} {'ratio':>6} {'p99 ms':>7}")  # fmt: skip
    for kit in KITS:
        k = a[kit]
        cpu = k["cpu_us"]
        print(f"        {kit:9} {k['decisions']:9.0f} {cpu:15.0f} {cpu / base['cpu_us']:6.2f}"
              f" {k['decide_us']:10.0f} {k['p50_ms']:7.2f} {k['p50_ms'] / base['p50_ms']:6.2f}"
              f" {k['p99_ms']:7.2f}")  # fmt: skip
    print("        (decide µs: today's decide parses its cards; the new kits' get them ready,"
          " decoded before decide: part B compares the two whole)")  # fmt: skip


def show_b(b: dict[str, float]) -> None:
    print(f"\npart B: random_bot decision (cards in, choice, Action out), "
          f"{b['requests']:.0f} requests, median of runs")  # fmt: skip
    print(f"  today (cards parsed from strings): {b['today']:7.1f} µs")
    print(f"  card tables + Turn:                {b['tables']:7.1f} µs"
          f"  ({b['tables'] / b['today']:.2f}x)")  # fmt: skip


def show_c(c: dict[str, dict[str, float]]) -> None:
    print(f"\npart C: one bot alone against a replay server "
          f"({c['today']['round_trips']:.0f} round trips per kit)")  # fmt: skip
    print(f"{'kit':14} {'bot CPU µs/trip':>15} {'ratio':>6} {'client µs':>10} {'decide µs':>10} "
          f"{'p50 µs':>7} {'ratio':>6} {'p99 µs':>7}")  # fmt: skip
    t = c["today"]
    for name, k in c.items():
        print(f"{name:14} {k['cpu_us']:15.0f} {k['cpu_us'] / t['cpu_us']:6.2f} "
              f"{k['cpu_us'] - k['decide_us']:10.0f} {k['decide_us']:10.0f} {k['p50_us']:7.0f} "
              f"{k['p50_us'] / t['p50_us']:6.2f} {k['p99_us']:7.0f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--rounds", type=int, default=3, help="matches (A) and bot runs (C) per kit (default 3)")
    add("--deals", type=int, default=2, help="part A: deals per match (default 2)")
    add("--laps", type=int, default=10, help="part C: replays of seat 0's requests (default 10)")
    add("--base", default=BASE, help=f"git revision of 'today' (default {BASE})")
    add("--parts", default="abc", help="which parts to run (default abc)")
    add("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    print(f"bench/bots.py  {load()}")
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-kit-") as tmp:
        kits = {"today": old_kit(args.base, Path(tmp) / "today"),
                "sync": ROOT / "sample_bots", "asyncio": ROOT / "sample_bots"}  # fmt: skip
        requests = capture()
        if "a" in args.parts:
            print(f"part A: {args.rounds} rounds x {len(KITS)} kits, {args.deals}-deal matches, "
                  "4 random_bot processes, one arena serve on loopback")  # fmt: skip
            figures["a"] = part_a(kits, args.rounds, args.deals)
            show_a(figures["a"])
        if "b" in args.parts:
            figures["b"] = part_b(kits, requests, repeat=max(5, 3 * args.rounds))
            show_b(figures["b"])
        if "c" in args.parts:
            alone = {
                "today": (kits["today"], []),
                "sync": (kits["sync"], ["--client", "sync"]),
                "asyncio": (kits["asyncio"], ["--client", "asyncio"]),
                "asyncio/every": (kits["asyncio"], ["--client", "asyncio", "--verdicts", "every"]),
            }
            seat0 = [r for r in requests if r.view.seat == 0]
            figures["c"] = part_c(alone, seat0, args.laps, args.rounds)
            show_c(figures["c"])
    print(f"\n{load()}")
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
