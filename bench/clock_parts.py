"""Where a thinking bot's charged time goes under load: one decision, seven timestamps.

A load level as ``bench/remote.py``'s (N matches of zero-think fallback bots in two client
processes — Python, or ``--bot cpp`` — plus 8 probe matches whose bots think 5 ms in a
third), with every probe
decision timestamped on one clock (``perf_counter``: CLOCK_MONOTONIC, shared by the
processes of one machine):

  a  the request handed to gRPC for writing (the edge clock's start, ``SeatWire.encode``)
  c  the bot's read returned            d  the bot's think ended (its 5 ms sleep)
  e  the bot's write returned           f  the server's read returned (``SeatWire.answer``)
  r  the kernel's receive time on the connection, read at f (``TCP_INFO``, ±1 tick): e→r
     is the bot's side (its gRPC stack putting the answer on the wire, or later data of
     its own: a reply to a ping the server sent after the request, counted apart)
  g  the referee had the answer (``RemoteSeat.ask`` returned on the trio thread)

plus the arrival bound of :mod:`arena.server.loop_clock` taken at ``f``, and the bot's own
kernel's times (``fallback_bot.py --trace``): its request's arrival (before ``c``: the
bot's wait to read it) and its answer's departure, between them all its time on its
machine, against which the charge is set last (to the ticks of both ends). Prints p50, p90,
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
from arena.server import receive_clock
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
    # the kernel's receive time on the connection at the read (None: not known)
    receipt: dict[Key, float | None] = dataclasses.field(default_factory=dict)
    # the server's last data sent on the connection at the read (e.g. a ping after the request)
    sent: dict[Key, float | None] = dataclasses.field(default_factory=dict)
    match_of: dict[int, str] = dataclasses.field(default_factory=dict)  # id(cache) → match


MARKS = Marks()
TICK = receive_clock.measure_jiffy() or 0.0  # s: the kernel's tick, TCP_INFO's unit


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
            at = self.receipt.at() if self.receipt is not None else None
            jiffy = self.receipt._clock.jiffy if self.receipt is not None else None
            MARKS.receipt[key] = None if at is None or jiffy is None else at + jiffy
            MARKS.sent[key] = last_sent(self)
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


def last_sent(wire: SeatWire) -> float | None:
    """When the server last sent data on ``wire``'s connection (perf_counter s, ±1 tick)."""
    fd = getattr(wire.receipt, "_fd", None)
    ages = None if fd is None else receive_clock.data_ages(fd[0])
    return None if ages is None else time.perf_counter() - ages[1] / 1000


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
    gaps: dict[str, list[float]] = {k: [] for k in (*GAPS, "pinged")}
    pings = 0
    missing = 0  # decisions whose connection's receive time was not known (read time used)
    for token, seq, c, d, e, arrived, departed in json.loads(trace.read_text()):
        key = (match_of_token[token], seq)
        m = MARKS
        if not all(key in x for x in (m.a, m.f, m.g, m.bound, m.charged)):
            continue
        if arrived is None or departed is None:  # the bot's kernel times: not known
            arrived, departed = c, e
        a, f, g = m.a[key], m.f[key], m.g[key]
        r = m.receipt.get(key)
        p = m.sent.get(key)
        pinged = p is not None and p - TICK > c  # the server sent more after the bot's read
        pings += pinged
        if r is None:
            missing += 1
            r = f
        row = {
            "a→c to bot": c - a,
            "c→d think": d - c,
            "d→e bot write": e - d,
            "e→f to server": f - e,
            "e→r bot's send": r - e,
            "r→f server's read": f - r,
            "f→g to referee": g - f,
            "f − arrival bound": f - m.bound[key],
            "own (c→e)": e - c,
            "charged, read": f - a,
            "charged, loop": max(m.bound[key] - a, 0.0),
            "charged": m.charged[key],
            "read − own": f - a - (e - c),
            "loop − own": max(m.bound[key] - a, 0.0) - (e - c),
            "charged − own": m.charged[key] - (e - c),
            "bot's read wait": c - arrived,
            "own by its kernel": departed - arrived,
            "charged − that": m.charged[key] - (departed - arrived),
        }
        for name, value in row.items():
            gaps[name].append(value)
        gaps["pinged"].append(float(pinged))
    gaps["no receipt"] = [float(missing)]
    return gaps


GAPS = (
    "a→c to bot",
    "c→d think",
    "d→e bot write",
    "e→f to server",
    "e→r bot's send",
    "r→f server's read",
    "f→g to referee",
    "f − arrival bound",
    "own (c→e)",
    "charged, read",
    "charged, loop",
    "charged",
    "read − own",
    "loop − own",
    "charged − own",
    "bot's read wait",
    "own by its kernel",
    "charged − that",
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
    for worst in ("charged, read", "charged − own"):
        order = sorted(range(count), key=lambda i: gaps[worst][i])[-5:]
        print(
            f"  the 5 largest '{worst}': "
            + "; ".join("/".join(f"{gaps[k][i] * 1e3:.0f}" for k in GAPS[:8]) for i in order)
            + "  (a→c/c→d/d→e/e→f/e→r/r→f/f→g/f−bound)"
        )
    over = [i for i in range(count) if gaps["charged − own"][i] > 0.02]
    print(
        f"  decisions where the server sent data after the bot read its request (a ping?): "
        f"{sum(gaps['pinged']):.0f} of {count}; of the {len(over)} charged over 20 ms beyond "
        f"their own time: {sum(gaps['pinged'][i] for i in over):.0f}"
    )
    print(
        f"  r: the kernel's receive time on the connection at the read (±1 tick); "
        f"not known for {gaps['no receipt'][0]:.0f} decisions (r = f there); "
        f"the tick as the server measured it: {tick()}"
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


def tick() -> str:
    measured = receive_clock._JIFFY[0] if receive_clock._JIFFY else None
    return "not measured" if measured is None else f"{measured * 1e3:g} ms"


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
