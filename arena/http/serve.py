"""Serving the HTTP app with Hypercorn's trio worker, inside the server's own nursery."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from arena.http.app import PageRoutes, build_app
from arena.http.metrics import ArenaMetrics
from arena.server import Access, MatchHost


async def start_http(
    nursery: trio.Nursery,
    address: str,
    host: MatchHost,
    access: Access,
    metrics: ArenaMetrics,
    pages: Sequence[PageRoutes] = (),
) -> str:
    """Listen on ``address`` (``HOST:PORT``, port 0 = any free); the base URL it serves."""
    config = Config()
    config.bind = [address]
    config.accesslog = None
    config.errorlog = logging.getLogger("arena.http")
    config.graceful_timeout = 1.0
    app = build_app(host, access, metrics, nursery, pages)
    binds: list[str] = await nursery.start(serve, app, config)
    return binds[0]
