"""Where a thinking bot's charged time goes under load: one decision, six timestamps.

A load level as ``bench/remote.py``'s (N matches of zero-think fallback bots in two client
processes — Python, or ``--bot cpp`` — plus 8 probe matches whose bots think 5 ms in a
third), with every probe
decision timestamped on one clock (``perf_counter``: CLOCK_MONOTONIC, shared by the
processes of one machine):

  a  the request handed to gRPC for writing (the edge clock's start, ``SeatWire.encode``)
  c  the bot's read returned            d  the bot's think ended (its 5 ms sleep)
  e  the bot's write returned           f  the server's read returned (``SeatWire.answer``)
  g  the referee had the answer (``RemoteSeat.ask`` returned on the trio thread)

plus the arrival bound of :mod:`arena.server.loop_clock` taken at ``f``. Prints p50, p90,
p99 and max of each gap; the bot's own time (c→e); what it would be charged with the
clock read at ``f`` (the code before loop_clock: f − a), with the loop's bound alone (the
bound − a: before receive_clock) and what it is charged (the earlier of that bound and the
kernel's receive time on its connection, :mod:`arena.server.receive_clock`; or the trio
side's time if smaller), each against its own time, so the three are compared on the
very same decisions. Then each of the server's threads' seconds on a
CPU and waiting for one (/proc schedstat). The probes are instrumented by wrapping the
server's methods in this process (arena's code is not changed); the bots log their side
(``fallback_bot.py --trace``).

    .venv/bin/python bench/clock_parts.py --levels 50 250
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from remote_kit import BOT, Spawner, die_with_parent
from remote_level import BOTS, PROBES, THINK_MS, bot_argv

from arena.cli.logs import configure_logging
from arena.referee import TimeControl
from arena.rules import RuleSet
from arena.server.app import open_arena_server
from arena.server.host import MatchSpec
from arena.server.limits import Limits
from arena.server.remote import RemoteSeat
from arena.server.traffic import Ask
from arena.server.wire import EventCaches, SeatWire

Key = tuple[str, int]  # (match id, seq)


@dataclasses.dataclass
class Marks:
    """The server's timestamps per probe decision."""

    a: dict[Key, float] = dataclasses.field(default_factory=dict)
    f: dict[Key, float] = dataclasses.field(default_factory=dict)
    bound: dict[Key, float] = dataclasses.field(default_factory=dict)  # loop_clock's arrival
    g: dict[Key, float] = dataclasses.field(default_factory=dict)
    charged: dict[Key, float] = dataclasses.field(default_factory=dict)
    match_of: dict[int, str] = dataclasses.field(default_factory=dict)  # id(cache) → match


MARKS = Marks()


def instrument() -> None:
    """Wrap the server's measuring points to copy their timestamps into :data:`MARKS`."""
    of, encode, answer = EventCaches.of, SeatWire.encode, SeatWire.answer
    ask = RemoteSeat.ask

    def of_(self: EventCaches, match_id: str) -> Any:
        cache = of(self, match_id)
        MARKS.match_of[id(cache)] = match_id
        return cache

    def encode_(self: SeatWire, item: Any) -> Any:
        out = encode(self, item)
        if isinstance(item, Ask):
            MARKS.a[(MARKS.match_of[id(self.cache)], item.seq)] = self.sent_at
        return out

    def answer_(self: SeatWire, msg: Any) -> Any:
        read = time.perf_counter()
        if msg.WhichOneof("kind") == "action":
            key = (MARKS.match_of[id(self.cache)], msg.action.seq)
            MARKS.f[key] = read
            MARKS.bound[key] = self.clock.arrived() if self.clock is not None else read
        return answer(self, msg)

    async def ask_(self: RemoteSeat, seq: int, *args: Any) -> Any:
        out = await ask(self, seq, *args)
        MARKS.g[(self.match_id, seq)] = time.perf_counter()
        if self.answered_in is not None and self.answered_in[0] == seq:
            MARKS.charged[(self.match_id, seq)] = self.answered_in[1]
        return out

    EventCaches.of = of_  # type: ignore[method-assign]
    SeatWire.encode = encode_  # type: ignore[method-assign]
    SeatWire.answer = answer_  # type: ignore[method-assign]
    RemoteSeat.ask = ask_  # type: ignore[method-assign]


def thread_waits() -> dict[str, tuple[float, float]]:
    """Each thread of this process: (s on a CPU, s runnable but waiting) so far."""
    out = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            run, wait, _ = (task / "schedstat").read_text().split()
        except OSError:
            continue
        out[f"{task.name}:{name}"] = (int(run) / 1e9, int(wait) / 1e9)
    return out


