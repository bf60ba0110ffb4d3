"""A sandboxed bot in a hosted match: the referee's Unix socket, and the seat's process.

The seat's verdict reaches the referee through
:meth:`arena.server.remote.RemoteSeat.process_ended`, so a bot killed by a limit gets a
fault of that name on its next (or pending) decision, without a wait for a reconnection
that cannot come.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import trio

from arena import botzone
from arena.batch.sandbox.bwrap import SandboxUnavailable
from arena.batch.sandbox.limits import SandboxLimits
from arena.batch.sandbox.run import SandboxedProcess, run_sandboxed
from arena.batch.sandbox.verdicts import Ending
from arena.batch.startup import StartupWatch
from arena.server import HostedMatch


@contextlib.contextmanager
def referee_socket() -> Iterator[str]:
    """A path for the referee's Unix socket, in a fresh folder only its owner can open
    (the sandbox binds the socket itself, never the folder); removed afterwards."""
    folder = tempfile.mkdtemp(prefix="arena-sock-")
    try:
        yield os.path.join(folder, "arena.sock")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def open_socket(path: str) -> None:
    """Let any uid connect (a sandbox run by root uses its own uid); its folder stays
    closed to everyone but the referee's user."""
    os.chmod(path, 0o777)


async def run_sandboxed_seat(
    cmd: str,
    socket: str,
    token: str,
    seat: int,
    log_path: Path,
    hosted: HostedMatch,
    limits: SandboxLimits,
    hidden: Iterable[Path] = (),
    on_end: Callable[[Ending], None] | None = None,
    watch: StartupWatch | None = None,
) -> str | None:
    """Run one seat's bot in the sandbox until the match is over. The log starts with
    the limits that applied. Returns an error if the bot could not be started.
    ``watch`` reports its failure to start, to stay or to connect, as for any bot."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as out:
        out.write(f"arena: sandbox: {limits.describe()}\n".encode())
        out.flush()
        if botzone.is_botzone(cmd):  # the bridge and its bot share the sandbox
            cmd = botzone.seat_command(cmd)
        try:
            process = SandboxedProcess.start(cmd, socket, token, seat, limits, hidden)
        except (OSError, ValueError, SandboxUnavailable) as exc:  # ValueError: bad quoting
            error = f"could not start {cmd!r} in the sandbox: {exc}"
            out.write(f"arena: {error}\n".encode())
            out.flush()
            if watch is not None:
                watch.fail(hosted, seat, cmd, log_path, f"could not start in the sandbox: {exc}")
            return error

        def ended(ending: Ending) -> None:
            remote = hosted.remote(seat)
            if remote is not None:
                remote.process_ended(ending.kind, ending.reason)
            if on_end is not None:
                on_end(ending)

        def timeouts() -> int:
            remote = hosted.remote(seat)
            return remote.timeouts if remote is not None else 0

        process.timeouts = timeouts

        def finished() -> bool:
            remote = hosted.remote(seat)
            return remote is not None and remote.finished

        async with trio.open_nursery() as nursery:
            if watch is not None:
                nursery.start_soon(watch.watch, process, hosted, seat, cmd, log_path)
            await run_sandboxed(process, out, hosted.done, ended, ended=finished)
    return None
