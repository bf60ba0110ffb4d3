"""Logging is configured here, once, at startup (STYLE.md habit 12)."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(
    level: str = "warning", json_logs: bool | None = None, stream: TextIO | None = None
) -> None:
    """JSON lines when the stream is not a terminal (or ``json_logs``), else console."""
    out = stream or sys.stderr
    use_json = json_logs if json_logs is not None else not out.isatty()
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
