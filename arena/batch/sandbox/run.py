"""Running one sandboxed bot for one match, in trio: start, copy its output (capped),
report how it ended.

bubblewrap is started from the calling (trio) thread, not a worker thread as
``trio.lowlevel.open_process`` does: ``--die-with-parent`` is tied to the thread that
started the sandbox, and trio's idle worker threads exit after 10 s, which would kill
the bot. The exit is awaited on a pidfd. The CPU time of the whole sandbox and the
processes it holds are read from /proc while it runs (``watch.py``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

import trio

from arena.batch.sandbox.bwrap import SOCKET, bwrap_argv, require, sandbox_env
from arena.batch.sandbox.limits import SandboxLimits, format_size
from arena.batch.sandbox.verdicts import PROCESS_WORDS, Ending, judge
from arena.batch.sandbox.watch import usage as sandbox_usage
from arena.referee import FaultKind

TAIL = 4096  # bytes of output kept for the verdict
CPU_CHECK = 0.5  # seconds between two readings of the whole sandbox (CPU time, tasks)
HOLD = 1.0  # seconds a sandbox may hold its whole process limit before it is stopped
OnEnd = Callable[[Ending], None]


class SandboxedProcess:
    """One bot in its sandbox: the bubblewrap process, its output, its end."""

    def __init__(self, popen: subprocess.Popen[bytes], output: int, limits: SandboxLimits):
        self.popen = popen
        self.pid = popen.pid
        self.limits = limits
        self.returncode: int | None = None
        self.cpu_seconds = 0.0
        self.output_stopped = False
        self.stopped: Ending | None = None  # the launcher stopped it over a limit: why
        self.reached_process_limit = False  # seen holding every process its limit allows
        self.refusal_reported = False  # its output told of a refusal, near its limit
        # decisions it has let time out so far: set by whoever runs it in a match (seat.py)
        self.timeouts: Callable[[], int] = lambda: 0
        self.written = 0
        self.tail = b""
        self.exited = trio.Event()
        self.drained = trio.Event()
        self._output = trio.lowlevel.FdStream(output)
        self._pidfd = os.pidfd_open(popen.pid)

    @classmethod
    def start(
        cls,
        command: str | list[str],
        socket: str,
        token: str,
        seat: int,
        limits: SandboxLimits,
        hidden: Iterable[Path] = (),
    ) -> SandboxedProcess:
        """Start the bot (from this thread). Raises ``SandboxUnavailable``, ``OSError``, or
        ``ValueError`` for a command line that cannot be split into words."""
        require()
        words = shlex.split(command) if isinstance(command, str) else list(command)
        env = sandbox_env(os.environ, f"unix:{SOCKET}", token, seat)
        argv = bwrap_argv(words, socket, limits, Path.cwd(), env["PATH"], hidden)
        read, write = os.pipe()
        try:
            popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=write, stderr=write, env=env
            )
        except OSError:
            os.close(read)
            raise
        finally:
            os.close(write)
        return cls(popen, read, limits)

    async def run(self, out: IO[bytes]) -> None:
        """Reap the process and copy its output to ``out``; returns when both are done.
        Run it in a nursery; :attr:`exited` and :attr:`drained` tell the progress."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._copy, out)
            nursery.start_soon(self._watch)
            try:
                await trio.lowlevel.wait_readable(self._pidfd)
            finally:  # cancelled: kill it, and reap it (at once: SIGKILL is quick)
                self.kill()  # a no-op on a process that exited (a zombie until reaped)
                _, status, usage = os.wait4(self.pid, 0)
                os.close(self._pidfd)
            self.returncode = os.waitstatus_to_exitcode(status)
            self.popen.returncode = self.returncode  # reaped here, not by Popen
            # bubblewrap need not reap its init: the last reading may be the better one
            self.cpu_seconds = max(self.cpu_seconds, usage.ru_utime + usage.ru_stime)
            self.exited.set()

    async def _watch(self) -> None:
        """Stop the sandbox when all its processes together pass the CPU limit, or when
        its process limit has stopped it playing.

        The kernel refuses a process or thread beyond the limit, and a bot refused one
        usually dies of it. A runtime refused a thread of its own may hang instead (gRPC
        in a Python bot that forks does, now and then), and a hung bot would only time
        out until its match ends. So a sandbox is stopped, and charged
        ``process_limit``, when it holds every process its limit allows for :data:`HOLD`
        seconds, or when it was *refused* — seen at its limit, or its output reports the
        kernel's refusal (``PROCESS_WORDS``) while it holds at least half its limit —
        and then lets a decision time out. The second rule is the one that catches a
        hang: a hung runtime's own threads come and go, so its count sits a few tasks
        under the limit rather than at it."""
        limits = self.limits
        full_since: float | None = None
        timeouts_when_refused: int | None = None
        while True:
            with trio.move_on_after(CPU_CHECK):
                await self.exited.wait()
                return
            now = sandbox_usage(self.pid)
            used = self.cpu_seconds = max(self.cpu_seconds, now.cpu_seconds)
            if self.returncode is not None:
                return
            if used > limits.cpu_seconds:
                self._stop(
                    FaultKind.CPU_LIMIT,
                    f"its processes used {used:.1f} s of CPU together "
                    f"(limit {limits.cpu_seconds} s): stopped",
                )
                return
            if timeouts_when_refused is None and self._refused(now.tasks):
                timeouts_when_refused = self.timeouts()
            if timeouts_when_refused is not None and self.timeouts() > timeouts_when_refused:
                self._stop(
                    FaultKind.PROCESS_LIMIT,
                    f"refused a process or thread (limit {limits.processes}), then let a "
                    "decision time out: stopped",
                )
                return
            if now.tasks < limits.processes:
                full_since = None
                continue
            full_since = trio.current_time() if full_since is None else full_since
            if trio.current_time() - full_since >= HOLD:
                self._stop(
                    FaultKind.PROCESS_LIMIT,
                    f"held all {limits.processes} processes+threads of its limit for "
                    f"{HOLD:g} s (any more are refused): stopped",
                )
                return

    def _refused(self, tasks: int) -> bool:
        """Whether the kernel has refused the sandbox a process or thread: seen holding
        all its limit allows, or saying so (in words a runtime uses) near its limit."""
        if tasks >= self.limits.processes:
            self.reached_process_limit = True
        elif tasks * 2 >= self.limits.processes:
            self.refusal_reported = self.refusal_reported or any(
                w in self.tail.decode(errors="replace") for w in PROCESS_WORDS
            )
        return self.reached_process_limit or self.refusal_reported

    def _stop(self, kind: FaultKind, reason: str) -> None:
        self.stopped = Ending(kind, reason)
        self.kill()

    async def _copy(self, out: IO[bytes]) -> None:
        cap = self.limits.output_bytes
        try:
            async with self._output:
                while chunk := await self._output.receive_some(65536):
                    room = cap - self.written
                    self.written += len(chunk)
                    self.tail = (self.tail + chunk)[-TAIL:]
                    if room > 0:
                        out.write(chunk[:room])
                        out.flush()
                    if self.written > cap and not self.output_stopped:
                        self.output_stopped = True
                        note = (
                            f"\narena: output limit reached ({format_size(cap)} written to "
                            "stdout/stderr): the rest is not logged and the bot was stopped\n"
                        )
                        out.write(note.encode())
                        self.kill()
        finally:
            self.drained.set()

    async def wait(self) -> int:
        """Until it has ended; its exit status (as ``trio.Process.wait``)."""
        await self.exited.wait()
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        """Kill the sandbox: bubblewrap first, its init and every process in it follow."""
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def ending(self) -> Ending:
        assert self.returncode is not None
        if self.stopped is not None:
            return self.stopped
        return judge(
            self.returncode,
            self.limits,
            output_stopped=self.output_stopped,
            cpu_seconds=self.cpu_seconds,
            tail=self.tail.decode(errors="replace"),
            at_process_limit=self.reached_process_limit,
        )


