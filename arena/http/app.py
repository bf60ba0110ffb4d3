"""The HTTP side of ``arena serve --http``: pages, the public event stream, metrics.

A Starlette app served by Hypercorn's trio worker on the referee's own trio loop, so it
reads the match host directly (no thread hop). What a viewer sees is decided exactly as
for ``Matches.Watch``: the caller's role comes from :meth:`Access.role_of` (the same
``Bearer`` token, sent as a header, or once as ``?token=`` which is kept in a cookie);
the events come from :meth:`MatchHost.watch`, which hands out only what the one
redaction path (:mod:`arena.game.views`) lets a spectator see; spectators are held
``--spectator-delay`` behind by the same :class:`DelayedFeed`. Nothing here redacts.
The pages of one match share one subscription and one encoded log
(:mod:`arena.http.feed`), so a page costs the referee next to nothing.

Routes: ``/`` the match list, ``/matches/{id}`` a live page (running) or the replay
viewer (finished), ``/matches/{id}/events`` the event stream (Server-Sent Events, one
``id:`` per event index, so a reconnecting browser resumes where it stopped),
``/api/matches`` the list as JSON, ``/metrics`` (Prometheus) and ``/healthz``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import trio
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

from arena.http.feed import EventStream, PageFeeds
from arena.http.metrics import ArenaMetrics
from arena.http.pages import list_page, live_page, table_config
from arena.http.replay import replay_html
from arena.records import read_record
from arena.server import (
    Access,
    HostedMatch,
    MatchHost,
    MatchState,
    Refusal,
    Role,
    SpectatorDelay,
    live_info,
)

COOKIE = "arena_token"
OVER = (MatchState.FINISHED, MatchState.CANCELLED, MatchState.FAILED)
PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"


class Denied(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


#: The access check a page added by a layer above gets: the caller's role, or the
#: response that refuses it (401/403), or a redirect that keeps ``?token=`` in a cookie.
PageGuard = Callable[[Request], Role | Response]
#: Routes a layer above adds to the app (the competition's standings pages), given the guard.
PageRoutes = Callable[[PageGuard], Sequence[BaseRoute]]


def request_role(access: Access, request: Request) -> Role:
    """The caller's role, as ``Matches.Watch`` would judge it; only watchers pass.

    Raises:
        Denied: 401 without a usable credential, 403 for a seat token.
    """
    header = request.headers.get("authorization")
    token = request.query_params.get("token") or request.cookies.get(COOKIE)
    metadata = []
    if header is not None:
        metadata.append(("authorization", header))
    elif token:
        metadata.append(("authorization", f"Bearer {token}"))
    try:
        role = access.role_of(metadata)
    except Refusal as refusal:
        raise Denied(401, refusal.message) from None
    if role is Role.ANONYMOUS:
        raise Denied(
            401,
            "this server needs a spectator or organiser token: open this page once as "
            "…?token=TOKEN (it is then kept in a cookie), or send 'Authorization: "
            "Bearer TOKEN'",
        )
    if role is Role.SEAT:
        raise Denied(403, "a seat token is good only for Arena.Play and Arena.Check")
    return role


def page_guard(access: Access) -> PageGuard:
    """The check every page runs first (also the front's of ``--workers N``,
    :mod:`arena.http.workers`): the caller's role, the refusal (401/403), or a redirect
    that keeps ``?token=`` in a cookie and drops it from the URL."""

    def guard(request: Request) -> Role | Response:
        try:
            role = request_role(access, request)
        except Denied as denied:
            return PlainTextResponse(denied.message + "\n", status_code=denied.status)
        if "token" in request.query_params:  # keep it in a cookie, drop it from the URL
            response = RedirectResponse(request.url.remove_query_params("token"), 303)
            response.set_cookie(
                COOKIE, request.query_params["token"], httponly=True, samesite="strict"
            )
            return response
        return role

    return guard


def build_app(
    host: MatchHost,
    access: Access,
    metrics: ArenaMetrics,
    nursery: trio.Nursery,
    pages: Sequence[PageRoutes] = (),
) -> Starlette:
    """The app for one server (its host, its access rules, its metrics), with the pages
    of ``pages`` (each judged by the same access check); the event streams' feeds run in
    ``nursery``."""
    web = _Web(host, access, metrics, nursery)
    routes: list[BaseRoute] = [
        Route("/", web.index),
        Route("/api/matches", web.api_matches),
        Route("/matches/{match_id}", web.match_page),
        Route("/matches/{match_id}/events", web.events),
        Route("/metrics", web.metrics_text),
        Route("/healthz", web.healthz),
    ]
    for add in pages:
        routes += add(web._page)
    return Starlette(routes=routes)


class _Web:
    def __init__(
        self, host: MatchHost, access: Access, metrics: ArenaMetrics, nursery: trio.Nursery
    ) -> None:
        self.host = host
        self.access = access
        self.metrics = metrics
        self.feeds = PageFeeds(host, nursery, self._status, metrics)

    # -- who is asking -------------------------------------------------------------------

    def role(self, request: Request) -> Role:
        return request_role(self.access, request)

    def _page(self, request: Request) -> Role | Response:
        return page_guard(self.access)(request)

    # -- pages ---------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        checked = self._page(request)
        if isinstance(checked, Response):
            return checked
        return HTMLResponse(list_page(self._rows()))

    async def api_matches(self, request: Request) -> Response:
        checked = self._page(request)
        if isinstance(checked, Response):
            return checked
        return JSONResponse(self._rows())

    def _rows(self) -> list[dict[str, Any]]:
        rows = []
        for hosted in self.host.matches.values():
            info = live_info(hosted)
            referee = hosted.referee
            rows.append(
                {
                    "id": hosted.id,
                    "state": hosted.state.value,
                    "deal": referee.match.snapshot().deal.deal if referee else 0,
                    "levels": [r.code for r in referee.match.levels] if referee else [],
                    "seats": list(info.seat_names),
                    "connected": list(info.connected),
                }
            )
        return rows

    async def match_page(self, request: Request) -> Response:
        checked = self._page(request)
        if isinstance(checked, Response):
            return checked
        hosted = self.host.matches.get(request.path_params["match_id"])
        if hosted is None:
            return PlainTextResponse("no such match\n", status_code=404)
        if hosted.state in OVER and hosted.record:
            # Finished: every card is public now (docs/security.md), as FetchRecord gives it.
            record = await trio.to_thread.run_sync(read_record, hosted.record)
            return HTMLResponse(replay_html(record, back='<a href="../">all matches</a>'))
        names = list(live_info(hosted).seat_names)
        config = table_config(hosted.spec.rules, names)
        return HTMLResponse(live_page(hosted.id, config, f"{hosted.id}/events"))

    async def events(self, request: Request) -> Response:
        try:
            role = self.role(request)
        except Denied as denied:
            return PlainTextResponse(denied.message + "\n", status_code=denied.status)
        hosted = self.host.matches.get(request.path_params["match_id"])
        if hosted is None:
            return PlainTextResponse("no such match\n", status_code=404)
        delay = SpectatorDelay() if role is Role.ORGANISER else self.access.spectator_delay
        try:
            start = int(request.headers.get("last-event-id", "-1")) + 1
        except ValueError:
            start = 0
        return EventStream(self.feeds, hosted, delay, start)

    @staticmethod
    def _status(hosted: HostedMatch, delay: SpectatorDelay) -> str:
        """What is not an event but public: state, time banks, faults per seat, who is
        connected. Counts and kinds only: a fault's reason can name cards in a hand."""
        referee = hosted.referee
        banks = [round(b * 1000) for b in referee.bank] if referee else [0, 0, 0, 0]
        faults = [0, 0, 0, 0]
        for fault in referee.faults if referee else ():
            faults[fault.seat] += 1
        connected = [(r.conn is not None) if (r := hosted.remote(s)) else True for s in range(4)]
        status = {
            "state": hosted.state.value,
            "banks": banks,
            "faults": faults,
            "connected": connected,
            "delay": str(delay),
        }
        return f"event: status\ndata: {json.dumps(status)}\n\n"

    # -- operations ----------------------------------------------------------------------

    async def metrics_text(self, request: Request) -> Response:
        return Response(self.metrics.exposition(), media_type=PROMETHEUS)

    async def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok\n")
