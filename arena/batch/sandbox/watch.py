"""What a sandbox as a whole uses, read from /proc: its CPU time and its processes.

``RLIMIT_CPU`` binds each process on its own; a bot that spreads its work over children
would get up to ``processes`` times its CPU seconds. So the launcher also sums the CPU
time of the whole process tree under bubblewrap (each live process's own time plus
that of the children it has reaped, which is how the kernel counts) every half second,
and stops the sandbox when the total passes the limit.

``RLIMIT_NPROC`` makes the kernel refuse a process or thread beyond the limit, and a
bot refused one usually dies of it (``BlockingIOError``). But not always: a runtime
that cannot start its own thread may hang instead — gRPC's thread pool does, in a
Python bot that forks, now and then — and a hung bot would only time out. So the
launcher also counts the tasks (processes and threads) the limit counts, the same
readings, and stops a sandbox found holding all of them, or refused and then timing
out (``run.py``).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclasses.dataclass(frozen=True)
class Usage:
    """One reading of a sandbox."""

    cpu_seconds: float  # user + system, of every process, reaped children included
    tasks: int  # processes and threads that RLIMIT_NPROC counts (the bot's uid)


def tree(pid: int) -> list[int]:
    """``pid`` and every live descendant (``/proc/PID/task/TID/children``)."""
    found, todo = [pid], [pid]
    while todo:
        parent = todo.pop()
        for task in _list(Path(f"/proc/{parent}/task")):
            for child in _read(Path(f"/proc/{parent}/task/{task}/children")).split():
                found.append(int(child))
                todo.append(int(child))
    return found


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of ``pid``'s tree so far, reaped children included."""
    return usage(pid).cpu_seconds


def usage(pid: int) -> Usage:
    """The CPU time of bubblewrap ``pid``'s tree, and the tasks in it that the process
    limit counts: every thread of every process under bubblewrap, but for those of root
    when arena runs as root (bubblewrap's init; the bot runs as its own uid, see
    ``bwrap.py``): the kernel counts the tasks of the bot's real uid."""
    ticks = tasks = 0
    root = os.geteuid() == 0
    for p in tree(pid):
        stat = _read(Path(f"/proc/{p}/stat"))
        if not stat:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is fields[0]
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        if p != pid and not (root and _real_uid(p) == 0):
            tasks += int(fields[17])  # num_threads
    return Usage(ticks / TICKS, tasks)


def _real_uid(pid: int) -> int | None:
    for line in _read(Path(f"/proc/{pid}/status")).splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    return None  # gone


def _list(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:  # the process is gone
        return []


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