async def run_sandboxed(
    process: SandboxedProcess,
    out: IO[bytes],
    match_over: trio.Event,
    on_end: OnEnd,
    leave: float = 5.0,
    ended: Callable[[], bool] = lambda: False,
) -> None:
    """Run ``process`` until the match is over (then give it ``leave`` seconds to go).
    If it ends first, ``on_end`` gets the verdict and a line about it goes to ``out``.
    ``ended()`` says the match is over before ``match_over`` is set (the final message
    is sent: a bot may leave at once)."""

    async def watch(cancel: trio.CancelScope) -> None:
        await process.exited.wait()
        with trio.move_on_after(1):
            await process.drained.wait()
        if not match_over.is_set() and not ended():
            ending = process.ending()
            out.write(f"arena: the bot's sandbox ended: {ending.kind.value}: {ending.reason}\n"
                      .encode())  # fmt: skip
            on_end(ending)
        cancel.cancel()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(process.run, out)
        with trio.CancelScope() as waiting:
            nursery.start_soon(watch, waiting)
            await match_over.wait()
            with trio.move_on_after(leave):
                await process.exited.wait()
            if process.returncode is None:
                out.write(f"arena: the bot was still running {leave:g} s after the match "
                          "ended: killed\n".encode())  # fmt: skip
        process.kill()
