"""The server's per-decision overhead with a live page open on every match, vs none.

One server (the trio referee + gRPC thread + the HTTP side, as ``arena serve --http``,
records written) plays rounds of ``--matches`` concurrent one-deal matches; every seat
is played by ``bench/bots/fallback_bot.py`` (answers at once), so the referee's own time
dominates. Rounds alternate between **none** (no page) and **pages** (``--pages``
clients per match reading its ``/matches/ID/events`` stream to the end, in a separate
process, in big reads as a browser does), so load from elsewhere on the machine falls on
both alike. Per condition:

- *ovh p50/p90/mean*: the referee's time from an answer read to the next request sent
  (judge, apply, record, tell the watchers, build the request), from the records' answer
  lines (the referee's clock) — what feeds ``arena_referee_overhead_seconds``;
- *lat p50*: request sent → answer read, as the referee measures it (bot + network +
  the server's loop being busy with something else, e.g. an event stream);
- *wall/dec*: each match's wall time over its decisions (median of the rounds);
- *trio cpu*, *srv cpu*: CPU time per decision of the trio thread (referee + HTTP side)
  and of the whole server process (+ the gRPC thread), which load from other processes
  sways far less than wall-clock figures; *page cpu*: the page client's.

``ratio`` compares the pooled figures; ``paired`` is the median over rounds of each
round's ratio to the other condition's round run just before or after it.

    .venv/bin/python bench/http_overhead.py              # ~1.5 minutes on a quiet machine
    .venv/bin/python bench/http_overhead.py --pages 64   # the most a match allows
    .venv/bin/python bench/http_overhead.py --quick      # a smoke run

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
from typing import Any, ClassVar

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from remote_kit import BOT, Spawner  # bench/remote_kit.py

from arena.cli.logs import configure_logging
from arena.records import read_record
from arena.referee import Referee
from arena.rules import RuleSet
from arena.server.app import open_arena_server
from arena.server.host import MatchSpec
from arena.server.recording import record_factory

READER = r"""
import http.client, sys, threading, time
host, token, pages, ids = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
got = [0]  # bytes
def read(match_id):
    ready.wait()
    conn = http.client.HTTPConnection(host, timeout=120)
    conn.request("GET", f"/matches/{match_id}/events", headers={"Authorization": "Bearer " + token})
    response = conn.getresponse()
    assert response.status == 200, response.status
    tail = b""
    while True:  # big reads, as a browser does: the client's own CPU stays small
        data = response.read1(65536)
        if not data:
            break
        got[0] += len(data)
        tail = (tail + data)[-64:]
        if b"event: end" in tail:
            break
ready = threading.Event()
threads = [threading.Thread(target=read, args=(m,)) for m in ids for _ in range(pages)]
for t in threads: t.start()
started = time.process_time()  # the client's CPU from here on (not Python's start)
ready.set()
for t in threads: t.join()
print("done", got[0], time.process_time() - started)
"""


def overheads(path: str) -> list[float]:
    """Seconds from each answer's arrival to the next request, from a record."""
    out, answered_at = [], None
    for answer in read_record(path).answers():
        if answered_at is not None and answer.requested_at_ms >= answered_at:
            out.append((answer.requested_at_ms - answered_at) / 1000)
        answered_at = answer.requested_at_ms + answer.latency_ms
    return out


class StepCpu:
    """The trio thread's CPU time over the same interval as *overhead* (an answer read →
    the next request sent), which no other task can enter: the referee runs it without
    a checkpoint. Wall time there also counts the thread being preempted (other
    processes, the GIL taken by the gRPC thread), which a loaded machine makes most of
    the noise; CPU time does not. Measured by wrapping ``Referee._ask`` (an answer is
    back) and ``Referee._step`` (the next request is about to be built), a bench-only
    probe: if the referee's internals change it says so and the column stays empty."""

    samples: ClassVar[list[float]] = []

    @classmethod
    def install(cls) -> bool:
        ask, step = getattr(Referee, "_ask", None), getattr(Referee, "_step", None)
        if ask is None or step is None:
            print("StepCpu: Referee._ask/_step are gone; no 'ovh cpu' column")
            return False
        answered: dict[int, float] = {}

        async def timed_ask(self: Referee, *args: Any) -> Any:
            outcome = await ask(self, *args)
            answered[id(self)] = time.thread_time()
            return outcome

        async def timed_step(self: Referee) -> None:
            at = answered.pop(id(self), None)
            if at is not None:
                cls.samples.append(time.thread_time() - at)
            await step(self)

        Referee._ask = timed_ask  # type: ignore[method-assign,assignment]
        Referee._step = timed_step  # type: ignore[method-assign]
        return True


