"""Running a Botzone bot process: both process modes, both input formats, its verdicts.

Botzone starts a bot afresh for every turn and gives it the whole game so far (default
mode), unless the bot, after its answer, prints ``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<``
on a line of its own: then it stays alive and each later turn gets only the new request
(keep-running mode). :class:`BotProcess` finds out which by watching for that line —
there is nothing to configure — and starts a fresh process, with the whole game, when
there is no live one for the current game (first turn, a new deal, after a crash or a
timeout).

A turn that goes wrong raises :class:`TurnFailed` with Botzone's verdict name: ``TLE``
(no answer in time; the process is killed), ``RE`` (exited with an error), ``NR``
(nothing, or no ``response``), ``NJ`` (not JSON), ``OLE`` (more than 1 MB of output).

The bot's stdin stays open after its input (a keep-running bot reads its next request
from it), so a default-mode bot must read one line, as Botzone's own samples do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import IO, Any

from arena.botzone.table import Game
from arena.v1 import arena_pb2 as pb

KEEP_RUNNING = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"
MAX_OUTPUT = 1 << 20  # Botzone's OLE is about this size
DEBUG_BYTES = 1024  # Botzone keeps this much of a turn's "debug"


# The bot's environment: the seat's, without its secret (the bot never needs the token).
_BOT_ENV = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}


class TurnFailed(Exception):
    """A turn without a usable answer: ``name`` is Botzone's verdict."""

    def __init__(self, name: str, reason: str, kind: pb.FaultKind.ValueType = pb.MALFORMED) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason
        self.kind = kind


@dataclasses.dataclass
class Reply:
    """One turn's answer: the response and what came with it."""

    response: Any
    debug: str = ""
    data: str | None = None
    globaldata: str | None = None
    seconds: float = 0.0
    fresh: bool = False  # a process was started for this turn