async def level(n: int, spawner: Spawner, trace: Path, bot: str) -> dict[str, list[float]]:
    """Run one level; each probe decision's gaps (s), by name."""
    rules = RuleSet.from_mapping({"deals": 1})
    tc = TimeControl(decision_ms=5000, bank_ms=30_000, grace_ms=10_000)
    limits = dataclasses.replace(Limits(), matches_per_organiser=n + PROBES)
    limits = dataclasses.replace(limits, matches_total=max(limits.matches_total, n + PROBES))
    global MARKS
    MARKS = Marks()
    async with open_arena_server(limits=limits) as server:
        sched0 = thread_waits()
        specs = [
            MatchSpec(rules=rules, seed=1000 + i, time_control=tc, connect_timeout=120)
            for i in range(n + PROBES)
        ]
        hosted = [server.host.create(spec) for spec in specs]
        loaders, probes = hosted[:n], hosted[n:]
        argv = [sys.executable, str(BOT), "--server", server.target, "--tokens-file", "-"]
        procs = [
            spawner.spawn(
                bot_argv(bot, server.target),
                stdin="\n".join(t for h in loaders[k::2] for t in h.tokens if t) + "\n",
            )
            for k in range(2)
        ]
        thinkers = "\n".join(t for h in probes for t in h.tokens if t)
        think = ["--think-ms", str(THINK_MS), "--trace", str(trace)]
        procs.append(spawner.spawn([*argv, *think], stdin=thinkers))
        with trio.move_on_after(180):
            for h in hosted:
                await h.done.wait()
        sched1 = thread_waits()
        waits = sorted(
            (
                (sched1[k][1] - v[1], sched1[k][0] - v[0], k)
                for k, v in sched0.items()
                if k in sched1
            ),
            reverse=True,
        )
        print(
            "server threads, s run / s waiting for a CPU: "
            + ", ".join(f"{k.split(':')[1]} {r:.1f}/{w:.1f}" for w, r, k in waits[:8])
        )
        await spawner.wait_all(procs, timeout=60)
        match_of_token = {t: h.id for h in probes for t in h.tokens if t}
    gaps: dict[str, list[float]] = {k: [] for k in GAPS}
    for token, seq, c, d, e in json.loads(trace.read_text()):
        key = (match_of_token[token], seq)
        m = MARKS
        if not all(key in x for x in (m.a, m.f, m.g, m.bound, m.charged)):
            continue
        a, f, g = m.a[key], m.f[key], m.g[key]
        row = {
            "a→c to bot": c - a,
            "c→d think": d - c,
            "d→e bot write": e - d,
            "e→f to server": f - e,
            "f→g to referee": g - f,
            "f − arrival bound": f - m.bound[key],
            "own (c→e)": e - c,
            "charged, read": f - a,
            "charged, loop": max(m.bound[key] - a, 0.0),
            "charged": m.charged[key],
            "read − own": f - a - (e - c),
            "loop − own": max(m.bound[key] - a, 0.0) - (e - c),
            "charged − own": m.charged[key] - (e - c),
        }
        for name, value in row.items():
            gaps[name].append(value)
    return gaps


GAPS = (
    "a→c to bot",
    "c→d think",
    "d→e bot write",
    "e→f to server",
    "f→g to referee",
    "f − arrival bound",
    "own (c→e)",
    "charged, read",
    "charged, loop",
    "charged",
    "read − own",
    "loop − own",
    "charged − own",
)


def show(n: int, gaps: dict[str, list[float]]) -> None:
    count = len(gaps["own (c→e)"])
    print(f"\n{n} matches (+{PROBES} probe matches, {count} probe decisions), ms")
    print(f"  {'gap':<18}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}")
    for name in GAPS:
        xs = sorted(gaps[name])
        if not xs:
            continue
        q = [xs[min(len(xs) - 1, int(len(xs) * p))] for p in (0.5, 0.9, 0.99)]
        print(f"  {name:<18}" + "".join(f"{x * 1e3:>8.1f}" for x in (*q, xs[-1])))
    order = sorted(range(count), key=lambda i: gaps["charged, read"][i])[-5:]
    print(
        "  the 5 slowest reads: "
        + "; ".join("/".join(f"{gaps[k][i] * 1e3:.0f}" for k in GAPS[:6]) for i in order)
        + "  (a→c/c→d/d→e/e→f/f→g/f−bound)"
    )
    own = max(gaps["own (c→e)"], default=0.0)
    for how in ("charged, read", "charged, loop", "charged"):
        most = max(gaps[how], default=0.0)
        print(f"  max {how} − max own: {(most - own) * 1e3:.1f} ms")


async def main(levels: list[int], bot: str) -> None:
    print(f"load average before: {load()}")
    instrument()
    with Spawner() as spawner, tempfile.TemporaryDirectory() as tmp:
        for n in levels:
            show(n, await level(n, spawner, Path(tmp) / f"trace{n}.json", bot))
    print(f"load average after: {load()}")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    configure_logging("error")
    die_with_parent()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="*", default=[50, 250], help="50 250")
    parser.add_argument(
        "--bot",
        choices=BOTS,
        default="python",
        help="the load's bots: fallback_bot.py, or cpp (bench/bots/cpp/many: a thread per "
        "seat, as bench/remote.py --bot cpp); the probes are Python thinkers either way",
    )
    args = parser.parse_args()
    trio.run(main, args.levels, args.bot)
