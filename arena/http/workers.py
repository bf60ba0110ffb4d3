"""The front's web side for ``arena serve --workers N --http HOST:PORT``.

Each worker serves its own pages on its own port (the ``--http`` host, any free port);
the front serves ``--http`` itself, and keeps it one address for people and Prometheus:
``/metrics`` merges every worker's metrics into one exposition, each sample labelled
``worker="i"`` (Prometheus sums over them: ``sum(rate(arena_decisions_total[5m]))``);
``/healthz`` is 200 while every worker is up; ``/api/matches`` joins the workers' lists;
a match's page and event stream (``/matches/ID...``) answer with a redirect (307) to
the worker that hosts it (a viewer's token cookie is sent to every port of the host);
``/`` lists them all, as one server's list page does. With a competition database the
front also serves the competition's pages (``/events``...: the front runs the lobby and
holds the database), judged by the same access check as one server's pages
(:func:`arena.http.app.page_guard`); so are ``/``, ``/api/matches`` and the
redirects (an anonymous client gets 401 here, as from one server, not a worker's port).
"""

from __future__ import annotations

import contextlib
import json
import logging
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Route

from arena.http.app import PageGuard, PageRoutes
from arena.http.pages import list_page
from arena.http.replay import replay_html
from arena.records import RecordError, read_record
from arena.server.archive import record_path

PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"


class Merged:
    """A prometheus_client collector of the workers' expositions, labelled by worker."""

    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts

    def collect(self) -> Iterable[Metric]:
        families: dict[str, Metric] = {}
        for index, text in self.texts.items():
            for family in text_string_to_metric_families(text):
                merged = families.setdefault(
                    family.name,
                    Metric(family.name, family.documentation, family.type, family.unit),
                )
                for sample in family.samples:
                    labels = {**sample.labels, "worker": str(index)}
                    merged.add_sample(sample.name, labels, sample.value, sample.timestamp)
        return list(families.values())


def merge_metrics(texts: dict[int, str]) -> bytes:
    """One exposition of several processes' metrics: worker index → its exposition
    (each sample gets the label ``worker``)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Merged(texts))
    return generate_latest(registry)


def _get(url: str, headers: dict[str, str]) -> bytes:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:  # a worker's own page
        body: bytes = response.read()
        return body


async def fetch_all(urls: list[str], headers: dict[str, str]) -> list[bytes]:
    """GET each worker's URL (in threads); b"" for a worker that does not answer."""
    out = [b""] * len(urls)

    async def one(index: int) -> None:
        with contextlib.suppress(OSError):
            out[index] = await trio.to_thread.run_sync(_get, urls[index], headers)

    async with trio.open_nursery() as nursery:
        for index in range(len(urls)):
            nursery.start_soon(one, index)
    return out


def front_app(
    pages: Callable[[], list[str | None]],
    where: Callable[[str], int | None],
    guard: PageGuard,
    more: Sequence[PageRoutes] = (),
    records: Path | None = None,
) -> Starlette:
    """``pages()``: each worker's base URL ("" while it restarts, None for a worker that
    serves no pages: one joined from another host, or gone); ``where(id)``: the worker
    hosting a match (None: not in memory; its record is on disk); ``guard``: the pages'
    access check; ``more``: pages of a layer above (the competition's); ``records``: the
    front's folder, where a joined worker's finished event match has its copy (served
    here as a replay: that worker serves no pages)."""

    def forwarded(request: Request) -> dict[str, str]:
        keep = ("authorization", "cookie")
        return {k: v for k, v in request.headers.items() if k in keep}

    def serving() -> dict[int, str]:
        return {index: base for index, base in enumerate(pages()) if base}

    async def metrics(_request: Request) -> PlainTextResponse:
        up = serving()
        bodies = await fetch_all([f"{base}/metrics" for base in up.values()], {})
        texts = {index: body.decode() for index, body in zip(up, bodies, strict=True)}
        return PlainTextResponse(merge_metrics(texts), media_type=PROMETHEUS)

    async def healthz(_request: Request) -> PlainTextResponse:
        restarting = [base for base in pages() if base == ""]  # joined ones have no pages
        if not restarting:
            return PlainTextResponse("ok")
        return PlainTextResponse(f"{len(restarting)} worker(s) restarting", status_code=503)

    async def rows(request: Request) -> list[Any]:
        bases = serving().values()
        bodies = await fetch_all([f"{b}/api/matches" for b in bases], forwarded(request))
        found: list[Any] = []
        for body in bodies:
            try:
                listed = json.loads(body) if body else []
            except ValueError:
                continue
            found += listed if isinstance(listed, list) else []
        return found

    async def api_matches(request: Request) -> Response:
        checked = guard(request)
        return checked if isinstance(checked, Response) else JSONResponse(await rows(request))

    async def index(request: Request) -> Response:
        checked = guard(request)
        if isinstance(checked, Response):
            return checked
        return HTMLResponse(list_page(await rows(request)))

    async def match(request: Request) -> Response:
        checked = guard(request)  # refused here as one server refuses (the worker checks too)
        if isinstance(checked, Response):
            return checked
        match_id = request.path_params["match_id"]
        bases = pages()
        index = where(match_id)
        base = bases[index] if index is not None else None
        if base is None and request.url.path == f"/matches/{match_id}":
            # no worker serves its page (a joined worker's, or out of every worker's
            # memory): the replay from the front's folder, where its record is
            over = await replay_here(match_id)
            if over is not None:
                return over
        if index is None:
            base = next((b for b in bases if b), "")
        if base is None:
            return PlainTextResponse(
                "this match runs on a worker joined from another host, which serves no "
                "pages: watch it with arena watch (or Matches.Watch) through this server\n",
                status_code=503,
            )
        if not base:
            return PlainTextResponse("the worker of this match is restarting", status_code=503)
        seen = urlsplit(base)
        asked = request.url.hostname or ""
        if seen.hostname in ("0.0.0.0", "::") and asked:  # a wildcard bind: the host asked
            asked = f"[{asked}]" if ":" in asked else asked
            base = f"{seen.scheme}://{asked}:{seen.port}"
        target = base + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(target, status_code=307)

    async def replay_here(match_id: str) -> Response | None:
        """A finished match's replay from the front's own copy of its record, if any
        (every card is public once it is over, as one server's page shows it)."""
        path = record_path(records, match_id)
        if path is None:
            return None
        try:
            record = await trio.to_thread.run_sync(read_record, path)
        except (RecordError, OSError):
            return None
        if not record.complete:
            return None
        return HTMLResponse(replay_html(record, back='<a href="../">all matches</a>'))

    routes: list[BaseRoute] = [
        Route("/", index),
        Route("/api/matches", api_matches),
        Route("/matches/{match_id}", match),
        Route("/matches/{match_id}/{rest:path}", match),
        Route("/metrics", metrics),
        Route("/healthz", healthz),
    ]
    for add in more:
        routes += add(guard)
    return Starlette(routes=routes)


async def start_front_http(nursery: trio.Nursery, address: str, app: Starlette) -> str:
    """Listen on ``address`` (port 0: any free); the base URL it serves."""
    config = Config()
    config.bind = [address]
    config.accesslog = None
    config.errorlog = logging.getLogger("arena.http")
    config.graceful_timeout = 1.0
    binds: list[str] = await nursery.start(serve, app, config)
    return binds[0]
