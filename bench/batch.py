"""Batch throughput: matches/s with one worker and with two, side by side in one run.

    .venv/bin/python bench/batch.py [--matches N] [--deals K] [--rounds R]

Built-in bots (in-process seats, no network), the same jobs for each worker count,
alternated ``--rounds`` times so that machine noise hits both alike; then one small
batch of command bots (subprocesses over gRPC). Every record is verified.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.batch import BotSpec, MatchJob, run_jobs
from arena.cli.logs import configure_logging
from arena.records import read_record, verify

ROOT = Path(__file__).resolve().parent.parent


def quiet() -> None:
    configure_logging("error")


def jobs(n: int, deals: int, out: Path, bots: tuple[str, ...]) -> list[MatchJob]:
    specs = tuple(BotSpec(b, b) for b in bots)
    return [
        MatchJob(i, 1000 + i, specs, {"deals": deals}, record=str(out / f"m{i}.jsonl"))  # type: ignore[arg-type]
        for i in range(n)
    ]


def timed(batch: list[MatchJob], parallel: int) -> tuple[float, int]:
    started = time.perf_counter()
    results = run_jobs(batch, parallel, lambda _: None, initializer=quiet)
    elapsed = time.perf_counter() - started
    assert all(r.state == "finished" for r in results), [r.error for r in results]
    return elapsed, sum(r.decisions for r in results)


def _spin(n: int) -> float:
    started = time.perf_counter()
    x = 0
    for i in range(n):
        x += i
    return time.perf_counter() - started


def machine_ceiling(n: int = 8_000_000) -> float:
    """What two processes get over one on this machine for pure Python work (the
    cores may be shared): the best a batch can hope for."""
    import concurrent.futures
    import multiprocessing

    one = _spin(n)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        list(pool.map(_spin, [1000, 1000]))  # start the workers first
        started = time.perf_counter()
        list(pool.map(_spin, [n, n]))
        both = time.perf_counter() - started
    return 2 * one / both


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=48)
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    quiet()
    builtin = ("builtin:greedy", "builtin:random") * 2
    rates: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for _ in range(args.rounds):
            for parallel in (1, 2):
                elapsed, _ = timed(jobs(args.matches, args.deals, out, builtin), parallel)
                rates[parallel].append(args.matches / elapsed)
        records = sorted(out.glob("m*.jsonl"))
        verified = sum(verify(read_record(p)).ok for p in records)
        bot = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
        remote = jobs(4, 2, out / "remote", (bot, "builtin:random", bot, "builtin:greedy"))
        r_elapsed, r_decisions = timed(remote, 2)
        r_ok = sum(verify(read_record(j.record or "")).ok for j in remote)
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    ceiling = machine_ceiling()
    print(
        f"batch: {args.matches} matches of {args.deals} deals, built-in greedy/random seats, "
        f"{args.rounds} alternating rounds"
    )
    print(f"  --parallel 1   {one:6.2f} matches/s")
    print(f"  --parallel 2   {two:6.2f} matches/s   speed-up {two / one:.2f}×")
    print(
        f"  this machine's own ceiling for two processes of pure Python: {ceiling:.2f}× "
        f"(so the batch reaches {two / one / ceiling:.0%} of it; worker start-up included)"
    )
    print(f"  records verified: {verified}/{len(records)}")
    print(
        f"remote: 4 matches of 2 deals, 2 sample-bot subprocesses each, --parallel 2: "
        f"{4 / r_elapsed:.2f} matches/s, {r_decisions / r_elapsed:.0f} decisions/s, "
        f"records verified {r_ok}/4"
    )


if __name__ == "__main__":
    main()