async def one_round(server: Any, spawner: Spawner, matches: int, pages: int) -> dict[str, Any]:
    """One round of ``matches`` concurrent one-deal matches, ``pages`` readers on each."""
    host = server.host
    rules = RuleSet.from_mapping({"deals": 1})
    hosted = [host.create(MatchSpec(rules=rules, seed=100 + i)) for i in range(matches)]
    reader = None
    if pages:
        http_host = server.http_url.removeprefix("http://")
        reader = spawner.spawn(
            [sys.executable, "-c", READER, http_host, server.organiser_token, str(pages)]
            + [h.id for h in hosted]
        )
        await trio.sleep(0.3 + pages * matches * 0.002)  # the streams are open first
    tokens = "\n".join(t for h in hosted for t in h.tokens if t) + "\n"
    StepCpu.samples = []
    started, trio_cpu, cpu = time.perf_counter(), time.thread_time(), time.process_time()
    bots = spawner.spawn(
        [sys.executable, str(BOT), "--server", server.target, "--tokens-file", "-"], stdin=tokens
    )
    for h in hosted:
        await h.done.wait()
    wall = time.perf_counter() - started
    trio_cpu, cpu = time.thread_time() - trio_cpu, time.process_time() - cpu
    outs = await spawner.wait_all([bots] + ([reader] if reader else []))
    page_cpu = float(outs[-1].split()[2]) if reader else 0.0
    decisions = sum(h.referee.decisions for h in hosted)
    return {
        "overhead": [x for h in hosted for x in overheads(h.record)],
        "step_cpu": StepCpu.samples,
        "latency": [x for h in hosted for seat in h.referee.latencies for x in seat],
        "wall": wall / max(1, decisions) * matches,
        "trio_cpu": trio_cpu / max(1, decisions),
        "cpu": cpu / max(1, decisions),
        "page_cpu": page_cpu / max(1, decisions),
        "decisions": decisions,
        "faults": sum(len(h.referee.faults) for h in hosted),
    }


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


COLUMNS = (  # (title, figure of a condition's pooled samples), all in µs
    ("ovh p50", lambda p: pct(p["overhead"], 0.5)),
    ("p90", lambda p: pct(p["overhead"], 0.9)),
    ("mean", lambda p: statistics.fmean(p["overhead"])),
    ("ovh cpu", lambda p: pct(p["step_cpu"], 0.5)),
    ("lat p50", lambda p: pct(p["latency"], 0.5)),
    ("wall/dec", lambda p: statistics.median(p["wall"])),
    ("trio cpu", lambda p: statistics.median(p["trio_cpu"])),
    ("srv cpu", lambda p: statistics.median(p["cpu"])),
    ("page cpu", lambda p: statistics.median(p["page_cpu"])),
)


def pool(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Several rounds' samples together (per-decision lists joined, per-round figures
    listed)."""
    pooled: dict[str, Any] = {}
    for got in rounds:
        for key, value in got.items():
            if isinstance(value, list):
                pooled.setdefault(key, []).extend(value)
            else:
                pooled.setdefault(key, []).append(value)
    return pooled


async def main_async(rounds: int, matches: int, pages: int) -> None:
    runs: dict[str, list[dict[str, Any]]] = {"none": [], "pages": []}
    loads = [os.getloadavg()[0]]
    with TemporaryDirectory() as folder, Spawner() as spawner:
        async with open_arena_server(
            recorder_factory=record_factory(None, folder), http="127.0.0.1:0"
        ) as server:
            for r in range(rounds):
                order = ("none", "pages") if r % 2 == 0 else ("pages", "none")
                for condition in order:
                    got = await one_round(
                        server, spawner, matches, pages if condition == "pages" else 0
                    )
                    runs[condition].append(got)
                loads.append(os.getloadavg()[0])
    print(f"{matches} concurrent matches a round, {rounds} rounds a condition (interleaved), "
          f"{pages} page(s) on each match in 'pages', records on")  # fmt: skip
    print(f"load average (1 min) over the run: {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'':7}{'decisions':>10}" + "".join(f"{t:>10}" for t, _ in COLUMNS) + f"{'faults':>8}")
    rows = {}
    for condition, rounds_of in runs.items():
        pooled = pool(rounds_of)
        rows[condition] = [f(pooled) * 1e6 for _, f in COLUMNS]
        print(f"{condition:7}{sum(pooled['decisions']):>10}"
              + "".join(f"{x:>8.0f}µs" for x in rows[condition])
              + f"{sum(pooled['faults']):>8}")  # fmt: skip
    ratio = [b / a if a else float("nan") for a, b in zip(rows["none"], rows["pages"], strict=True)]
    print(f"{'ratio':7}{'':>10}" + "".join(f"{x:>9.2f}×" for x in ratio[:-1]))
    # each round's pages/none ratio, with the none round run just before or after it:
    # the median of those is less swayed by the machine's load drifting during the run
    paired = [
        statistics.median(
            f(pool([b])) / f(pool([a])) for a, b in zip(runs["none"], runs["pages"], strict=True)
        )
        for _, f in COLUMNS[:-1]
    ]
    print(f"{'paired':7}{'':>10}" + "".join(f"{x:>9.2f}×" for x in paired))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="rounds per condition")
    parser.add_argument("--matches", type=int, default=4, help="concurrent matches per round")
    parser.add_argument("--pages", type=int, default=1, help="pages open on each match")
    parser.add_argument("--quick", action="store_true", help="1 round of 2 matches")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.matches = 1, 2
    configure_logging("warning", False)
    StepCpu.install()
    trio.run(main_async, args.rounds, args.matches, args.pages)


if __name__ == "__main__":
    main()
