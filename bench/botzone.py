"""Per-decision latency of Botzone bots behind ``botzone:`` seats: default mode against
keep-running, in one run.

One ``arena match --rules botzone`` per seed (one deal each) seats the same Python
Botzone bot twice: ``tests/botzone/bz_default.py`` (a fresh process per Botzone turn,
fed the whole game) at seat 0 and ``tests/botzone/bz_keep.py`` (keep-running: one
process per deal, one request line per turn) at seat 2, with built-in bots at seats 1
and 3. The bots share their logic (``bzkit``, importing arena's rules library on the
first turn that must choose cards), so the difference is the process mode. The
latencies are the referee's own (request sent → answer received, from the records),
by decision kind; a default-mode PLAY decision that comes first after the deal also
replays the deal requests arena did not ask about (see docs/botzone.md).

    .venv/bin/python bench/botzone.py             # 3 deals, bots with site-packages
    .venv/bin/python bench/botzone.py --seeds 1 --bare  # bots under `python -S`

Numbers are noisy on a shared 2-core machine: compare the two seats within one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.records import read_record

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "botzone"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="matches (one deal each)")
    parser.add_argument("--bare", action="store_true", help="run the bots with python -S")
    args = parser.parse_args()
    python = [sys.executable, "-S"] if args.bare else [sys.executable]
    seats = {0: "default", 2: "keep-running"}
    samples: dict[tuple[str, str], list[float]] = {}
    started = time.perf_counter()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, args.seeds + 1):
            record = Path(tmp) / f"m{seed}.jsonl"
            bots = [
                f"botzone:{' '.join(python)} {BOTS / 'bz_default.py'}",
                "builtin:greedy",
                f"botzone:{' '.join(python)} {BOTS / 'bz_keep.py'}",
                "builtin:greedy",
            ]
            argv = [
                sys.executable,
                "-m",
                "arena.cli.main",
                "match",
                "--rules",
                "botzone",
                "--seed",
                str(seed),
                "--record",
                str(record),
                "--time-limit",
                "10000",
                "--time-bank",
                "120000",
            ]
            for bot in bots:
                argv += ["--bot", bot]
            subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
            for answer in read_record(record).answers():
                mode = seats.get(answer.seat)
                if mode is not None:
                    if answer.verdict != "accepted":
                        print(f"fault: seat {answer.seat} {answer.fault_reason}")
                    kind = answer.kind.value
                    samples.setdefault((mode, kind), []).append(answer.latency_ms)
                    samples.setdefault((mode, "all"), []).append(answer.latency_ms)
    print(f"{'mode':<14}{'kind':<6}{'n':>5}{'p50 ms':>10}{'p90 ms':>10}{'max ms':>10}")
    for (mode, kind), values in sorted(samples.items()):
        values.sort()
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        print(
            f"{mode:<14}{kind:<6}{len(values):>5}{statistics.median(values):>10.1f}"
            f"{p90:>10.1f}{values[-1]:>10.1f}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}; {time.perf_counter() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
