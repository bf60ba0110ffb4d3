"""A serving process keeps its two Python threads on one CPU.

Why (issue 20; docs/architecture.md, "One CPU for the two Python threads"): a server
process runs the referee on trio's thread and gRPC on an asyncio thread, and both take
turns at one GIL. At load both always have work, and every system call that lets go of
the GIL hands it to the other thread. On two CPUs each hand-over wakes a thread on the
other CPU and waits for it there; on one CPU it is an ordinary switch. Measured at 250
concurrent matches on a 2-core machine (``bench/remote.py --only b --levels 250 --bot
cpp``): 1,940–2,027 decisions/s with the two threads on one CPU against 1,150–1,258 left
to the scheduler, the server's CPU per decision 517–536 µs against 763–845, the bots
(unpinned) free to use every CPU. The process uses no more than one CPU of Python
anyway; gRPC's own threads (in C, without the GIL) stay wherever the scheduler puts them.

Which CPU: the ``slot``-th of those the process may use (``sched_getaffinity``: a
container's or ``taskset``'s set is respected), so that worker ``i`` of ``arena serve
--workers N`` gets a CPU of its own while N ≤ the CPUs. Threads the two start later
(trio's worker threads, any gRPC makes then) inherit the CPU, as Linux does; they wait on
I/O. Where the platform has no affinity calls (macOS, Windows), nothing is done.
"""

from __future__ import annotations

import os
import threading

import structlog

log = structlog.get_logger("arena.server")

AUTO = "auto"
OFF = "off"


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on, in order (empty: no affinity calls here)."""
    if not hasattr(os, "sched_getaffinity"):
        return []
    return sorted(os.sched_getaffinity(0))


def cpu_for(setting: str, slot: int = 0) -> int | None:
    """The CPU for a process with ``setting`` (``auto``, ``off`` or a CPU number) in
    ``slot`` (worker index; 0 for a lone server); None: leave the threads alone.
    Raises ValueError for a number this process may not use."""
    cpus = allowed_cpus()
    if setting == OFF or not cpus:
        return None
    cpu = cpus[slot % len(cpus)] if setting == AUTO else int(setting)
    if cpu not in cpus:
        shown = ",".join(map(str, cpus))
        raise ValueError(f"CPU {cpu} is not one this process may use ({shown})")
    return cpu if len(cpus) > 1 else None  # one CPU: nothing to choose


def keep_on_cpu(cpu: int | None, *threads: threading.Thread) -> bool:
    """Put the calling thread and ``threads`` on ``cpu`` (None: nothing). ``False``: the
    system refused (the CPU went offline, a container changed its set); the threads are
    then left where they were, with one warning."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return False
    ids = [threading.get_native_id()] + [t.native_id for t in threads if t.native_id]
    try:
        for native_id in ids:
            os.sched_setaffinity(native_id, {cpu})
    except OSError as exc:
        log.warning("cpu_pinning_failed", cpu=cpu, error=str(exc))
        return False
    log.info("threads_pinned", cpu=cpu, threads=len(ids))
    return True


def parse_setting(text: str) -> str:
    """``--cpu-pinning``'s value, checked (for argparse: ValueError is a usage error)."""
    text = text.strip().lower()
    if text in (AUTO, OFF) or (text.isdigit() and len(text) < 5):
        return text
    raise ValueError(f"{text!r}: give auto, off or a CPU number")


__all__ = ["AUTO", "OFF", "allowed_cpus", "cpu_for", "keep_on_cpu", "parse_setting"]
