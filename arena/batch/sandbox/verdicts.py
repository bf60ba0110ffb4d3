"""Why a sandboxed bot's process ended before its match did: a verdict people recognise.

Botzone says MLE, TLE, RE; we say ``memory_limit``, ``cpu_limit``, ``output_limit``,
``process_limit`` and ``crashed`` (with the exit status or the signal), and the
referee records it as the seat's fault (:class:`~arena.referee.FaultKind`).

Under rlimits the kernel does not kill a process that asks for more memory or another
process: the allocation or the fork fails and the bot dies of it its own way (Python's
``MemoryError``, C++'s ``std::bad_alloc``, V8's "heap out of memory"; ``BlockingIOError``,
"can't start new thread"). So the verdict reads the end of the bot's output for those
words; a bot can only fake its own verdict that way, never another's.
"""

from __future__ import annotations

import dataclasses
import signal

from arena.batch.sandbox.limits import SandboxLimits, format_size
from arena.referee import FaultKind

MEMORY_WORDS = (
    "MemoryError",
    "bad_alloc",
    "out of memory",
    "Cannot allocate memory",
    "allocation failed",
    "memory allocation of",  # Rust
)
PROCESS_WORDS = (
    "BlockingIOError",
    "Resource temporarily unavailable",
    "can't start new thread",
    "EAGAIN",
    "fork: retry",
)


@dataclasses.dataclass(frozen=True)
class Ending:
    """A verdict on a process that ended during its match."""

    kind: FaultKind
    reason: str


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def judge(
    status: int,
    limits: SandboxLimits,
    *,
    output_stopped: bool = False,
    cpu_seconds: float = 0.0,
    tail: str = "",
    at_process_limit: bool = False,
) -> Ending:
    """The verdict on a sandboxed bot that ended before its match did.

    ``status`` is bubblewrap's exit status, which is the bot's (``128 + N`` when the bot
    was killed by signal N) or ``-N`` when bubblewrap itself was killed by signal N (as
    the launcher kills it at the output limit). ``cpu_seconds`` is the CPU time of the
    whole sandbox; ``tail`` the end of the bot's output; ``at_process_limit`` says the
    launcher saw it hold every process its limit allows (a runtime refused a thread may
    abort with words of its own, or none).
    """
    if output_stopped:
        return Ending(
            FaultKind.OUTPUT_LIMIT,
            f"wrote more than {format_size(limits.output_bytes)} to stdout/stderr: stopped",
        )
    sig = -status if status < 0 else status - 128 if status > 128 else 0
    if sig == signal.SIGXCPU:
        return Ending(
            FaultKind.CPU_LIMIT,
            f"killed by SIGXCPU: a process used its {limits.cpu_seconds} s of CPU",
        )
    if sig == signal.SIGKILL and cpu_seconds >= limits.cpu_seconds:
        spent = f"{cpu_seconds:.1f} s of CPU (limit {limits.cpu_seconds} s)"
        return Ending(FaultKind.CPU_LIMIT, f"killed by SIGKILL after {spent}")
    how = f"killed by {signal_name(sig)}" if sig else f"exited with status {status}"
    memory = format_size(limits.memory_bytes)
    if any(w in tail for w in MEMORY_WORDS):
        return Ending(FaultKind.MEMORY_LIMIT, f"ran out of memory (limit {memory}): {how}")
    if at_process_limit or any(w in tail for w in PROCESS_WORDS):
        return Ending(
            FaultKind.PROCESS_LIMIT,
            f"refused a new process or thread (limit {limits.processes}): {how}",
        )
    if status in (126, 127):  # what prlimit (like a shell) says when it cannot exec
        return Ending(
            FaultKind.CRASHED,
            f"{how}: the command could not be run in the sandbox (not found, or not "
            "readable by it: see --sandbox-ro in docs/sandbox.md)",
        )
    if sig == signal.SIGKILL:  # what an out-of-memory killer does (a cgroup's, the kernel's)
        return Ending(FaultKind.CRASHED, f"{how} (memory limit {memory}?)")
    return Ending(FaultKind.CRASHED, f"{how} before the match ended")