class BotProcess:
    """The bot command's process(es) for one seat; see the module doc."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        simple: bool = False,
        log: IO[str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.simple = simple
        self.log = log
        self.cwd = cwd
        self.globaldata = ""
        self.keep_running = False  # the last process said it stays (detected, never set)
        self._proc: subprocess.Popen[bytes] | None = None
        self._game_id: int | None = None
        self._buffer = b""

    def ask(self, game: Game, index: int, timeout: float) -> Reply:
        """Put ``game.requests[index]`` to the bot (the earlier ones are its history; the
        later ones, already queued, it must not see yet).

        Raises:
            TurnFailed: no usable answer within ``timeout`` seconds.
        """
        started = time.perf_counter()
        fresh = self._proc is None or self._proc.poll() is not None or self._game_id != game.id
        if fresh:
            self.close()
            text = self._full_input(game, index)
            try:
                self._proc = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    cwd=self.cwd,
                    env=_BOT_ENV,
                    start_new_session=True,  # its own process group: killed with its children
                )
            except OSError as exc:
                raise TurnFailed("RE", f"could not start {self.argv[0]!r}: {exc}") from None
            self._game_id = game.id
        else:
            text = json.dumps(game.requests[index], separators=(",", ":")) + "\n"
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(text.encode())
            proc.stdin.flush()
        except OSError:
            pass  # it died already: its exit status says why, below
        output, kept = self._read(proc, started + timeout, timeout)
        seconds = time.perf_counter() - started
        if not kept:  # its output ended: it exits (or closed stdout and lingers)
            try:
                code = proc.wait(timeout=max(0.01, started + timeout - time.perf_counter()))
            except subprocess.TimeoutExpired:
                self.close()
                raise TurnFailed(
                    "TLE", "output ended but the bot did not exit", pb.TIMEOUT
                ) from None
            self.close()  # closes its pipes (it is reaped: its group is left alone)
            if code != 0:
                raise TurnFailed(
                    "RE",
                    f"the bot exited with status {code}"
                    + (" before answering" if not output.strip() else ""),
                )
        self.keep_running = kept
        reply = self._parse(output)
        reply.seconds, reply.fresh = seconds, fresh
        if reply.debug and self.log is not None:
            self.log.write(f"botzone debug: {reply.debug[:DEBUG_BYTES]}\n")
            self.log.flush()
        if reply.data is not None:
            game.data = reply.data
        if reply.globaldata is not None:
            self.globaldata = reply.globaldata
        return reply

    def _full_input(self, game: Game, index: int) -> str:
        """The game up to turn ``index``, as Botzone gives it to a fresh process."""
        requests, responses = game.requests[: index + 1], game.responses[:index]
        if self.simple:
            lines = [str(len(requests))]
            for i, req in enumerate(requests):
                lines.append(json.dumps(req, separators=(",", ":")))
                if i < index:  # n requests, n - 1 responses
                    lines.append(json.dumps(responses[i], separators=(",", ":")))
            lines += [game.data, self.globaldata]
            return "\n".join(lines) + "\n"
        whole = {
            "requests": requests,
            "responses": responses,
            "data": game.data,
            "globaldata": self.globaldata,
        }
        return json.dumps(whole, separators=(",", ":")) + "\n"

    def _read(
        self, proc: subprocess.Popen[bytes], deadline: float, timeout: float
    ) -> tuple[str, bool]:
        """Output until the keep-running line (-> kept) or the end of output."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks = [self._buffer]
        self._buffer = b""
        size = 0
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                got = b"".join(chunks)
                marker = got.find(KEEP_RUNNING.encode())
                if marker >= 0:
                    end = got.find(b"\n", marker)
                    self._buffer = got[end + 1 :] if end >= 0 else b""
                    return got[:marker].decode(errors="replace"), True
                left = deadline - time.perf_counter()
                if left <= 0 or not sel.select(left):
                    self.close()
                    took = time.perf_counter() - deadline + timeout
                    raise TurnFailed("TLE", f"no answer within {took:.3f}s", pb.TIMEOUT)
                chunk = os.read(fd, 65536)
                if not chunk:
                    return got.decode(errors="replace"), False
                size += len(chunk)
                if size > MAX_OUTPUT:
                    self.close()
                    raise TurnFailed("OLE", f"more than {MAX_OUTPUT} bytes of output")
                chunks = [got, chunk]

    def _parse(self, output: str) -> Reply:
        if self.simple:  # (a newline may be left over from the last keep-running line)
            lines = output.lstrip("\r\n").splitlines()
            if not lines or not lines[0].strip():
                raise TurnFailed("NR", "no output")
            try:
                response = json.loads(lines[0])
            except json.JSONDecodeError:
                raise TurnFailed("NJ", f"not JSON: {_excerpt(lines[0])}") from None
            extra = [*lines[1:4], "", "", ""]
            return Reply(response, extra[0], extra[1] or None, extra[2] or None)
        text = output.strip()
        if not text:
            raise TurnFailed("NR", "no output")
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            try:
                whole = json.loads(text.splitlines()[0])
            except json.JSONDecodeError:
                raise TurnFailed("NJ", f"not JSON: {_excerpt(text)}") from None
        if not isinstance(whole, dict) or "response" not in whole:
            raise TurnFailed("NR", f'no "response" in {_excerpt(text)}')
        debug = whole.get("debug", "")
        return Reply(
            whole["response"],
            debug if isinstance(debug, str) else json.dumps(debug),
            _text(whole.get("data")),
            _text(whole.get("globaldata")),
        )

    def close(self) -> None:
        """Stop the current process, if any (a keep-running bot between games)."""
        proc, self._proc = self._proc, None
        self._buffer = b""
        if proc is None:
            return
        if proc.poll() is None:  # not reaped, so its pid (and group id) is still its own
            with contextlib.suppress(OSError):  # the whole group: helpers it started too
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _excerpt(text: str) -> str:
    text = text.strip().replace("\n", " ")
    return repr(text if len(text) <= 60 else text[:57] + "...")


__all__ = ["KEEP_RUNNING", "BotProcess", "Reply", "TurnFailed"]
