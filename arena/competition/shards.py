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
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from arena.competition.places import Outcome, Placed
from arena.errors import ArenaError
from arena.server import MatchState
from arena.server.workers.ledger import Ledger, LimitExceeded
from arena.server.workers.pool import WorkerPool

# the ledger's organiser name for event matches: --matches-per-organiser bounds the
# lobby's live matches as on one process (where they count as one organiser's too)
LOBBY = "lobby"
ENDED = {s.value for s in (MatchState.FINISHED, MatchState.CANCELLED, MatchState.FAILED)}


class WorkersPlace:
    """Event matches in the worker processes (a :class:`~arena.competition.places.Place`)."""

    def __init__(self, pool: WorkerPool, ledger: Ledger, nursery: trio.Nursery) -> None:
        self.pool = pool
        self.ledger = ledger
        self.nursery = nursery
        self.records = Path(pool.settings["records"])
        self._ended: dict[str, Outcome] = {}
        self._waiting: dict[str, trio.Event] = {}
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
        return Placed(answer["match"], answer["tokens"], self.pool.workers[index].address)

    async def reseat(self, match_id: str) -> Placed:
        index = self.ledger.where(match_id)
        if index is None:
            raise ArenaError(f"no worker hosts {match_id}")
        answer = await self.pool.order(index, {"op": "seat", "match": match_id})
        self.ledger.add_seats(match_id, answer["tokens"])
        return Placed(match_id, answer["tokens"], self.pool.workers[index].address)

    async def outcome(self, match_id: str) -> Outcome:
        if match_id not in self._ended:
            waiting = self._waiting.setdefault(match_id, trio.Event())
            await waiting.wait()
        return self._ended.pop(match_id)

    def _news(self, worker: int, news: dict[str, Any]) -> None:
        """A worker's report on one of its matches (the pool's trio task)."""
        match_id, state = news["match"], news["state"]
        if state in ENDED:
            self._ended[match_id] = Outcome(
                MatchState(state),
                str(self.records / f"{match_id}.jsonl"),
                news.get("error", ""),
                tuple(news.get("absent", ())),
            )
        elif state == "forgotten" and match_id in self._waiting:
            # its worker died and the new one did not resume it: it had no record (it
            # never started: play it again), or a complete one (it ended just before)
            record = self.records / f"{match_id}.jsonl"
            self._ended[match_id] = (
                Outcome(MatchState.FINISHED, str(record))
                if record.is_file()
                else Outcome(MatchState.CANCELLED, "", "its worker died", lost=True)
            )
        elif state == "forgotten":
            self._ended.pop(match_id, None)  # out of memory: nobody will ask any more
            return
        else:
            return
        if match_id in self._waiting:
            self._waiting.pop(match_id).set()


__all__ = ["WorkersPlace"]
