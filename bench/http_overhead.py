"""The server's per-decision overhead with a live page open on every match, vs none.

One server (the trio referee + gRPC thread + the HTTP side, as ``arena serve --http``,
records written) plays rounds of ``--matches`` concurrent matches; every seat is played
by ``bench/bots/fallback_bot.py`` (answers at once), so the referee's own time dominates.
Rounds alternate between **none** (no page) and **pages** (one client per match reading
its ``/matches/ID/events`` stream to the end, in a separate process, as a browser tab
would), so load from elsewhere on the machine falls on both alike. Per condition:

- *overhead*: the referee's time from an answer read to the next request sent (judge,
  apply, record, tell the watchers, build the request), from the records' answer lines
  (the referee's clock) — what feeds ``arena_referee_overhead_seconds``;
- *latency*: request sent → answer read, as the referee measures it (bot + network +
  the server's loop being busy with something else, e.g. an event stream);
- *wall/decision*: each match's wall time over its decisions.

    .venv/bin/python bench/http_overhead.py            # ~1 minute
    .venv/bin/python bench/http_overhead.py --quick    # a smoke run

Read the ratios within one run (2 shared cores: absolute numbers are noisy).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from remote_kit import BOT, Spawner  # bench/remote_kit.py

from arena.cli.logs import configure_logging
from arena.records import read_record
from arena.rules import RuleSet
from arena.server.app import open_arena_server
from arena.server.host import MatchSpec
from arena.server.recording import record_factory

READER = r"""
import http.client, sys
host, token, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
import threading
def read(match_id):
    conn = http.client.HTTPConnection(host, timeout=120)
    conn.request("GET", f"/matches/{match_id}/events", headers={"Authorization": "Bearer " + token})
    response = conn.getresponse()
    while True:
        line = response.fp.readline()
        if not line or line.startswith(b"event: end"):
            break
threads = [threading.Thread(target=read, args=(m,)) for m in ids]
for t in threads: t.start()
for t in threads: t.join()
print("done")
"""


def overheads(path: str) -> list[float]:
    """Seconds from each answer's arrival to the next request, from a record."""
    out, answered_at = [], None
    for answer in read_record(path).answers():
        if answered_at is not None and answer.requested_at_ms >= answered_at:
            out.append((answer.requested_at_ms - answered_at) / 1000)
        answered_at = answer.requested_at_ms + answer.latency_ms
    return out


async def one_round(server: Any, spawner: Spawner, matches: int, pages: bool) -> dict[str, Any]:
    host = server.host
    rules = RuleSet.from_mapping({"deals": 1})
    hosted = [host.create(MatchSpec(rules=rules, seed=100 + i)) for i in range(matches)]
    reader = None
    if pages:
        http_host = server.http_url.removeprefix("http://")
        reader = spawner.spawn(
            [sys.executable, "-c", READER, http_host, server.organiser_token]
            + [h.id for h in hosted]
        )
        await trio.sleep(0.3)  # the streams are open before the bots start
    tokens = "\n".join(t for h in hosted for t in h.tokens if t) + "\n"
    started = time.perf_counter()
    bots = spawner.spawn(
        [sys.executable, str(BOT), "--server", server.target, "--tokens-file", "-"], stdin=tokens
    )
    for h in hosted:
        await h.done.wait()
    wall = time.perf_counter() - started
    await spawner.wait_all([bots] + ([reader] if reader else []))
    latencies = [x for h in hosted for seat in h.referee.latencies for x in seat]
    decisions = sum(h.referee.decisions for h in hosted)
    faults = sum(len(h.referee.faults) for h in hosted)
    return {
        "overhead": [x for h in hosted for x in overheads(h.record)],
        "latency": latencies,
        "wall_per_decision": wall / max(1, decisions) * matches,
        "decisions": decisions,
        "faults": faults,
    }


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def main_async(rounds: int, matches: int) -> None:
    pooled: dict[str, dict[str, Any]] = {
        c: {"overhead": [], "latency": [], "wall": [], "decisions": 0, "faults": 0}
        for c in ("none", "pages")
    }
    with TemporaryDirectory() as folder, Spawner() as spawner:
        async with open_arena_server(
            recorder_factory=record_factory(None, folder), http="127.0.0.1:0"
        ) as server:
            for r in range(rounds):
                order = ("none", "pages") if r % 2 == 0 else ("pages", "none")
                for condition in order:
                    got = await one_round(server, spawner, matches, condition == "pages")
                    p = pooled[condition]
                    p["overhead"] += got["overhead"]
                    p["latency"] += got["latency"]
                    p["wall"].append(got["wall_per_decision"])
                    p["decisions"] += got["decisions"]
                    p["faults"] += got["faults"]
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"{matches} concurrent matches per round, {rounds} rounds per condition, records on")
    print(f"{'':8}{'decisions':>10}{'overhead p50':>14}{'p90':>9}{'mean':>9}"
          f"{'latency p50':>13}{'p90':>9}{'wall/dec':>10}{'faults':>8}")  # fmt: skip
    rows = {}
    for condition, p in pooled.items():
        us = 1e6
        row = (
            pct(p["overhead"], 0.5) * us,
            pct(p["overhead"], 0.9) * us,
            statistics.fmean(p["overhead"]) * us,
            pct(p["latency"], 0.5) * us,
            pct(p["latency"], 0.9) * us,
            statistics.median(p["wall"]) * us,
        )
        rows[condition] = row
        print(f"{condition:8}{p['decisions']:>10}{row[0]:>12.0f}µs{row[1]:>7.0f}µs{row[2]:>7.0f}µs"
              f"{row[3]:>11.0f}µs{row[4]:>7.0f}µs{row[5]:>8.0f}µs{p['faults']:>8}")  # fmt: skip
    ratio = [b / a if a else float("nan") for a, b in zip(rows["none"], rows["pages"], strict=True)]
    print(f"{'ratio':8}{'':>10}{ratio[0]:>13.2f}×{ratio[1]:>8.2f}×{ratio[2]:>8.2f}×"
          f"{ratio[3]:>12.2f}×{ratio[4]:>8.2f}×{ratio[5]:>9.2f}×")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds per condition")
    parser.add_argument("--matches", type=int, default=4, help="concurrent matches per round")
    parser.add_argument("--quick", action="store_true", help="1 round of 2 matches")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.matches = 1, 2
    configure_logging("warning", False)
    print(f"load average: {os.getloadavg()[0]:.1f}")
    trio.run(main_async, args.rounds, args.matches)


if __name__ == "__main__":
    main()
