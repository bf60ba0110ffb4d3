"""The limits of one sandboxed bot, their defaults, and how they are applied.

Each limit is applied per bot, for the whole match. On a machine that offers a
delegated cgroup v2 with the ``memory`` and ``pids`` controllers they would hold for the
sandbox as a whole; this module applies what every Linux offers, rlimits (set by
util-linux ``prlimit`` inside the sandbox, so that they bind the bot and not the
launcher), and says so in :meth:`SandboxLimits.describe`, which goes to the head of the
seat log:

- memory: ``RLIMIT_DATA`` (heap and private writable mappings, per process). Not
  ``RLIMIT_AS``: Node's V8 reserves gigabytes of address space it never touches and
  does not even start under a 512 MB ``RLIMIT_AS``.
- CPU seconds: for the sandbox as a whole, summed over its processes by the launcher
  every half second (``watch.py``); and ``RLIMIT_CPU`` per process (SIGXCPU at the
  limit, SIGKILL a second later), which acts at once.
- processes: ``RLIMIT_NPROC`` (threads count too). The kernel does not apply it to root,
  so a referee running as root runs the bot as an unused uid (see ``bwrap.py``). The
  launcher also counts them (``watch.py``) and stops a sandbox that holds them all for
  a second: a runtime refused a thread may hang rather than die.
- open files: ``RLIMIT_NOFILE``.
- output: bytes written to stdout and stderr, counted by the launcher, which copies them
  to the seat log and stops the bot at the limit (see ``run.py``).
- ``/tmp``: a private tmpfs of bounded size.
"""

from __future__ import annotations

import dataclasses
import re

MB = 1024 * 1024
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": MB, "g": 1024 * MB}


def parse_size(text: str) -> int:
    """Bytes of ``512M``, ``2G``, ``100k``, ``1.5MB`` or a plain number of bytes.

    Raises:
        ValueError: not a size.
    """
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(f"not a size: {text!r} (examples: 512M, 2G, 100k)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def format_size(n: int) -> str:
    for unit, size in (("G", 1024 * MB), ("M", MB), ("k", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}B"
    if n >= MB:
        return f"{n / MB:.1f} MB"
    return f"{n} bytes"


@dataclasses.dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed bot may use in one match (picklable: it travels in a job)."""

    cpu_seconds: int = 600
    memory_bytes: int = 512 * MB
    processes: int = 64
    open_files: int = 256
    output_bytes: int = 10 * MB
    tmp_bytes: int = 64 * MB
    read_only: tuple[str, ...] = ()  # more host paths the bot may read (same path inside)

    def check(self) -> None:
        """Raises ``ValueError`` for a limit no bot could live with."""
        if self.cpu_seconds < 1:
            raise ValueError("--sandbox-cpu must be at least 1 second")
        if self.memory_bytes < 16 * MB:
            raise ValueError("--sandbox-memory must be at least 16M")
        if self.processes < 1 or self.open_files < 16:
            raise ValueError("--sandbox-processes must be >= 1 and --sandbox-files >= 16")
        if self.output_bytes < 1024 or self.tmp_bytes < 1024 * 1024:
            raise ValueError("--sandbox-output must be >= 1k and --sandbox-tmp >= 1M")

    def prlimit_args(self) -> list[str]:
        """util-linux ``prlimit`` options (soft:hard): the bot's rlimits."""
        return [
            f"--data={self.memory_bytes}",
            f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}",
            f"--nproc={self.processes}",
            f"--nofile={self.open_files}",
            "--core=0",  # a crash leaves no core file behind (and /tmp is small anyway)
        ]

    def describe(self) -> str:
        """One line: every limit and the mechanism that enforces it."""
        return (
            f"memory {format_size(self.memory_bytes)} per process (rlimit DATA); "
            f"CPU {self.cpu_seconds} s (all processes together, counted by arena; "
            "rlimit CPU per process); "
            f"processes+threads {self.processes} (rlimit NPROC); "
            f"open files {self.open_files} (rlimit NOFILE); "
            f"output {format_size(self.output_bytes)} (counted by arena); "
            f"/tmp {format_size(self.tmp_bytes)} (tmpfs)"
        )
