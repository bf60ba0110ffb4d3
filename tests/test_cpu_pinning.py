"""``arena serve --cpu-pinning``: a serving process keeps its two Python threads on one CPU.

A real ``arena serve`` (its own process, a loopback port), its threads' CPU sets read
from ``/proc`` as the kernel has them: the referee's (trio, the main thread) and the gRPC
loop's thread share one CPU (at load they hand one GIL back and forth: on two CPUs every
hand-over wakes the other CPU; docs/architecture.md), gRPC's own threads stay free, each
worker of ``--workers 2`` takes its own CPU, the front is left alone, and ``off`` leaves
every thread where the OS puts it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from servekit import Serve, start_serve

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
pytestmark = pytest.mark.skipif(
    len(CPUS) < 2 or not Path("/proc/self/task").is_dir(),
    reason="needs Linux with 2 or more CPUs for this process (one CPU: nothing to pin)",
)


def cpus_of(pid: int) -> dict[int, set[int]]:
    """Each thread of ``pid`` (by its id) and the CPUs it may run on."""
    found: dict[int, set[int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        for line in status.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found[int(task.name)] = parse_list(line.split(":", 1)[1])
    return found


def parse_list(text: str) -> set[int]:
    """``0-2,5`` → {0, 1, 2, 5}."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def listening(serve: Serve) -> None:
    """Wait for the start-up line, printed once the server is set up (after pinning)."""
    deadline = time.monotonic() + 30
    while "Ctrl-C to stop" not in serve.log.read_text():
        assert time.monotonic() < deadline, serve.log.read_text()
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_one_process_keeps_its_two_python_threads_on_one_cpu(tmp_path: Path) -> None:
    serve = start_serve(tmp_path, "--open")
    try:
        listening(serve)
        threads = cpus_of(serve.process.pid)
        alone = [tid for tid, cpus in threads.items() if cpus == {CPUS[0]}]
        assert serve.process.pid in alone, threads  # the main thread: the referee's
        assert len(alone) >= 2, threads  # and the gRPC loop's
        assert any(cpus == set(CPUS) for cpus in threads.values()), threads  # gRPC's own
    finally:
        log = serve.stop()
    assert "threads_pinned" in log, log


def test_off_leaves_every_thread_to_the_os(tmp_path: Path) -> None:
    serve = start_serve(tmp_path, "--open", "--cpu-pinning", "off")
    try:
        listening(serve)
        threads = cpus_of(serve.process.pid)
        assert all(cpus == set(CPUS) for cpus in threads.values()), threads
    finally:
        serve.stop()


def test_a_cpu_number_is_that_cpu(tmp_path: Path) -> None:
    serve = start_serve(tmp_path, "--open", "--cpu-pinning", str(CPUS[-1]))
    try:
        listening(serve)
        assert cpus_of(serve.process.pid)[serve.process.pid] == {CPUS[-1]}
    finally:
        serve.stop()


def test_each_worker_takes_its_own_cpu_and_the_front_none(tmp_path: Path) -> None:
    serve = start_serve(tmp_path, "--open", "--workers", "2")
    try:
        listening(serve)
        workers = children(serve.process.pid)
        assert len(workers) == 2, workers
        deadline = time.monotonic() + 30
        while True:  # each worker pins itself once it listens (the front waits for that)
            mains = [cpus_of(pid).get(pid, set()) for pid in workers]
            if all(len(cpus) == 1 for cpus in mains) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert sorted(min(cpus) for cpus in mains) == CPUS[:2], mains
        assert cpus_of(serve.process.pid)[serve.process.pid] == set(CPUS)  # the front
    finally:
        serve.stop()
