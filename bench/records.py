"""Self-play speed with and without a match record being written (docs/records.md).

Plays the same matches (same seeds, same bots) four ways and prints decisions per
second: no recorder; ``NullRecorder``; ``RecordWriter`` to a temporary file (flushed
after every call); and the writer with ``fsync=True``. Then it times reading and
verifying one record. Runs alternate between the ways, best of ``rounds``, so slow
drift on a shared machine hits them all alike. Rates are given both per second of
wall-clock time and per second of this process's CPU time (steadier on a loaded machine;
it leaves out the time spent waiting for the disk, which is what ``fsync`` costs).

    .venv/bin/python bench/records.py [matches] [rounds]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.bots import make_bot
from arena.game import MatchSetup, Recorder, SelfplayStats
from arena.records import NullRecorder, RecordHeader, RecordWriter, SeatRecord, read_record, verify
from arena.referee import play_match
from arena.rules import RuleSet

BOTS = ("random", "greedy", "random", "greedy")


def header(setup: MatchSetup) -> RecordHeader:
    seats = [SeatRecord(f"seat{i}", f"builtin:{name}") for i, name in enumerate(BOTS)]
    return RecordHeader.for_setup(f"bench-{setup.seed}", setup, seats)


def run(matches: int, folder: Path, way: str) -> tuple[float, float, int, int]:
    """Wall and CPU seconds, decisions and record bytes for ``matches`` matches."""
    stats = SelfplayStats()
    size = 0
    elapsed = cpu = 0.0
    for seed in range(matches):
        setup = MatchSetup(RuleSet(), seed)
        bots = [make_bot(n, seed * 4 + s) for s, n in enumerate(BOTS)]
        path = folder / f"{way}-{seed}.jsonl"
        start, start_cpu = time.perf_counter(), time.process_time()
        recorder: Recorder | None = None
        if way == "null":
            recorder = NullRecorder()
        elif way.startswith("writer"):
            recorder = RecordWriter.open(path, header(setup), fsync=way == "writer+fsync",
                                         overwrite=True)  # fmt: skip
        play_match(setup, bots, stats=stats, check=False, recorder=recorder,
                   clock=time.perf_counter if recorder else None)  # fmt: skip
        elapsed += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        if path.exists():
            size += path.stat().st_size
            path.unlink()
    return elapsed, cpu, stats.decisions, size


def best(fn: Callable[[], float], rounds: int) -> float:
    return min(fn() for _ in range(rounds))


def main() -> None:
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    ways = ["none", "null", "writer", "writer+fsync"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results: dict[str, list[tuple[float, float, int, int]]] = {w: [] for w in ways}
        for _ in range(rounds):
            for way in ways:
                results[way].append(run(matches, folder, way))
        print(f"{matches} full matches ({', '.join(BOTS)}), best of {rounds} rounds")
        print(f"  {'recorder':<13} {'decisions/s (wall)':>24} {'decisions/s (CPU)':>24}")
        base_wall = base_cpu = 0.0
        for way in ways:
            wall = min(r[0] for r in results[way])
            cpu = min(r[1] for r in results[way])
            _, _, decisions, size = results[way][0]
            rate_wall, rate_cpu = decisions / wall, decisions / cpu
            base_wall, base_cpu = base_wall or rate_wall, base_cpu or rate_cpu
            extra = f"  {size / matches / 1e6:.2f} MB per record" if size else ""
            print(
                f"  {way:<13} {rate_wall:>16,.0f} ({rate_wall / base_wall:>4.0%}) "
                f"{rate_cpu:>16,.0f} ({rate_cpu / base_cpu:>4.0%}){extra}"
            )
        setup = MatchSetup(RuleSet(), 0)
        path = folder / "one.jsonl"
        with RecordWriter.open(path, header(setup)) as writer:
            play_match(setup, [make_bot(n, s) for s, n in enumerate(BOTS)], recorder=writer)
        lines = len(path.read_bytes().splitlines())
        read_s = best(lambda: _timed(lambda: read_record(path)), rounds)
        record = read_record(path)
        verify_s = best(lambda: _timed(lambda: verify(record)), rounds)
        print(f"  one record of {lines:,} lines: read {read_s * 1000:.0f} ms "
              f"({lines / read_s:,.0f} lines/s), verify {verify_s * 1000:.0f} ms")  # fmt: skip


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
