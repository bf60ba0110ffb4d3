"""One encoded event stream per match (and spectator delay), shared by all its pages.

Why: a live page must cost the referee next to nothing, however many are open. So the
match has *one* subscription to :meth:`MatchHost.watch` per delay (the organiser's
live view, the spectators' delayed one), not one per page: the referee's ``_publish``
calls :meth:`PageFeed.forward`, which only appends the batch and wakes the feed's pump.
The pump, a task of its own on the trio loop (never inside the referee's step), gathers
what arrives within :data:`COALESCE`, holds it back by the delay (the same
:class:`DelayedFeed` as ``Watch``), and encodes each released event to its
Server-Sent-Events text **once**; every page then writes slices of that shared log.
Nothing here redacts: the events are those :meth:`MatchHost.watch` hands out, redacted by
the one redaction path (:mod:`arena.game.views`).

Bounds (docs/limits.md): at most ``--pages-per-match`` pages per match (more get
``503``); a page is a cursor into the shared log, so one that stops reading holds no
memory of its own, and :class:`PageStream` cuts it after ``--page-stall`` seconds.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

import structlog
import trio
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from arena.game import Event
from arena.http.metrics import ArenaMetrics
from arena.server import DelayedFeed, HostedMatch, LimitExceeded, MatchHost, SpectatorDelay

log = structlog.get_logger()
COALESCE = 0.1  # seconds of events gathered into one write, at least (a person cannot tell)
# Socket writes a second for all pages together, at most: each write costs the trio thread
# a system call and a handover of the GIL to the gRPC thread, so with many pages open
# every page writes less often (64 pages: every 0.32 s) instead of the referee slowing.
WRITES_PER_SECOND = 200
STATUS_EVERY = 0.5  # seconds between two status messages (time banks, faults)
STATUS_IDLE = 2.0  # seconds without events after which a status is sent anyway
END = b"event: end\ndata: {}\n\n"

Batch = list[tuple[int, Event]] | None
Status = Callable[[HostedMatch, SpectatorDelay], str]


class PagesFull(Exception):
    """The match has ``--pages-per-match`` pages open already."""


class PageFeed:
    """A match's public events for every page with one delay: encoded once, kept once.

    ``texts[i]`` is the SSE text of the event with index ``indices[i]`` (``id:`` line and
    ``data:``); ``status`` the latest status message. Pages read them and wait on
    :meth:`changed`; only the pump writes them.
    """

    def __init__(
        self, hosted: HostedMatch, delay: SpectatorDelay, status: Status, feeds: PageFeeds
    ) -> None:
        self.hosted = hosted
        self.feeds = feeds
        self.delay = delay
        self.indices: list[int] = []
        self.texts: list[bytes] = []
        self.status = b""
        self.status_count = 0  # status messages made so far (pages send the newest)
        self.ended = False
        self.pages = 0
        self._status = status
        self._held = DelayedFeed(delay)
        self._pending: list[Batch] = []
        self._news = trio.Event()
        self._tick = trio.Event()
        self._status_at = -1e9
        self._key = 0
        self._scope = trio.CancelScope()
        self._chunk_key = (-1, -1, -1)
        self._chunk = b""

    def forward(self, batch: Batch) -> None:
        """The host's callback, run inside the referee's step: keep, wake the pump."""
        self._pending.append(batch)
        self._news.set()

    def since(self, start: int) -> int:
        """The log position of the first event with index ``start`` or later."""
        return bisect.bisect_left(self.indices, start)

    def chunk(self, at: int, status: bool) -> bytes:
        """The log from position ``at`` (and the status if ``status``), as one bytes
        object; the last one asked is kept, since every page that is up to date asks
        for the same."""
        key = (at, len(self.texts), self.status_count if status else -1)
        if key != self._chunk_key:
            self._chunk = b"".join(self.texts[at:]) + (self.status if status else b"")
            self._chunk_key = key
        return self._chunk

    async def changed(self) -> None:
        """Wait for the pump's next write (new events, a status, or the end)."""
        await self._tick.wait()

    async def pump(self) -> None:
        """Gather, delay, encode, tell the pages; until the match ends or no page is left."""
        with self._scope:
            try:
                while not self.ended:
                    with trio.move_on_after(STATUS_IDLE):  # no event: still a status
                        await self._news.wait()
                    await trio.sleep(max(COALESCE, self.feeds.open / WRITES_PER_SECOND))
                    self._news = trio.Event()
                    batches, self._pending = self._pending, []
                    self._release(batches)
            except Exception:  # a bug here must end these pages, not the server
                log.exception("page_feed_failed", match_id=self.hosted.id)
                self.ended = True
                self._tick.set()

    def _release(self, batches: list[Batch]) -> None:
        released: list[tuple[int, Event]] = []
        for batch in batches:
            if batch is None:
                released += self._held.close()
                self.ended = True
                break
            released += self._held.push(batch)
        self._publish(released)

    def _publish(self, released: list[tuple[int, Event]]) -> None:
        for index, event in released:
            data = json.dumps(event.to_dict(), separators=(",", ":"))
            self.indices.append(index)
            self.texts.append(f"id: {index}\ndata: {data}\n\n".encode())
        now = trio.current_time()
        if self.ended or now - self._status_at >= STATUS_EVERY:
            self.status = self._status(self.hosted, self.delay).encode()
            self.status_count += 1
            self._status_at = now
        self._tick.set()
        self._tick = trio.Event()

    def start(self, host: MatchHost) -> None:
        """Subscribe to the host and take in the events so far (raises what
        :meth:`MatchHost.watch` raises). A finished match's end is then pending."""
        self._key, past = host.watch(self.hosted.id, self.forward)
        self._release([past])

    def stop(self, host: MatchHost) -> None:
        """No page is left: unsubscribe, end the pump."""
        host.unwatch(self.hosted.id, self._key)
        self._scope.cancel()


