"""A hosted match's spectators, and the seats that never came or a match that failed.

Kept apart from :mod:`arena.server.host` (which creates, runs and describes matches) so
that each stays short: :class:`Watchers` is the one subscriber the referee knows of and
passes each batch of public events to the ``Watch`` streams, whose subscriptions end the
moment their clients go; :func:`await_seats` waits for the bots and says who is missing
(a missing seat cannot win: see :meth:`MatchHost._run`); :func:`finish_failed` tells
every seat of a failed match that it is over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog
import trio

from arena.game import Event, MatchEnded, Termination, indexed_seat_events
from arena.referee import Referee
from arena.referee.referee import SPECTATOR
from arena.rules import team_of
from arena.server.limits import LimitExceeded
from arena.text import MAX_REASON, clip

if TYPE_CHECKING:
    from arena.server.host import HostedMatch, MatchHost

log = structlog.get_logger()
Watcher = Callable[[list[tuple[int, Event]] | None], None]


class Watchers:
    """The ``Watch`` subscriptions of one match (trio thread only)."""

    def __init__(self) -> None:
        self.callbacks: dict[int, Watcher] = {}
        self.seen = 0  # index after the last public event passed on
        self._keys = 0

    def add(self, callback: Watcher, limit: int, match_id: str) -> int:
        """Subscribe; returns the key for :meth:`remove`. Raises :class:`LimitExceeded`."""
        if len(self.callbacks) >= limit:
            raise LimitExceeded(
                f"match {match_id} already has {len(self.callbacks)} watchers (--watches-per-match)"
            )
        self._keys += 1
        self.callbacks[self._keys] = callback
        return self._keys

    def remove(self, key: int) -> None:
        self.callbacks.pop(key, None)

    def past(self, referee: Referee | None) -> list[tuple[int, Event]]:
        """The public events passed on so far, for a new subscriber."""
        if referee is None:
            return []
        return indexed_seat_events(referee.match.events[: self.seen], SPECTATOR)

    def follow(self, referee: Referee) -> None:
        """Become the referee's one watcher (when the match starts)."""
        past = referee.watch(self)
        self.seen = past[-1][0] + 1 if past else 0

    def __call__(self, batch: list[tuple[int, Event]]) -> None:
        if batch:
            self.seen = batch[-1][0] + 1
        for callback in list(self.callbacks.values()):
            callback(batch)

    def end(self) -> None:
        """The match is over: every stream ends; nothing is kept."""
        for callback in list(self.callbacks.values()):
            callback(None)
        self.callbacks.clear()


def abandon(hosted: HostedMatch | None, seat: int, why: str) -> None:
    """The bot meant for ``seat`` will not come (its process ended before taking the
    seat): stop waiting for it. Once every seat is taken or abandoned the match starts,
    or is forfeited or void."""
    remote = hosted.remote(seat) if hosted is not None else None
    if hosted is None or remote is None or remote.ever_connected.is_set():
        return
    hosted.abandoned[seat] = why
    hosted.news.set()


async def await_seats(hosted: HostedMatch) -> list[int]:
    """Wait until every remote seat is taken or abandoned, or the connect timeout;
    return the seats still empty. Stops early once both teams lack a seat."""
    remotes = [r for s in range(4) if (r := hosted.remote(s)) is not None]

    def empty() -> list[int]:
        return [r.seat for r in remotes if not r.ever_connected.is_set()]

    with trio.move_on_after(hosted.spec.connect_timeout):
        while True:
            waiting = [s for s in empty() if s not in hosted.abandoned]
            if not waiting or len({team_of(s) for s in hosted.abandoned}) == 2:
                break
            hosted.news = trio.Event()
            async with trio.open_nursery() as nursery:

                async def wake_on(event: trio.Event) -> None:
                    await event.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(wake_on, hosted.news)
                for remote in remotes:
                    if remote.seat in waiting:
                        nursery.start_soon(wake_on, remote.ever_connected)
    return empty()


def missing_reason(hosted: HostedMatch, seats: list[int], waited: float) -> str:
    """Why the match ends before its first deal: each missing seat and what happened."""
    timeout = hosted.spec.connect_timeout
    absent = f"never connected within {timeout:g} s" if waited >= timeout else "not connected"
    why = [f"seat {s} {hosted.abandoned.get(s, absent)}" for s in seats]
    return clip("; ".join(why), MAX_REASON)


async def forget_later(host: MatchHost, hosted: HostedMatch) -> None:
    """Drop a finished match from memory after the retention time; its record stays on
    disk, where Get and FetchRecord still find it, and its tokens become unknown."""
    await trio.sleep(host.limits.retention_s)
    for digest in hosted.token_hashes:
        host.tokens.remove_hash(digest)
    if host.matches.get(hosted.id) is hosted:
        del host.matches[hosted.id]
        log.debug("match_forgotten", match_id=hosted.id)


async def finish_failed(hosted: HostedMatch) -> None:
    """A failed match (a write error, a crash) still ends for its bots: every seat gets
    ``MatchEnd`` with reason ``failed`` and its stream is closed."""
    start = hosted.spec.rules.start_level
    referee = hosted.referee
    levels = referee.match.levels if referee else (start, start)
    deals = referee.match.snapshot().deal.deal if referee else 0
    failed = Termination.FAILED
    result = MatchEnded(None, (levels[0], levels[1]), deals, failed, detail=hosted.error)
    with trio.move_on_after(2) as scope:
        scope.shield = True
        for seat in hosted.seats:
            try:
                await seat.finish(result, [], hosted.record)
            except Exception:  # a seat that cannot be told must not stop the others
                log.exception("seat_not_told_of_failure")


__all__ = [
    "Watcher",
    "Watchers",
    "abandon",
    "await_seats",
    "finish_failed",
    "forget_later",
    "missing_reason",
]
