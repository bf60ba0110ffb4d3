"""Text that came from a bot or an organiser, made safe to store and to show.

A bot chooses its ``Hello.name``; a 40,000-card play makes a fault reason of 120,000
characters. Whatever such text reaches (a record, a log line, ``arena show`` on a
terminal, every seat's ``MatchEnd``) it reaches through :func:`clip` (bounded length)
and, where a terminal shows it, :func:`printable` (no escape sequences: a name could
otherwise clear the screen and print a fake result).
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"
MAX_NAME = 64  # a bot's or a seat's name, a version string
MAX_REASON = 512  # a fault's, a cancellation's or a forfeit's reason


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    return text[: limit - 1] + ELLIPSIS


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, limit: int | None = None) -> str:
    """``text`` with every control or format character (ESC, CR, BEL, bidi overrides, …)
    written as a visible escape (``\\x1b``), then clipped to ``limit`` if given.

    Letters of every script stay as they are (a Chinese bot name reads as itself).
    """
    out = "".join(
        _escape(c) if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp") else c
        for c in text
    )
    return clip(out, limit) if limit is not None else out


def clean_name(text: str, limit: int = MAX_NAME) -> str:
    """A name as stored: printable, at most ``limit`` characters."""
    return printable(clip(text, limit * 4), limit)


__all__ = ["MAX_NAME", "MAX_REASON", "clean_name", "clip", "printable"]