class PageFeeds:
    """The feeds of one server's HTTP side, made when a match's first page opens and
    dropped when its last closes."""

    def __init__(
        self, host: MatchHost, nursery: trio.Nursery, status: Status, metrics: ArenaMetrics
    ) -> None:
        self.host = host
        self.nursery = nursery
        self.status = status
        self.metrics = metrics  # its open/refused stream counts are kept here
        self.feeds: dict[tuple[str, SpectatorDelay], PageFeed] = {}
        self.pages: dict[str, int] = {}  # open pages per match id
        self.open = 0  # open pages in all

    def join(self, hosted: HostedMatch, delay: SpectatorDelay) -> PageFeed:
        """A place on the match's feed for one more page.

        Raises:
            PagesFull: ``--pages-per-match`` reached.
            KeyError, LimitExceeded: from :meth:`MatchHost.watch`.
        """
        limit = self.host.limits.pages_per_match
        if self.pages.get(hosted.id, 0) >= limit:
            raise PagesFull(
                f"match {hosted.id} already has {limit} pages open (--pages-per-match); "
                "try again later"
            )
        key = (hosted.id, delay)
        feed = self.feeds.get(key)
        if feed is None or (feed.ended and feed.pages == 0):
            feed = PageFeed(hosted, delay, self.status, self)
            feed.start(self.host)
            self.nursery.start_soon(feed.pump)
            self.feeds[key] = feed
        feed.pages += 1
        self.pages[hosted.id] = self.pages.get(hosted.id, 0) + 1
        self.open += 1
        self.metrics.open_streams += 1
        return feed

    def leave(self, feed: PageFeed) -> None:
        feed.pages -= 1
        self.open -= 1
        self.metrics.open_streams -= 1
        left = self.pages.pop(feed.hosted.id) - 1
        if left:
            self.pages[feed.hosted.id] = left
        if feed.pages == 0:
            feed.stop(self.host)
            if self.feeds.get((feed.hosted.id, feed.delay)) is feed:
                del self.feeds[(feed.hosted.id, feed.delay)]


async def follow(feed: PageFeed, start: int) -> AsyncGenerator[bytes, None]:
    """One page's stream: the log from event ``start`` on, then each new write; ``end``.

    Each write is a slice of the shared log, plus the newest status if it changed: pages
    that are up to date get the same bytes object (:meth:`PageFeed.chunk`), so nothing
    is encoded, joined or queued per page."""
    at = feed.since(start)
    yield b"retry: 2000\n" + feed.chunk(at, True)
    at, sent_status = len(feed.texts), feed.status_count
    while True:
        if at == len(feed.texts) and sent_status == feed.status_count and not feed.ended:
            await feed.changed()
        chunk = feed.chunk(at, sent_status != feed.status_count)
        at, sent_status = len(feed.texts), feed.status_count
        if feed.ended:
            yield chunk + END
            return
        if chunk:
            yield chunk


class EventStream(Response):
    """``/matches/ID/events``: a place on the match's feed, then :func:`follow` until the
    match ends or the client goes (read as ``http.disconnect``). Refused with ``503``
    and ``Retry-After`` when the match has ``--pages-per-match`` pages (or, through the
    host, ``--watches-per-match`` watchers) already."""

    media_type = "text/event-stream"

    def __init__(
        self, feeds: PageFeeds, hosted: HostedMatch, delay: SpectatorDelay, start: int
    ) -> None:
        # not Response.__init__: it would declare a Content-Length of its empty body
        self.status_code, self.background = 200, None
        self.init_headers({"cache-control": "no-store", "x-accel-buffering": "no"})
        self.feeds, self.hosted, self.delay, self.start = feeds, hosted, delay, start

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            feed = self.feeds.join(self.hosted, self.delay)
        except (PagesFull, LimitExceeded) as full:
            self.feeds.metrics.refused_streams += 1
            refusal = PlainTextResponse(f"{full}\n", 503, headers={"retry-after": "10"})
            await refusal(scope, receive, send)
            return
        except KeyError:
            await PlainTextResponse("no such match\n", 404)(scope, receive, send)
            return
        try:
            await send({"type": "http.response.start", "status": 200,
                        "headers": self.raw_headers})  # fmt: skip
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_cancel_when_gone, receive, nursery.cancel_scope)
                async with aclosing(follow(feed, self.start)) as chunks:
                    async for chunk in chunks:
                        await send({"type": "http.response.body", "body": chunk,
                                    "more_body": True})  # fmt: skip
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                nursery.cancel_scope.cancel()
        finally:
            self.feeds.leave(feed)


async def _cancel_when_gone(receive: Receive, scope: trio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()
