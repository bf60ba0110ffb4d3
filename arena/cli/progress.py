"""A small progress bar for long runs, on standard error, only when it is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress(total, "matches") as bar: bar.advance()`` — redraws at most 10×/s."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.label = label
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.started = time.monotonic()
        self._drawn = 0.0
        self.note = ""

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        if note:
            self.note = note
        if self.enabled:
            self._draw()

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn < 0.1:
            return
        self._drawn = now
        frac = min(self.done / self.total, 1.0)
        width = 30
        filled = int(frac * width)
        elapsed = now - self.started
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        bar = "█" * filled + "·" * (width - filled)
        self.stream.write(
            f"\r{bar} {self.done}/{self.total} {self.label}  {elapsed:5.1f}s  "
            f"ETA {eta:5.1f}s  {self.note}\x1b[K"
        )
        self.stream.flush()
