"""The competition's pages on the front of ``arena serve --workers 2 --database ...
--http 127.0.0.1:0`` (docs/workers.md, docs/competition.md).

Real processes: the front and its two workers, four registered sample bots playing a
two-match ladder through the front's lobby. Then plain HTTP GETs on the front, as a
browser would: ``/events``, the event's leaderboard, both JSON exports, and every link
of those pages followed (a match's link is the front's ``/matches/ID``, a 307 to the
worker hosting it, whose replay page names the match). Attacks: an anonymous client, a
seat token and a wrong token get what one process gives them (401, 403, 401), a
``?token=`` is moved into a cookie, an unknown event is a 404.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import grpc
import pytest
from competitionkit import arena, start_bot, wait_for
from servekit import Serve, bearer, start_serve
from test_workers import workers_of

from arena.competition.store import open_store
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
BOTS = ("ann", "ben", "cat", "dan")
WEB = re.compile(r"web pages on (http://[^/\s]+)/")


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hrefs += [v for k, v in attrs if tag == "a" and k == "href" and v]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # the 3xx is raised as an HTTPError: the test reads it


def get(
    url: str, token: str = "", follow: bool = True, cookie: str = ""
) -> tuple[int, str, dict[str, str]]:
    """(status, body, headers) of a GET; errors are answers too."""
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if cookie:
        request.add_header("Cookie", cookie)
    opener = urllib.request.build_opener(*([] if follow else [NoRedirect()]))
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), dict(error.headers)


def links(page: str) -> list[str]:
    parser = Links()
    parser.feed(page)
    return parser.hrefs


def test_the_front_serves_the_event_pages_and_every_link_works(tmp_path: Path) -> None:
    database = str(tmp_path / "records" / "competition.sqlite3")
    db = open_store(database)
    keys = {name: db.add_bot(name, f"{name}'s author") for name in BOTS}
    created = arena(tmp_path, "events", "create", "cup", "--bots", ",".join(BOTS),
                    "--format", "ladder", "--matches", "2", "--deals", "1",
                    "--no-duplicate", "--connect-timeout", "20",
                    database=database)  # fmt: skip
    assert created.returncode == 0, created.stderr
    serve: Serve = start_serve(
        tmp_path, "--database", database, "--workers", "2", "--http", "127.0.0.1:0"
    )
    bots = []
    try:
        wait_for(lambda: WEB.search(serve.log.read_text()), 60, "the front's web address")
        found = WEB.search(serve.log.read_text())
        assert found is not None
        base = found[1]
        for name in BOTS:
            bots.append(start_bot(serve.target, "sample_bots/random_bot.py", keys[name], name,
                                  tmp_path / f"{name}.log"))  # fmt: skip
        wait_for(lambda: db.event("cup").state == "finished", 120, "the event to finish")
        token = serve.token
        workers = workers_of(serve)
        matches = db.matches("cup")

        # the events page and every link on it
        status, events, _ = get(f"{base}/events", token)
        assert status == 200 and ">cup</a>" in events
        assert set(links(events)) == {"events/cup", "./"}
        status, listed, _ = get(urljoin(f"{base}/events", "./"), token)
        assert status == 200 and all(m.match_id in listed for m in matches)  # the front's /

        # the leaderboard and every link on it
        status, board, _ = get(urljoin(f"{base}/events", "events/cup"), token)
        assert status == 200 and "Leaderboard" in board
        hrefs = links(board)
        match_links = [h for h in hrefs if h.startswith("../matches/")]
        assert sorted(match_links) == sorted(f"../matches/{m.match_id}" for m in matches)
        for href in hrefs:
            url = urljoin(f"{base}/events/cup", href)
            assert urlsplit(url).netloc == urlsplit(base).netloc  # every link is the front's
            if href in match_links:  # a 307 to the worker hosting it, then its replay page
                status, _, headers = get(url, token, follow=False)
                assert status == 307, (href, status)
                worker = urlsplit(headers["location"])
                assert worker.netloc != urlsplit(base).netloc and worker.path == urlsplit(url).path
            status, body, _ = get(url, token)
            assert status == 200, (href, status, body[:300])
            if href in match_links:
                assert href.rsplit("/", 1)[1] in body
        assert {"../api/events/cup/standings", "../events"} <= set(hrefs)

        # the JSON exports: the same data as the command line's
        status, body, _ = get(f"{base}/api/events", token)
        assert status == 200 and [e["name"] for e in json.loads(body)] == ["cup"]
        status, body, _ = get(f"{base}/api/events/cup/standings", token)
        exported = json.loads(body)
        cli = json.loads(arena(tmp_path, "events", "standings", "cup", "--json",
                               database=database).stdout)  # fmt: skip
        assert {k: v for k, v in exported.items() if k not in ("event", "format", "state")} == cli
        assert cli["finished"] == 2 and sum(r["played"] for r in cli["bots"]) == 8

        # attacks: what one process answers, the front answers
        with grpc.insecure_channel(serve.target) as channel:
            seat = pb_grpc.MatchesStub(channel).Create(
                pb.CreateMatchRequest(), metadata=bearer(token)
            ).seat_tokens[0]
        pages = ("/events", "/events/cup", "/api/events", "/api/events/cup/standings",
                 "/", "/api/matches", f"/matches/{matches[0].match_id}",
                 f"/matches/{matches[0].match_id}/events")  # fmt: skip
        for path in pages:
            assert get(base + path)[0] == 401, path  # anonymous
            assert get(base + path, "not-a-token")[0] == 401, path
            status, body, _ = get(base + path, seat)
            assert status == 403 and "seat token" in body, path
        assert get(f"{base}/events/nope", token)[0] == 404
        status, _, headers = get(f"{base}/events?token={token}", follow=False)
        assert status == 303 and headers["location"].endswith("/events")
        cookie = headers["set-cookie"].split(";", 1)[0]
        assert "HttpOnly" in headers["set-cookie"]
        assert get(f"{base}/events", cookie=cookie)[0] == 200
        assert get(f"{base}/healthz")[0] == 200
        assert len(workers) == 2
    finally:
        for bot in bots:
            bot.kill()
            bot.wait()
        serve.stop()
    db.close()
