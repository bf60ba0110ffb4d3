"""Soak and abuse: honest matches on a real ``arena serve`` with and without attackers.

One run, three phases on one server (loopback only, bounded in time and count):

1. **calm** — ``--concurrent`` honest matches at a time (four fallback seats each,
   thinking ``--think`` s), no abuse; after ``--warmup`` s the server's RSS is taken as
   the "after warm-up" figure;
2. **abuse** — the same honest load plus ``--abusers`` clients cycling through every
   abuse of docs/limits.md: big unrequested messages, oversize messages, 5,000-card
   actions, ``Check`` spam, ``Watch`` churn and slow ``Watch`` readers, ``Create``
   floods, over-long strings, seats that never come;
3. **after** — honest load only, for the retention time and more, so forgotten
   matches leave memory; the last RSS sample is "end".

Printed: matches finished, honest records verified (every one must replay exactly),
server RSS at start / after warm-up / peak / end, and the honest matches' decision
latency p50/p99 (the referee's own measure, from the records) in the calm and the
abuse phase side by side. The honest and abusive clients run in separate processes,
so the attackers' own CPU does not count against the honest bots.

    python bench/soak.py --minutes 4
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))
import abuse_kit as kit

from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

RETENTION = 20.0  # seconds: finished matches leave memory within the run


# ---------------------------------------------------------------------------- honest


def honest_main(target: str, until: float, concurrent: int, think: float, out: str) -> None:
    """Keep ``concurrent`` honest matches going until ``until``; one JSON line each."""

    async def lane(lane_no: int, sink: Any) -> None:
        n = 0
        while time.time() < until:
            started = time.time()
            try:
                match_id, seats = await kit.play_match(
                    target, think=think, deals=1, seed=lane_no * 100_000 + n
                )
                ended = [s.end.result.reason if s and s.end else s.status for s in seats if s]
            except grpc.RpcError as exc:  # a refused Create (the server is at a bound)
                match_id, ended = "", [exc.code().name]
                await asyncio.sleep(0.5)
            sink.write(json.dumps({"id": match_id, "start": started, "end": time.time(),
                                   "ends": ended}) + "\n")  # fmt: skip
            sink.flush()
            n += 1

    async def main() -> None:
        with open(out, "a") as sink:
            await asyncio.gather(*(lane(i, sink) for i in range(concurrent)))

    asyncio.run(main())


# ---------------------------------------------------------------------------- abuse


async def _abuse_once(target: str, kind: str, tally: dict[str, int]) -> None:
    if kind in ("flood", "huge", "oversize", "check"):
        created = await kit.create(target, deals=1)
        tokens = list(created.seat_tokens)
        raw: list[bytes] | None = None
        act: Any = None
        if kind == "flood":
            raw = [kit.padded_late_action(60_000)] * 300
        elif kind == "oversize":
            raw = [kit.padded_late_action(200_000)]
        elif kind == "huge":
            act = kit.huge_answer
        else:
            act = kit.check_spam(target, tokens[1], calls=60)
        seats = [
            kit.play_seat(target, t, 0.0, "abuser", act, raw) if s == 1
            else kit.play_seat(target, t)
            for s, t in enumerate(tokens)
        ]  # fmt: skip
        await asyncio.gather(*seats)
    elif kind == "watch":
        created = await kit.create(target, deals=1)
        await kit.watch_churn(target, created.match_id, 200)
        held, _ = await kit.hold_watches(target, created.match_id, 20)  # never read
        await kit.release(held)
        await kit.cancel_all(target, [created.match_id])
    elif kind == "create":
        _made, _refused, ids = await kit.create_flood(target, 400)
        await kit.cancel_all(target, ids)
    elif kind == "strings":
        async with grpc.aio.insecure_channel(target) as channel:
            stub = pb_grpc.MatchesStub(channel)
            for request in (
                stub.Create(pb.CreateMatchRequest(seat_names=["\x1b[2J" * 20_000] * 4)),
                stub.Get(pb.GetMatchRequest(match_id="m" * 100_000)),
                stub.List(pb.ListMatchesRequest(page_size=1_000_000)),
            ):
                await kit.call_status(request)
    elif kind == "missing":  # seats 2 never comes: the match waits, then forfeits
        created = await kit.create(target, deals=1)
        tokens = list(created.seat_tokens)
        await asyncio.gather(*(kit.play_seat(target, tokens[s]) for s in (0, 1, 3)))
    tally[kind] = tally.get(kind, 0) + 1


KINDS = ("flood", "huge", "oversize", "check", "watch", "create", "strings", "missing")


def abuse_main(target: str, until: float, abusers: int, out: str) -> None:
    async def lane(lane_no: int, tally: dict[str, int]) -> None:
        rng = random.Random(lane_no)
        while time.time() < until:
            kind = rng.choice(KINDS)
            try:
                await asyncio.wait_for(_abuse_once(target, kind, tally), 60)
            except (grpc.RpcError, TimeoutError) as exc:
                key = f"{kind}:{type(exc).__name__}"
                tally[key] = tally.get(key, 0) + 1
                await asyncio.sleep(0.2)

    async def main() -> None:
        tally: dict[str, int] = {}
        await asyncio.gather(*(lane(i, tally) for i in range(abusers)))
        Path(out).write_text(json.dumps(tally))

    asyncio.run(main())


# ---------------------------------------------------------------------------- the run


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=4.0, help="whole run (default 4)")
    parser.add_argument("--concurrent", type=int, default=4, help="honest matches at a time")
    parser.add_argument("--abusers", type=int, default=2, help="abusive client lanes")
    parser.add_argument("--think", type=float, default=0.002, help="honest think time, s")
    parser.add_argument(
        "--warmup", type=float, default=RETENTION + 25,
        help="seconds before the RSS base (past the retention: a steady state)",
    )  # fmt: skip
    parser.add_argument("--records", default=None, help="records folder (default: a temp dir)")
    args = parser.parse_args()
    total = args.minutes * 60
    calm = max(args.warmup + 20, total * 0.3)
    after = max(RETENTION + 15, total * 0.2)
    abuse = max(20.0, total - calm - after)
    total = calm + abuse + after
    folder = Path(args.records or tempfile.mkdtemp(prefix="soak-")) / "records"
    work = folder.parent
    flags = ("--retention", str(RETENTION), "--join-timeout", "5")
    print(f"soak: {total / 60:.1f} min (calm {calm:.0f} s, abuse {abuse:.0f} s, after "
          f"{after:.0f} s), {args.concurrent} honest matches at a time, {args.abusers} "
          f"abusers; load {kit.load()}; records in {folder}", flush=True)  # fmt: skip
    samples: list[tuple[float, float]] = []
    with kit.serve(folder, *flags) as server:
        t0 = time.time()
        rss_start = server.rss_mib()
        ctx = multiprocessing.get_context("spawn")
        honest_log = str(work / "honest.jsonl")
        honest = ctx.Process(
            target=honest_main,
            args=(server.target, t0 + total, args.concurrent, args.think, honest_log),
        )
        honest.start()
        abuse_from, abuse_to = t0 + calm, t0 + calm + abuse
        abusers: Any = None
        rss_warm = 0.0
        while time.time() < t0 + total:
            now = time.time()
            samples.append((now - t0, server.rss_mib()))
            if not rss_warm and now - t0 >= args.warmup:
                rss_warm = samples[-1][1]
            if abusers is None and now >= abuse_from:
                abusers = ctx.Process(
                    target=abuse_main,
                    args=(server.target, abuse_to, args.abusers, str(work / "abuse.json")),
                )
                abusers.start()
                print(
                    f"  {now - t0:5.0f} s  abuse starts; rss {samples[-1][1]:.1f} MiB", flush=True
                )
            time.sleep(1.0)
        honest.join(120)
        if abusers is not None:
            abusers.join(120)
        rss_end = server.rss_mib()
        rss_peak = server.peak_mib()
        alive = server.process.poll() is None
    rows = [json.loads(line) for line in Path(honest_log).read_text().splitlines()]
    tally = json.loads((work / "abuse.json").read_text()) if (work / "abuse.json").exists() else {}
    calm_lat: list[float] = []
    abuse_lat: list[float] = []
    lost: list[str] = []
    verified = 0
    finished = 0
    for row in rows:
        if not row["id"]:
            continue
        if row["ends"] == ["deals_played"] * 4:
            finished += 1
        path = folder / f"{row['id']}.jsonl"
        if not path.exists():
            lost.append(f"{row['id']}: no record")
            continue
        record = read_record(path)
        if not verify(record).ok:
            lost.append(f"{row['id']}: does not verify")
            continue
        verified += 1
        latencies = [a.latency_ms for a in record.answers()]
        if t0 + args.warmup <= row["start"] and row["end"] <= abuse_from:
            calm_lat += latencies
        elif abuse_from <= row["start"] and row["end"] <= abuse_to:
            abuse_lat += latencies
    all_records = len(list(folder.glob("m-*.jsonl")))
    p99_calm, p99_abuse = percentile(calm_lat, 0.99), percentile(abuse_lat, 0.99)
    print()
    print(f"server still serving at the end: {alive}")
    print(f"honest matches finished: {finished} of {len(rows)} started; records verified: "
          f"{verified}; lost or unverifiable: {len(lost)}")  # fmt: skip
    for problem in lost[:5]:
        print(f"  ! {problem}")
    print(f"records written in all (honest + abusive): {all_records}")
    print(f"abuse done: {json.dumps(tally, sort_keys=True)}")
    print(f"server RSS MiB: start {rss_start:.1f}, after warm-up {rss_warm:.1f}, "
          f"peak {rss_peak:.1f}, end {rss_end:.1f} "
          f"({(rss_end / rss_warm - 1) * 100:+.1f}% vs warm-up)")  # fmt: skip
    print(f"{'honest decision latency':<26}{'answers':>9}{'p50 ms':>9}{'p99 ms':>9}")
    for label, lat in (("calm (no abuse)", calm_lat), ("under abuse", abuse_lat)):
        p50 = statistics.median(lat) if lat else float("nan")
        print(f"{label:<26}{len(lat):>9}{p50:>9.2f}{percentile(lat, 0.99):>9.2f}")
    print(f"p99 under abuse / calm: {p99_abuse / p99_calm:.2f}x (goal <= 2x)")
    print(f"load average at the end: {kit.load()}")
    print("goals: 0 lost: " + ("met" if not lost else "MISSED")
          + "; RSS end within 10% of warm-up: "
          + ("met" if abs(rss_end / rss_warm - 1) <= 0.10 else "MISSED")
          + "; p99 <= 2x: " + ("met" if p99_abuse <= 2 * p99_calm else "MISSED"))  # fmt: skip
    with contextlib.suppress(OSError):
        (work / "rss.json").write_text(json.dumps(samples))
    return 0 if alive and not lost else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
