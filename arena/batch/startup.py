"""Watching a bot process from its start: a bot that cannot start, dies, or never
connects is reported at once, and its seat is given up so its team forfeits.

Without this, ``arena match --bot nosuchbot …`` waited out the connect timeout, played
fallbacks for the dead seat, and reported a *win* for its team. Now the command's
output says within a second or two what happened — the exit status and the last lines
the bot wrote — and where its whole log is; the host stops waiting for the seat
(:meth:`arena.server.host.MatchHost.abandon`) and the command exits non-zero.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from arena.text import printable

TAIL_LINES = 8


@dataclasses.dataclass(frozen=True, slots=True)
class BotFailure:
    """A bot process that failed its seat: never started, ended early, never connected."""

    seat: int
    command: str
    what: str  # "could not start: …", "exited with status 1 before taking its seat", …
    log: str  # the bot's output file
    tail: tuple[str, ...]  # its last lines

    def describe(self) -> str:
        """The lines a person reads: what happened, the bot's last words, where the log is."""
        lines = [f"seat {self.seat}: the bot {printable(self.command, 120)!r} {self.what}"]
        if self.tail:
            lines.append(f"  last lines of its output ({self.log}):")
            lines += [f"  | {line}" for line in self.tail]
        else:
            lines.append(f"  it wrote nothing (log: {self.log})")
        return "\n".join(lines)

    def short(self) -> str:
        """One line, for a summary table."""
        last = f"; last line: {self.tail[-1]}" if self.tail else ""
        return f"seat {self.seat} bot {self.what}{last}"


def tail(path: Path, lines: int = TAIL_LINES) -> tuple[str, ...]:
    """The last non-empty lines of a bot's log, escaped for a terminal."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 16 * 1024))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ()
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    return tuple(printable(line, 200) for line in kept)


def to_stderr(failure: BotFailure) -> None:
    print(f"arena: {failure.describe()}", file=sys.stderr, flush=True)


Report = Callable[[BotFailure], None]


@dataclasses.dataclass
class StartupWatch:
    """What a bot's runner needs to report its failure: the host to tell, where to
    report, and the list the command's summary reads."""

    host: Any  # MatchHost: abandon(match_id, seat, why)
    connect_timeout: float
    report: Report = to_stderr
    failures: list[BotFailure] = dataclasses.field(default_factory=list)

    def fail(self, hosted: Any, seat: int, command: str, log: Path, what: str) -> None:
        if any(f.seat == seat for f in self.failures):  # one report per seat
            return
        failure = BotFailure(seat, command, what, str(log), tail(log))
        self.failures.append(failure)
        self.report(failure)
        remote = hosted.remote(seat)
        if remote is not None and not remote.ever_connected.is_set():
            self.host.abandon(hosted.id, seat, what)

    async def watch(self, process: Any, hosted: Any, seat: int, command: str, log: Path) -> None:
        """Until the match is over: report the process's early exit, or its failure to
        connect within the connect timeout."""
        remote = hosted.remote(seat)
        async with trio.open_nursery() as nursery:
            started = trio.current_time()

            def check_connected() -> None:
                if (
                    remote is None
                    or remote.ever_connected.is_set()
                    or process.returncode is not None
                ):
                    return
                waited = trio.current_time() - started
                what = (
                    f"did not connect within {self.connect_timeout:g} s"
                    if waited >= self.connect_timeout - 0.5
                    else f"had not connected when the match ended ({waited:.1f} s)"
                )
                self.fail(hosted, seat, command, log, what)

            async def never_connected() -> None:
                if remote is None:
                    return
                with trio.move_on_after(self.connect_timeout):
                    await remote.ever_connected.wait()
                check_connected()

            async def exited() -> None:
                await process.wait()
                if hosted.done.is_set() or (remote is not None and remote.finished):
                    return
                seated = remote is not None and remote.ever_connected.is_set()
                when = "during the match" if seated else "before taking its seat"
                self.fail(
                    hosted, seat, command, log, f"exited with status {process.returncode} {when}"
                )

            async def over() -> None:
                await hosted.done.wait()
                check_connected()  # the host's timeout may end the match first
                nursery.cancel_scope.cancel()

            nursery.start_soon(never_connected)
            nursery.start_soon(exited)
            nursery.start_soon(over)


__all__ = ["BotFailure", "StartupWatch", "tail", "to_stderr"]
