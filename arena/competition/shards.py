"""The lobby's matches on the workers of ``arena serve --workers N`` (front, trio thread).

The front runs the lobby (bots' ``Lobby.Join`` streams and the scheduler) and the
``Competition`` service; the matches run in the workers. To start an event match the
front chooses the ready worker with the fewest live matches (the same
:class:`~arena.server.workers.ledger.Ledger` that bounds ``Matches.Create``, so
``--matches-total`` holds for both) and orders it, over the worker's stdin pipe, to
create the match from the event's settings; the answer carries the seat tokens, which
the ledger routes to that worker, and each :class:`SeatOffer` names the worker's
address. The bots dial it; one that dials the front anyway is redirected at ``Hello``
as any bot is. How a match ended comes from the worker's reports; its record is in the
shared ``--records`` folder, where the lobby reads the result as on one process.

A worker that dies mid-match is restarted and resumes the match from its record with
the same seat tokens (the lobby's offers stay good). A match that had not started (no
record) is gone with it: the lobby puts it back in the queue (``lost``). After a crash
of the whole server, each restored match gets fresh tokens from its new worker
(``seat``), as :meth:`~arena.competition.lobby.Lobby.recover` does on one process.

A worker joined from another host (``arena serve --join``) keeps its records there: when
one of its event matches ends, the front copies the record into its own folder
(:func:`~arena.server.workers.copy.copy_record`) before the lobby reads the result. When
a joined worker dies (or its record cannot be fetched), its unfinished event matches go
back in the queue and are played again from the start on a worker the front can reach:
a partial record on a lost host is never counted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.competition.places import Outcome, Placed
from arena.errors import ArenaError
from arena.server import MatchState
from arena.server.workers.copy import complete, copy_record
from arena.server.workers.ledger import Ledger, LimitExceeded
from arena.server.workers.pool import WorkerPool

# the ledger's organiser name for event matches: --matches-per-organiser bounds the
# lobby's live matches as on one process (where they count as one organiser's too)
LOBBY = "lobby"
ENDED = {s.value for s in (MatchState.FINISHED, MatchState.CANCELLED, MatchState.FAILED)}
log = structlog.get_logger()


class WorkersPlace:
    """Event matches in the worker processes (a :class:`~arena.competition.places.Place`)."""

    def __init__(self, pool: WorkerPool, ledger: Ledger, nursery: trio.Nursery) -> None:
        self.pool = pool
        self.ledger = ledger
        self.nursery = nursery
        self.records = Path(pool.settings["records"])
        self._ended: dict[str, Outcome] = {}
        self._waiting: dict[str, trio.Event] = {}
        self._placed: set[str] = set()  # the lobby's matches (a joined worker's: copied)
        self._copying: set[str] = set()
        pool.listeners.append(self._news)

    def hosts(self, match_id: str) -> bool:
        return self.ledger.where(match_id) is not None

    async def create(self, settings: dict[str, Any], seed: int, seats: Sequence[str]) -> Placed:
        """Raises:
        ArenaError: no worker may take it now (all busy or restarting): it stays queued.
        """
        try:
            index = self.ledger.reserve(LOBBY, self.pool.ready)
        except LimitExceeded as exc:
            raise ArenaError(f"no worker takes the match now: {exc}") from None
        order = {"op": "create", "settings": settings, "seed": seed, "seats": list(seats)}
        try:
            answer = await self.pool.order(index, order)
        except ArenaError:
            self.ledger.release(LOBBY, index)
            raise
        self.ledger.created(answer["match"], index, answer["tokens"], LOBBY)
        self._placed.add(answer["match"])
        return Placed(answer["match"], answer["tokens"], self.pool.workers[index].address)

    async def reseat(self, match_id: str) -> Placed:
        index = self.ledger.where(match_id)
        if index is None:
            raise ArenaError(f"no worker hosts {match_id}")
        answer = await self.pool.order(index, {"op": "seat", "match": match_id})
        self.ledger.add_seats(match_id, answer["tokens"])
        self._placed.add(match_id)
        return Placed(match_id, answer["tokens"], self.pool.workers[index].address)

    async def outcome(self, match_id: str) -> Outcome:
        if match_id not in self._ended:
            waiting = self._waiting.setdefault(match_id, trio.Event())
            await waiting.wait()
        self._placed.discard(match_id)
        return self._ended.pop(match_id)

    def _news(self, worker: int, news: dict[str, Any]) -> None:
        """A worker's report on one of its matches (the pool's trio task)."""
        match_id, state = news["match"], news["state"]
        if match_id in self._copying:  # the copy decides (a joined worker's "forgotten")
            return
        if state in ENDED:
            outcome = Outcome(
                MatchState(state),
                str(self.records / f"{match_id}.jsonl"),
                news.get("error", ""),
                tuple(news.get("absent", ())),
            )
            if self.pool.workers[worker].remote and match_id in self._placed:
                self._copying.add(match_id)
                self.nursery.start_soon(self._copy, worker, match_id, outcome)
                return
            self._ended[match_id] = outcome
        elif state == "forgotten" and match_id in self._waiting:
            # its worker died and the new one did not resume it: it had no record (it
            # never started: play it again), or a complete one (it ended just before)
            record = self.records / f"{match_id}.jsonl"
            self._ended[match_id] = (
                Outcome(MatchState.FINISHED, str(record))
                if complete(record)  # a partial one (a joined worker's, shared storage): lost
                else Outcome(MatchState.CANCELLED, "", "its worker died", lost=True)
            )
        elif state == "forgotten":
            self._ended.pop(match_id, None)  # out of memory: nobody will ask any more
            return
        else:
            return
        self._end(match_id)

    def _end(self, match_id: str) -> None:
        if match_id in self._waiting:
            self._waiting.pop(match_id).set()

    async def _copy(self, worker: int, match_id: str, outcome: Outcome) -> None:
        """A joined worker's event match ended: its record into the front's folder, then
        the outcome. A finished match whose record cannot be fetched (the worker died
        meanwhile) is lost: played again, never counted from a record the front lacks."""
        joined = self.pool.workers[worker]
        tokens = self.pool.settings["organiser_tokens"]
        fetch = partial(copy_record, joined.address, joined.credentials,
                        tokens[0] if tokens else "", match_id, self.records)  # fmt: skip
        try:
            await trio.to_thread.run_sync(fetch, abandon_on_cancel=True)  # the front may stop
        except ArenaError as exc:
            log.warning("event_record_not_copied", match_id=match_id, worker=worker, error=str(exc))
            if outcome.state is MatchState.FINISHED:
                outcome = Outcome(MatchState.CANCELLED, "", str(exc), lost=True)
            else:  # cancelled before its first decision: it may have no record at all
                outcome = dataclasses.replace(outcome, record="")
        finally:
            self._copying.discard(match_id)
        self._ended[match_id] = outcome
        self._end(match_id)


__all__ = ["WorkersPlace"]
