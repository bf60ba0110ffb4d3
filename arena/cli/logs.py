"""Logging is configured here, once, at startup (STYLE.md habit 12)."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

from arena.text import printable


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time (a test may swap it), and never
    lets a broken stream take the caller down: a log line is not worth a crash."""

    def write(self, text: str) -> int:
        try:
            return sys.stderr.write(text)
        except (OSError, ValueError):
            return 0

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()

    def isatty(self) -> bool:
        try:
            return sys.stderr.isatty()
        except (OSError, ValueError):
            return False


def configure_logging(
    level: str = "warning", json_logs: bool | None = None, stream: TextIO | None = None
) -> None:
    """JSON lines when the stream is not a terminal (or ``json_logs``), else console."""
    out: Any = stream or _CurrentStderr()
    use_json = json_logs if json_logs is not None else not out.isatty()
    escape: list[structlog.typing.Processor] = [] if use_json else [_escape_controls]
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=out.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            *escape,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )


def add_logging_options(parser: object) -> None:
    add = parser.add_argument  # type: ignore[attr-defined]
    add(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity on stderr (default warning: faults and problems)",
    )
    add("--log-json", action="store_true", default=None, help="JSON log lines even on a terminal")


def _escape_controls(
    _logger: Any, _name: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """On a terminal, a bot's name or text must not drive it: escape control characters
    in every string value (JSON lines escape them already)."""
    return {k: printable(v) if isinstance(v, str) else v for k, v in event.items()}
