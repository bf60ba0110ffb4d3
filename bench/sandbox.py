"""Per-decision latency of bots in the sandbox (``--sandbox``) against the same bots
without it, measured in one run.

Each round plays the same match twice on a fresh embedded server (``play_hosted``, as
``arena match`` does): once with the four command bots run plainly (TCP on 127.0.0.1),
once with all four in the sandbox (Unix socket, bubblewrap, rlimits, output copied by
the launcher), the order alternating between rounds so that load from elsewhere falls on
both alike. The seats are the Python sample bots, the Node sample bot and the C++ sample
bot where they are installed (``sample_bots/node/node_modules``, ``sample_bots/cpp/bot``
or ``--cpp PATH``; a Python bot takes the seat otherwise). Reported per bot: the
referee's per-decision latency (request sent to answer received) p50/p90/p99 plain and
sandboxed and their ratio, faults, and the wall time from start to the end of the match.

    .venv/bin/python bench/sandbox.py               # ~1 minute
    .venv/bin/python bench/sandbox.py --rounds 2 --deals 1   # quick

Numbers are noisy on a shared 2-core machine: read the ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import trio

from arena.batch.runner import play_hosted
from arena.batch.sandbox import SandboxLimits, unavailable
from arena.cli.logs import configure_logging
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet
from arena.server.host import MatchSpec

ROOT = Path(__file__).resolve().parent.parent


def bots(cpp: str | None) -> list[tuple[str, str]]:
    py = sys.executable
    node = shutil.which("node")
    node_ok = node and (ROOT / "sample_bots/node/node_modules/@grpc/grpc-js").is_dir()
    cpp = cpp or (str(ROOT / "sample_bots/cpp/bot") if (ROOT / "sample_bots/cpp/bot").is_file()
                  else None)  # fmt: skip
    return [
        ("python random", f"{py} {ROOT / 'sample_bots/random_bot.py'} --seed 1"),
        ("node", f"{node} {ROOT / 'sample_bots/node/bot.js'}")
        if node_ok
        else ("python greedy", f"{py} {ROOT / 'sample_bots/greedy_bot.py'}"),
        ("c++", cpp) if cpp else ("python random", f"{py} {ROOT / 'sample_bots/random_bot.py'}"),
        ("python greedy", f"{py} {ROOT / 'sample_bots/greedy_bot.py'}"),
    ]


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--cpp", default=None, help="the C++ sample bot's binary")
    args = parser.parse_args()
    why = unavailable()
    if why:
        print(why, file=sys.stderr)
        return 2
    configure_logging("error")
    seats = bots(args.cpp)
    limits = SandboxLimits(read_only=(str(ROOT / "proto"),))
    lat: dict[tuple[str, bool], list[float]] = {}
    faults: dict[tuple[str, bool], int] = {}
    wall: dict[bool, list[float]] = {False: [], True: []}
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"arena-bench-sandbox-{os.getpid()}"
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for r in range(args.rounds):
        for sandboxed in ((False, True) if r % 2 == 0 else (True, False)):
            spec = MatchSpec(
                rules=RuleSet.from_mapping({"deals": args.deals}),
                seed=r + 1,
                time_control=TimeControl(decision_ms=5000, bank_ms=30000),
                policy=FaultPolicy(max_faults=1000),
                seat_names=tuple(name for name, _ in seats),
                connect_timeout=60,
            )
            mode = {i: limits for i in range(4)} if sandboxed else {}
            started = time.perf_counter()
            record = str(out / f"{r}-{sandboxed}.jsonl")
            play = partial(play_hosted, sandboxed=mode)
            hosted = trio.run(play, spec, [cmd for _, cmd in seats], record)
            wall[sandboxed].append(time.perf_counter() - started)
            referee = hosted.referee
            assert referee is not None, hosted.error
            for seat, (name, _) in enumerate(seats):
                lat.setdefault((name, sandboxed), []).extend(referee.latencies[seat])
                n = sum(1 for f in referee.faults if f.seat == seat)
                faults[(name, sandboxed)] = faults.get((name, sandboxed), 0) + n
    shutil.rmtree(out, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"{args.rounds} rounds x 2 matches of {args.deals} deals; latency in ms "
          "(plain -> sandboxed)")  # fmt: skip
    head = f"{'p50':>17}{'p90':>17}{'p99':>19}{'p50 ratio':>11}{'faults':>9}"
    print(f"{'bot':<15}{'answers':>8}{head}")
    for name in dict.fromkeys(n for n, _ in seats):
        a, b = lat[(name, False)], lat[(name, True)]
        cells = [
            f"{quantile(a, q) * 1000:7.2f} ->{quantile(b, q) * 1000:7.2f}" for q in (0.5, 0.9, 0.99)
        ]
        ratio = quantile(b, 0.5) / quantile(a, 0.5) if quantile(a, 0.5) else 0.0
        f = f"{faults[(name, False)]}/{faults[(name, True)]}"
        print(f"{name:<15}{len(a):>8}{cells[0]:>17}{cells[1]:>17}{cells[2]:>19}{ratio:>10.2f}x"
              f"{f:>9}")  # fmt: skip
    for sandboxed in (False, True):
        print(f"match wall time {'sandboxed' if sandboxed else 'plain    '}: "
              f"median {statistics.median(wall[sandboxed]):.2f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
