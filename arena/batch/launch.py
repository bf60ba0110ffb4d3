"""Starting one bot command as a process: its environment, its Python, its seat log.

Every command that runs bot processes (``match``, ``batch``, ``tournament``,
``check-bot``; sandboxed seats wrap the same command) starts them here, so a bot sees
the same ``ARENA_*`` variables and the same ``python`` everywhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import trio

from arena import botzone


def seat_log(record: str | None, match_id: str, seat: int, folder: Path | None = None) -> Path:
    """Where a command seat's output goes: beside the record and named after it
    (``runs/a.jsonl`` → ``runs/a.seat1.log``), else ``records/<match id>.seat1.log``
    (``hosted.record`` is only known once the match starts, so it is not used here)."""
    if folder is None and record:
        path = Path(record)
        return path.with_name(f"{path.name.removesuffix('.jsonl')}.seat{seat}.log")
    return (folder or Path("records")) / f"{match_id}.seat{seat}.log"


async def start_bot(cmd: str, target: str, token: str, seat: int, out: IO[bytes]) -> Any:
    """Start one bot command with ``ARENA_SERVER``, ``ARENA_TOKEN`` and ``ARENA_SEAT`` in its
    environment, its output going to ``out``; returns the ``trio.Process``.

    Raises:
        OSError: the command could not be started (a note is written to ``out`` first).
    """
    env = {**os.environ, "ARENA_SERVER": target, "ARENA_TOKEN": token, "ARENA_SEAT": str(seat)}
    cmd = botzone.seat_command(cmd) if botzone.is_botzone(cmd) else cmd  # docs/botzone.md
    argv = shlex.split(cmd)
    python = own_python(argv)
    if python is not None:
        out.write(
            f"arena: running {argv[0]!r} as {python} (arena's own Python, which has grpc "
            "and arena installed); give a path such as /usr/bin/python3 for another\n".encode()
        )
        out.flush()
        argv = [python, *argv[1:]]
    try:
        return await trio.lowlevel.open_process(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    except OSError as exc:
        out.write(f"arena: could not start {cmd!r}: {exc}\n".encode())
        raise


def own_python(argv: Sequence[str]) -> str | None:
    """The Python running arena when a bot command starts with a bare ``python`` or
    ``python3`` and arena runs from a virtual environment (``.venv/bin/arena``): the
    ``python`` on the PATH is then most likely another one, without grpc, and the bot
    would die of ``ModuleNotFoundError``. ``None`` to run the command as written."""
    if not argv or argv[0] not in ("python", "python3") or sys.prefix == sys.base_prefix:
        return None
    found = shutil.which(argv[0])
    if found and os.path.abspath(found) == os.path.abspath(sys.executable):  # venv active
        return None
    return sys.executable
