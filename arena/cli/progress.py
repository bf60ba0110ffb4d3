"""Progress of long work on standard error, whether or not anyone is watching live.

On a terminal, a bar redrawn in place (at most 10 times a second, and every half second
so that the clock and the ETA move while one long match is played). Otherwise (a log
file, CI) one line every ``ARENA_PROGRESS_SECONDS`` (default 10) seconds: done of total,
rate, ETA, faults so far — so a 3-minute batch is never 3 silent minutes — and, once it
has printed one, a last line when the work ends (a log should not stop at "waiting for
seat 1 to connect" when the match then ran to its end between two lines). A run shorter
than the interval prints no progress line at all. Standard output stays for results.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

DEFAULT_INTERVAL = 10.0


def interval_from_env() -> float:
    """``ARENA_PROGRESS_SECONDS``, or the default when unset or not a positive number."""
    try:
        value = float(os.environ.get("ARENA_PROGRESS_SECONDS", DEFAULT_INTERVAL))
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value > 0 else DEFAULT_INTERVAL


class Progress:
    """``with Progress(total, "matches", "batch") as bar: bar.advance(faults=n)``.

    ``total`` may be ``None`` (unknown: a match played until a team wins). ``describe``,
    when given, replaces the counted text with the caller's own (``arena match`` says
    which seats it is still waiting for); it is called from the ticker thread, so it
    must only read.
    """

    def __init__(
        self,
        total: int | None,
        label: str,
        command: str = "",
        stream: TextIO | None = None,
        describe: Callable[[], str] | None = None,
        interval: float | None = None,
    ) -> None:
        self.total = total
        self.label = label
        self.command = command
        self.done = 0
        self.faults = 0
        self.note = ""
        self.stream = stream or sys.stderr
        self.live = _isatty(self.stream)
        self.describe = describe
        self.interval = interval if interval is not None else interval_from_env()
        self.started = time.monotonic()
        self._drawn = 0.0
        self._lines = 0  # progress lines written off a terminal
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)

    def __enter__(self) -> Progress:
        self.started = time.monotonic()
        self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._ticker.join()
        with self._lock:
            if self.live:
                self._write("\r" + self._fit(self.text()) + "\x1b[K\n")
            elif self._lines:
                self._line()

    def advance(self, n: int = 1, note: str = "", faults: int | None = None) -> None:
        """``n`` more done; ``faults`` is the total so far (not an increment)."""
        with self._lock:
            self.done += n
            if note:
                self.note = note
            if faults is not None:
                self.faults = faults
        if self.live:
            self._draw()

    def text(self) -> str:
        """The progress as words: what a line or the bar says."""
        elapsed = time.monotonic() - self.started
        if self.describe is not None:
            return f"{self.describe()} · {_duration(elapsed)} elapsed"
        count = f"{self.done}/{self.total}" if self.total else str(self.done)
        parts = [f"{count} {self.label}"]
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            parts.append(f"{rate:.2f}/s" if rate < 10 else f"{rate:,.0f}/s")
            if self.total:
                left = max(self.total - self.done, 0) / rate
                parts.append(f"ETA {_duration(left)}")
        parts.append(f"faults {self.faults}")
        parts.append(f"{_duration(elapsed)} elapsed")
        if self.note:
            parts.append(self.note)
        return ", ".join(parts)

    def _bar(self) -> str:
        if not self.total or self.describe is not None:
            return self.text()
        frac = min(self.done / self.total, 1.0)
        filled = int(frac * 24)
        return "█" * filled + "·" * (24 - filled) + " " + self.text()

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self._drawn < 0.1:
                return
            self._drawn = now
            self._write("\r" + self._fit(self._bar()) + "\x1b[K")

    def _tick(self) -> None:
        period = 0.5 if self.live else self.interval
        while not self._stop.wait(period):
            if self.live:
                self._draw(force=True)
            else:
                with self._lock:
                    self._line()

    def _line(self) -> None:
        prefix = f"arena {self.command}: " if self.command else ""
        self._write(prefix + self.text() + "\n")
        self._lines += 1

    def _fit(self, line: str) -> str:
        """One terminal row: a wrapped line could not be redrawn in place."""
        width = shutil.get_terminal_size().columns - 1
        return line if len(line) <= width else line[: max(width - 1, 0)] + "…"

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream is not worth a crash
            pass


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"
