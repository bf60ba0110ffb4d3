"""The competition database: bots, events and the matches of each event.

SQLite in the records folder by default, PostgreSQL when ``--database`` says so (one
schema, kept by alembic: :mod:`arena.competition.database`). The SQL below is written
once, through SQLAlchemy Core with named parameters, and runs on both.

Bot keys are 256-bit random tokens; only their SHA-256 is stored (a key that random
needs no slow hash), so a stolen database holds no usable key. The organiser's power
over a SQLite file is its file permission (created 0600), as for the organiser token;
over a PostgreSQL database, its role's grants.

Every write is one transaction: the scheduler marks a match ``running`` with its match
id before any seat is offered, and ``finished`` with its result once it ends, so after a
crash each event match is either still to play, resumable from its record, or done.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from arena.competition.database import open_engine
from arena.errors import ArenaError

PENDING, RUNNING, FINISHED = "pending", "running", "finished"


@dataclasses.dataclass(frozen=True)
class Bot:
    name: str
    owner: str
    disabled: bool
    created: str
    rotated: str | None


@dataclasses.dataclass(frozen=True)
class EventMatch:
    event: str
    index: int
    seats: tuple[str, str, str, str]  # bot names, index = seat
    seed: int
    state: str
    match_id: str | None
    record: str | None
    result: dict[str, Any] | None


@dataclasses.dataclass(frozen=True)
class Event:
    name: str
    format: str
    settings: dict[str, Any]
    state: str
    created: str


class NotFound(ArenaError):
    """No bot or event of that name (``Competition`` RPCs: NOT_FOUND)."""


class NameTaken(ArenaError):
    """A bot or event of that name exists already (``Competition`` RPCs: ALREADY_EXISTS)."""


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _q(sql: str) -> sa.TextClause:
    return sa.text(sql)


class Store:
    """The competition database (an engine: safe to share between threads)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        with self.engine.begin() as db:  # commit, or roll back on an exception
            yield db

    def _read(self, sql: str, **params: Any) -> list[Any]:
        with self.engine.connect() as db:
            return list(db.execute(_q(sql), params))

    def close(self) -> None:
        self.engine.dispose()

    # -- bots ------------------------------------------------------------------------------

    def add_bot(self, name: str, owner: str) -> str:
        """Register a bot; returns its key (shown once, stored only as a hash).

        Raises:
            ArenaError: the name is taken or not a plain name.
        """
        if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
            raise ArenaError(f"bot name {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
        if not owner.strip() or len(owner) > 200 or not owner.isprintable():
            raise ArenaError("the owner: 1-200 printable characters")
        key = "bk-" + secrets.token_urlsafe(32)
        try:
            with self._tx() as db:
                db.execute(
                    _q(
                        "INSERT INTO bots (name, owner, key_sha256, disabled, created) "
                        "VALUES (:name, :owner, :key, 0, :now)"
                    ),
                    {"name": name, "owner": owner, "key": key_hash(key), "now": _now()},
                )
        except sa.exc.IntegrityError:
            raise NameTaken(f"a bot named {name!r} is already registered") from None
        return key

    def rotate_key(self, name: str) -> str:
        """A new key for ``name``; the old one stops working at once."""
        key = "bk-" + secrets.token_urlsafe(32)
        with self._tx() as db:
            cursor = db.execute(
                _q("UPDATE bots SET key_sha256 = :key, rotated = :now WHERE name = :name"),
                {"key": key_hash(key), "now": _now(), "name": name},
            )
        if cursor.rowcount == 0:
            raise NotFound(f"no bot named {name!r}")
        return key

    def set_disabled(self, name: str, disabled: bool) -> None:
        with self._tx() as db:
            cursor = db.execute(
                _q("UPDATE bots SET disabled = :disabled WHERE name = :name"),
                {"disabled": int(disabled), "name": name},
            )
        if cursor.rowcount == 0:
            raise NotFound(f"no bot named {name!r}")

    def bots(self) -> list[Bot]:
        rows = self._read("SELECT name, owner, disabled, created, rotated FROM bots ORDER BY name")
        return [Bot(r[0], r[1], bool(r[2]), r[3], r[4]) for r in rows]

    def bot_by_key(self, key: str) -> Bot | None:
        """The bot whose key this is (looked up by hash), disabled or not."""
        rows = self._read(
            "SELECT name, owner, disabled, created, rotated FROM bots WHERE key_sha256 = :key",
            key=key_hash(key),
        )
        if not rows:
            return None
        r = rows[0]
        return Bot(r[0], r[1], bool(r[2]), r[3], r[4])

    def enabled_bots(self) -> set[str]:
        """The names of the bots that are not disabled (one query per scheduler pass)."""
        return {r[0] for r in self._read("SELECT name FROM bots WHERE disabled = 0")}

    def enabled(self, name: str) -> bool:
        rows = self._read("SELECT disabled FROM bots WHERE name = :name", name=name)
        return bool(rows) and not rows[0][0]

    # -- events ----------------------------------------------------------------------------

    def create_event(
        self,
        name: str,
        fmt: str,
        settings: dict[str, Any],
        matches: Sequence[tuple[tuple[str, str, str, str], int]],
    ) -> None:
        """Store an event and its schedule (seats and seed of every match), all at once.

        Raises:
            ArenaError: the name is taken, or a bot is not registered.
        """
        known = {b.name for b in self.bots()}
        unknown = sorted({n for seats, _ in matches for n in seats} - known)
        if unknown:
            raise ArenaError(f"not registered: {', '.join(unknown)} (arena bots add NAME)")
        try:
            with self._tx() as db:
                db.execute(
                    _q(
                        "INSERT INTO events (name, format, settings, state, created) "
                        "VALUES (:name, :format, :settings, :state, :now)"
                    ),
                    {
                        "name": name,
                        "format": fmt,
                        "settings": json.dumps(settings, sort_keys=True),
                        "state": RUNNING,
                        "now": _now(),
                    },
                )
                self._append(db, name, 0, matches)
        except sa.exc.IntegrityError:
            raise NameTaken(f"an event named {name!r} already exists") from None

    def events(self, state: str | None = None) -> list[Event]:
        where = "" if state is None else " WHERE state = :state"
        rows = self._read(
            f"SELECT name, format, settings, state, created FROM events{where} "
            "ORDER BY created, name",
            state=state,
        )
        return [Event(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in rows]

    def event(self, name: str) -> Event:
        rows = self._read(
            "SELECT name, format, settings, state, created FROM events WHERE name = :name",
            name=name,
        )
        if not rows:
            raise NotFound(f"no event named {name!r}")
        r = rows[0]
        return Event(r[0], r[1], json.loads(r[2]), r[3], r[4])

    def finish_event(self, name: str) -> None:
        """End an event now (a continuous ladder): nothing new starts; what runs ends."""
        with self._tx() as db:
            cursor = db.execute(
                _q("UPDATE events SET state = :state WHERE name = :name"),
                {"state": FINISHED, "name": name},
            )
            db.execute(
                _q("DELETE FROM event_matches WHERE event = :name AND state = :pending"),
                {"name": name, "pending": PENDING},
            )
        if cursor.rowcount == 0:
            raise NotFound(f"no event named {name!r}")

    def matches(self, event: str, state: str | None = None) -> list[EventMatch]:
        where = "" if state is None else " AND state = :state"
        rows = self._read(
            "SELECT event, idx, seats, seed, state, match_id, record, result "
            f"FROM event_matches WHERE event = :event{where} ORDER BY idx",
            event=event,
            state=state,
        )
        return [
            EventMatch(
                r[0],
                r[1],
                tuple(json.loads(r[2])),
                r[3],
                r[4],
                r[5],
                r[6],
                json.loads(r[7]) if r[7] else None,
            )
            for r in rows
        ]

    def _set(self, event: str, index: int, **values: Any) -> None:
        assign = ", ".join(f"{k} = :{k}" for k in values)
        with self._tx() as db:
            db.execute(
                _q(f"UPDATE event_matches SET {assign} WHERE event = :event AND idx = :idx"),
                {**values, "event": event, "idx": index},
            )

    def mark_running(self, event: str, index: int, match_id: str) -> None:
        self._set(event, index, state=RUNNING, match_id=match_id)

    def mark_pending(self, event: str, index: int) -> None:
        """Back to the queue: the match never started (no record), so nothing is lost."""
        self._set(event, index, state=PENDING, match_id=None, record=None)

    def mark_finished(
        self, event: str, index: int, state: str, record: str, result: dict[str, Any]
    ) -> None:
        """``state``: finished, cancelled or failed; the event ends with its last match
        (a Swiss event after its last round; a ladder of N matches after N; a continuous
        ladder, ``matches`` 0, only by :meth:`finish_event`).

        The event's row is locked first, so that two of its matches finishing at once (the
        lobby's watchers each write from a thread of their own) count each other: under
        PostgreSQL's READ COMMITTED each transaction would otherwise count the other's
        match as still running, and neither would end the event (SQLite serializes
        writers anyway)."""
        with self._tx() as db:
            db.execute(_q("UPDATE events SET state = state WHERE name = :name"), {"name": event})
            db.execute(
                _q(
                    "UPDATE event_matches SET state = :state, record = :record, "
                    "result = :result, finished = :now WHERE event = :event AND idx = :idx"
                ),
                {
                    "state": state,
                    "record": record,
                    "result": json.dumps(result, sort_keys=True),
                    "now": _now(),
                    "event": event,
                    "idx": index,
                },
            )
            counts = db.execute(
                _q(
                    "SELECT COUNT(*), SUM(CASE WHEN state IN (:p, :r) THEN 1 ELSE 0 END) "
                    "FROM event_matches WHERE event = :event"
                ),
                {"p": PENDING, "r": RUNNING, "event": event},
            ).one()
            total, left = int(counts[0]), int(counts[1] or 0)
            settings = json.loads(
                db.execute(
                    _q("SELECT settings FROM events WHERE name = :name"), {"name": event}
                ).scalar_one()
            )
            fmt, limit = settings.get("format"), int(settings.get("matches", 0))
            more = (
                fmt == "swiss" and int(settings.get("round", 1)) < int(settings.get("rounds", 1))
            ) or (fmt == "ladder" and (limit == 0 or total < limit))
            if left == 0 and not more:
                db.execute(
                    _q("UPDATE events SET state = :state WHERE name = :name AND state = :r"),
                    {"state": FINISHED, "name": event, "r": RUNNING},
                )

    @staticmethod
    def _append(
        db: Connection, event: str, start: int, matches: Sequence[tuple[tuple[str, ...], int]]
    ) -> None:
        if matches:
            db.execute(
                _q(
                    "INSERT INTO event_matches (event, idx, seats, seed, state) "
                    "VALUES (:event, :idx, :seats, :seed, :state)"
                ),
                [
                    {
                        "event": event,
                        "idx": start + i,
                        "seats": json.dumps(list(seats)),
                        "seed": seed,
                        "state": PENDING,
                    }
                    for i, (seats, seed) in enumerate(matches)
                ],
            )

    def _count(self, db: Connection, event: str) -> int:
        return int(
            db.execute(
                _q("SELECT COUNT(*) FROM event_matches WHERE event = :event"), {"event": event}
            ).scalar_one()
        )

    def add_matches(self, event: str, matches: Sequence[tuple[tuple[str, ...], int]]) -> None:
        """Append matches to an event (a ladder's next pairings), at the end."""
        with self._tx() as db:
            self._append(db, event, self._count(db, event), matches)

    def add_round(
        self, event: str, round_no: int, matches: Sequence[tuple[tuple[str, ...], int]]
    ) -> None:
        """Append a Swiss round's matches and move the event to that round, at once."""
        with self._tx() as db:
            settings = json.loads(
                db.execute(
                    _q("SELECT settings FROM events WHERE name = :name"), {"name": event}
                ).scalar_one()
            )
            if int(settings.get("round", 1)) >= round_no:
                return  # already added (a second scheduler pass)
            settings["round"] = round_no
            db.execute(
                _q("UPDATE events SET settings = :settings WHERE name = :name"),
                {"settings": json.dumps(settings, sort_keys=True), "name": event},
            )
            self._append(db, event, self._count(db, event), matches)


def open_store(database: str | Path | None, records: str | Path = "records") -> Store:
    """Open the competition database ``--database`` names (see
    :func:`arena.competition.database.database_url`), creating and migrating it as needed.

    Raises:
        ArenaError: it cannot be opened, or holds a schema newer than this arena's.
    """
    return Store(open_engine(database, records))
