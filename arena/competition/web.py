"""The competition's pages on the HTTP side (``arena serve --http`` with a competition
database): the events, each event's leaderboard, and its JSON export.

Routes (added to :mod:`arena.http.app` through the server's extension, so the HTTP side
never imports the competition): ``/events`` the events, ``/events/{name}`` the
leaderboard (rating = openskill ordinal, μ ± σ, W/L/D, faults, fault rate, latency, then
W/L/D by partnership and the event's matches, each linked to its page), ``/api/events``
and ``/api/events/{name}/standings`` (the same data as ``arena events standings
--json``). Access is the match pages' own check (a spectator's or the organiser's
token); nothing here is secret beyond that: standings are counts and ratings, never a
card. The database is read in a worker thread, so a slow query never holds the
referee's loop.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import trio
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from arena.competition.organiser import EventStandings, LocalOrganiser
from arena.competition.store import NotFound, Store

REFRESH_S = 5  # a running event's page reloads itself this often
SHOWN_MATCHES = 200  # the newest matches listed on a page (a continuous ladder has many)

_STYLE = """
body{font:15px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:64em;padding:0 1em;
color:#1d2330;background:#fafafa}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}th,td{padding:.25em .7em;text-align:right}
th{border-bottom:2px solid #888;background:#eef}td:nth-child(2),th:nth-child(2){text-align:left}
tr:nth-child(even) td{background:#f0f0f4}.muted{color:#666}a{color:#1a4fa0}
"""


def standings_routes(store: Store) -> Callable[[Any], Sequence[BaseRoute]]:
    """The routes, for :attr:`arena.server.app.Extension.http_routes`."""
    organiser = LocalOrganiser(store)

    def routes(guard: Callable[[Request], Any]) -> Sequence[BaseRoute]:
        pages = _Pages(organiser, guard)
        return [
            Route("/events", pages.events_page),
            Route("/events/{name}", pages.event_page),
            Route("/api/events", pages.events_json),
            Route("/api/events/{name}/standings", pages.standings_json),
        ]

    return routes


class _Pages:
    def __init__(self, organiser: LocalOrganiser, guard: Callable[[Request], Any]) -> None:
        self.organiser = organiser
        self.guard = guard

    async def _standings(self, request: Request) -> EventStandings | Response:
        checked = self.guard(request)
        if isinstance(checked, Response):
            return checked
        name = request.path_params["name"]
        try:
            return await trio.to_thread.run_sync(self.organiser.standings, name)
        except NotFound as exc:
            return PlainTextResponse(f"{exc}\n", status_code=404)

    async def standings_json(self, request: Request) -> Response:
        found = await self._standings(request)
        if isinstance(found, Response):
            return found
        return JSONResponse(
            {"event": found.name, "format": found.format, "state": found.state, **found.data}
        )

    async def events_json(self, request: Request) -> Response:
        checked = self.guard(request)
        if isinstance(checked, Response):
            return checked
        events = await trio.to_thread.run_sync(self.organiser.events)
        return JSONResponse([e.__dict__ for e in events])

    async def events_page(self, request: Request) -> Response:
        checked = self.guard(request)
        if isinstance(checked, Response):
            return checked
        events = await trio.to_thread.run_sync(self.organiser.events)
        rows = "".join(
            f'<tr><td>{i}</td><td><a href="events/{quote(e.name)}">{html.escape(e.name)}</a></td>'
            f"<td>{e.format}</td><td>{e.state}</td><td>{e.played}/{e.matches}</td></tr>"
            for i, e in enumerate(events, 1)
        )
        body = (
            "<h1>Events</h1><table><tr><th>#</th><th>event</th><th>format</th><th>state</th>"
            f'<th>played</th></tr>{rows}</table><p><a href="./">matches</a></p>'
        )
        return HTMLResponse(_page("Events", body))

    async def event_page(self, request: Request) -> Response:
        found = await self._standings(request)
        if isinstance(found, Response):
            return found
        matches = await trio.to_thread.run_sync(self.organiser.store.matches, found.name)
        return HTMLResponse(
            _page(f"{found.name} — standings", leaderboard(found, matches), found.state)
        )


def _page(title: str, body: str, state: str = "finished") -> str:
    refresh = f'<meta http-equiv="refresh" content="{REFRESH_S}">' if state == "running" else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,">{refresh}<title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def leaderboard(found: EventStandings, matches: Sequence[Any]) -> str:
    """The body of an event's page (plain HTML: it reads without a script)."""
    e = html.escape
    data = found.data
    rows = []
    for i, r in enumerate(data["bots"], 1):
        latency = "–" if r["mean_latency_ms"] is None else f"{r['mean_latency_ms']:.1f}"
        rows.append(
            f"<tr><td>{i}</td><td>{e(r['bot'])}</td><td>{r['ordinal']:.2f}</td>"
            f"<td>{r['mu']:.2f} ± {r['sigma']:.2f}</td><td>{r['played']}</td>"
            f"<td>{r['won']}–{r['lost']}–{r['drawn']}</td><td>{r['faults']}</td>"
            f"<td>{100 * r['fault_rate']:.1f}%</td><td>{latency}</td></tr>"
        )
    pairs = "".join(
        f"<tr><td></td><td>{e(p['partnership'])}</td><td>{p['won']}</td><td>{p['lost']}</td>"
        f"<td>{p['drawn']}</td></tr>"
        for p in data["partnerships"]
    )
    played = []
    older = max(0, len(matches) - SHOWN_MATCHES)
    for m in matches[older:]:
        seats = " · ".join(e(n) for n in m.seats)
        link = f'<a href="../matches/{quote(m.match_id)}">{e(m.match_id)}</a>' if m.match_id else ""
        winner = (m.result or {}).get("winner")
        outcome = "" if m.state != "finished" else ("draw" if winner is None else f"team {winner}")
        played.append(
            f"<tr><td>{m.index}</td><td>{seats}</td><td>{m.state}</td><td>{outcome}</td>"
            f"<td>{link}</td></tr>"
        )
    head = (
        f"<h1>{e(found.name)}</h1><p class=muted>{e(found.format)} · {e(found.state)} · "
        f"{data['finished']} of {data['matches']} matches finished, {data['left']} to play · "
        f'<a href="../api/events/{quote(found.name)}/standings">JSON</a> · '
        '<a href="../events">all events</a></p>'
    )
    return (
        f"{head}<h2>Leaderboard</h2><table><tr><th>#</th><th>bot</th><th>rating</th>"
        "<th>μ ± σ</th><th>played</th><th>W–L–D</th><th>faults</th><th>fault rate</th>"
        f"<th>ms/decision</th></tr>{''.join(rows)}</table>"
        "<p class=muted>rating: openskill ordinal μ − 3σ (σ: the uncertainty); fault rate: "
        "faults per decision; ms/decision: mean time of an accepted answer.</p>"
        "<h2>By partnership</h2><table><tr><th></th><th>partnership</th><th>W</th><th>L</th>"
        f"<th>D</th></tr>{pairs}</table>"
        "<h2>Matches</h2><table><tr><th>#</th><th>seats (0 · 1 · 2 · 3)</th><th>state</th>"
        f"<th>won by</th><th>match</th></tr>{''.join(played)}</table>"
        + (f"<p class=muted>and {older} older matches not listed here</p>" if older else "")
    )
