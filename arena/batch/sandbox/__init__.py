"""The sandbox for bot processes (``--sandbox``; docs/sandbox.md).

A competitor's bot command runs in a bubblewrap sandbox: no network (it reaches the
referee through a Unix socket bound into the sandbox), a read-only root holding only the
system folders, the bot's program and its own folder, a small private ``/tmp``, its own
PID namespace, no view of the records or the other seats' logs, gone with the referee;
under limits on memory, CPU seconds, processes, open files and output
(:class:`SandboxLimits`). A bot that ends during its match is judged
(:func:`~arena.batch.sandbox.verdicts.judge`) and the referee records the verdict as its
fault: ``memory_limit``, ``cpu_limit``, ``output_limit``, ``process_limit``, ``crashed``.

- :mod:`.limits`: the limits, their defaults and how each is enforced;
- :mod:`.bwrap`: whether bubblewrap works here, and the command line;
- :mod:`.run`: running one bot in trio (capped output, its end);
- :mod:`.verdicts`: why it ended.
"""

from arena.batch.sandbox.bwrap import SOCKET, SandboxUnavailable, require, unavailable
from arena.batch.sandbox.limits import SandboxLimits, format_size, parse_size
from arena.batch.sandbox.run import SandboxedProcess, run_sandboxed
from arena.batch.sandbox.verdicts import Ending, judge

__all__ = [
    "SOCKET",
    "Ending",
    "SandboxLimits",
    "SandboxUnavailable",
    "SandboxedProcess",
    "format_size",
    "judge",
    "parse_size",
    "require",
    "run_sandboxed",
    "unavailable",
]
