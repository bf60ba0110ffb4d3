"""The front's book of which worker hosts which match, and the live-match bounds.

The front (:mod:`arena.server.workers.front`) runs no match itself: it admits a
``Create`` against the server-wide bounds (``--matches-total``,
``--matches-per-organiser``: they hold across workers because they are counted here),
forwards it to the worker with the fewest live matches, and remembers the match id and
its four seat-token hashes. The workers tell it (:mod:`arena.server.workers.worker`'s
reports) when a match changes state, ends or is forgotten, and which matches they
restored from their records. Read by the gRPC thread and written by the trio thread:
one lock guards it.
"""

from __future__ import annotations

import dataclasses
import threading

from arena.server.limits import LimitExceeded, Limits, LiveCount
from arena.server.tokens import token_hash

LIVE = ("waiting", "running")


@dataclasses.dataclass
class Entry:
    """One match as the front knows it."""

    worker: int
    state: str = "waiting"
    token_hashes: tuple[str, ...] = ()
    organiser: str = ""
    serial: int = 0  # the front's creation order (List's pages)


class Ledger:
    """Match id → worker, seat-token hash → match id, live matches per organiser."""

    def __init__(self, limits: Limits, workers: int) -> None:
        self.limits = limits
        self.workers = workers
        self._lock = threading.Lock()
        self._matches: dict[str, Entry] = {}
        self._seats: dict[str, str] = {}  # token hash -> match id
        self._live = LiveCount()
        self._reserved = [0] * workers  # Creates on their way to each worker
        self._serials = 0

    def add_worker(self) -> None:
        """One more worker (one that joined from another host)."""
        with self._lock:
            self.workers += 1
            self._reserved.append(0)

    def reserve(self, organiser: str, ready: list[bool]) -> int:
        """Admit one more match for ``organiser`` and choose its worker (the ready one
        with the fewest live matches); :meth:`created` or :meth:`release` must follow.

        Raises:
            LimitExceeded: past ``--matches-total`` or ``--matches-per-organiser``, or
                no worker is ready (all are restarting).
        """
        with self._lock:
            self._live.admit(self.limits, organiser)
            load = self._load()
            candidates = [w for w in range(self.workers) if ready[w]]
            if not candidates:
                raise LimitExceeded("no worker is ready (restarting after a crash); try again")
            worker = min(candidates, key=lambda w: (load[w] + self._reserved[w], w))
            self._live.add(organiser)
            self._reserved[worker] += 1
            return worker

    def release(self, organiser: str, worker: int) -> None:
        """The reserved Create failed: forget the reservation."""
        with self._lock:
            self._live.drop(organiser)
            self._reserved[worker] -= 1

    def created(self, match_id: str, worker: int, tokens: list[str], organiser: str) -> None:
        """The worker created the match: route its tokens there from now on."""
        with self._lock:
            self._reserved[worker] -= 1
            entry = self._matches.get(match_id)
            if entry is None:
                entry = self._matches[match_id] = Entry(worker, serial=self._next())
            elif entry.state in LIVE:  # the worker's report came first, counted for ""
                self._live.drop(entry.organiser)
            entry.organiser = organiser
            entry.token_hashes = tuple(token_hash(t) for t in tokens if t)
            for digest in entry.token_hashes:
                self._seats[digest] = match_id

    def add_seats(self, match_id: str, tokens: list[str]) -> None:
        """More seat tokens of a known match (the lobby's, for a restored match)."""
        with self._lock:
            entry = self._matches.get(match_id)
            if entry is None:
                return
            hashes = tuple(token_hash(t) for t in tokens)
            entry.token_hashes += hashes
            for digest in hashes:
                self._seats[digest] = match_id

    def report(self, worker: int, match_id: str, state: str, hashes: list[str]) -> None:
        """A worker's news: a match it hosts (restored, created) is in ``state``, or
        ``"forgotten"`` (out of its memory: its record stays on disk)."""
        with self._lock:
            entry = self._matches.get(match_id)
            if state == "forgotten":
                if entry is not None and entry.worker == worker:
                    self._drop(match_id, entry)
                return
            if entry is None:  # restored from its record, or its Create not back yet
                entry = self._matches[match_id] = Entry(worker, serial=self._next())
                if state in LIVE:
                    self._live.add("")
            entry.worker = worker
            if hashes and not entry.token_hashes:
                entry.token_hashes = tuple(hashes)
                for digest in hashes:
                    self._seats[digest] = match_id
            if entry.state in LIVE and state not in LIVE:
                self._live.drop(entry.organiser)
            entry.state = state

    def worker_lost(self, worker: int) -> list[str]:
        """A worker died: the ids of its live matches (its replacement resumes those
        with a record; the front forgets the others); its finished matches are
        forgotten here (their records stay on disk)."""
        with self._lock:
            live: list[str] = []
            for match_id, entry in list(self._matches.items()):
                if entry.worker != worker:
                    continue
                if entry.state in LIVE:
                    live.append(match_id)
                else:
                    self._drop(match_id, entry)
            self._reserved[worker] = 0
            return live

    def where(self, match_id: str) -> int | None:
        with self._lock:
            entry = self._matches.get(match_id)
            return entry.worker if entry is not None else None

    def seat(self, token: str) -> int | None:
        """The worker that hosts the seat of ``token`` (None: unknown token)."""
        with self._lock:
            match_id = self._seats.get(token_hash(token))
            entry = self._matches.get(match_id) if match_id is not None else None
            return entry.worker if entry is not None else None

    def serials(self) -> dict[str, int]:
        with self._lock:
            return {m: e.serial for m, e in self._matches.items()}

    def live(self) -> list[int]:
        """Live matches per worker."""
        with self._lock:
            return self._load()

    def _load(self) -> list[int]:
        load = [0] * self.workers
        for entry in self._matches.values():
            if entry.state in LIVE:
                load[entry.worker] += 1
        return load

    def _drop(self, match_id: str, entry: Entry) -> None:
        del self._matches[match_id]
        for digest in entry.token_hashes:
            self._seats.pop(digest, None)
        if entry.state in LIVE:
            self._live.drop(entry.organiser)

    def _next(self) -> int:
        self._serials += 1
        return self._serials


__all__ = ["Entry", "Ledger", "LimitExceeded"]
