"""The CPU time of a sandbox as a whole: every process in it, summed, read from /proc.

``RLIMIT_CPU`` binds each process on its own; a bot that spreads its work over children
would get up to ``processes`` times its CPU seconds. So the launcher also sums the CPU
time of the whole process tree under bubblewrap (each live process's own time plus
that of the children it has reaped, which is how the kernel counts) every half second,
and stops the sandbox when the total passes the limit.
"""

from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


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
    ticks = 0
    for p in tree(pid):
        stat = _read(Path(f"/proc/{p}/stat"))
        if not stat:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is fields[0]
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks / TICKS


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
