"""The competition database: bots, events and the matches of each event.

SQLite through the standard library (the embedded default: nothing to install or set
up), one file, ``<records>/competition.sqlite3`` unless ``--database`` says otherwise.
The schema carries a version (table ``schema_version``); :func:`open_store` creates a new
database and refuses one of another version, so a later migration has a place to go.

Bot keys are 256-bit random tokens; only their SHA-256 is stored (a key that random
needs no slow hash), so a stolen database holds no usable key. The organiser's power
over this file is its file permission (created 0600), as for the organiser token.

Every write is one transaction: the scheduler marks a match ``running`` with its match
id before any seat is offered, and ``finished`` with its result once it ends, so after a
crash each event match is either still to play, resumable from its record, or done.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

SCHEMA_VERSION = 1
DEFAULT_NAME = "competition.sqlite3"

_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE bots (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    key_sha256 TEXT NOT NULL UNIQUE,
    disabled INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    rotated TEXT
);
CREATE TABLE events (
    name TEXT PRIMARY KEY,
    format TEXT NOT NULL,
    settings TEXT NOT NULL,
    state TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE event_matches (
    event TEXT NOT NULL REFERENCES events(name),
    idx INTEGER NOT NULL,
    seats TEXT NOT NULL,
    seed INTEGER NOT NULL,
    state TEXT NOT NULL,
    match_id TEXT,
    record TEXT,
    result TEXT,
    finished TEXT,
    PRIMARY KEY (event, idx)
);
"""

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


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def database_path(database: str | None, records: str = "records") -> Path:
    """The SQLite file of ``--database`` (a path or ``sqlite:///path``), by default in
    the records folder.

    Raises:
        ArenaError: a PostgreSQL URL (not supported yet: docs/competition.md).
    """
    if not database:
        return Path(records) / DEFAULT_NAME
    if database.startswith(("postgresql:", "postgres:")):
        raise ArenaError(
            "PostgreSQL is not supported yet; use a SQLite file (the default, "
            "<records>/competition.sqlite3)"
        )
    return Path(database.removeprefix("sqlite:///").removeprefix("sqlite://"))


class Store:
    """One connection to the competition database (use it from one thread)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.db = connection

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self.db:  # commit, or roll back on an exception
            yield self.db

    def close(self) -> None:
        self.db.close()

    # -- bots ------------------------------------------------------------------------------

    def add_bot(self, name: str, owner: str) -> str:
        """Register a bot; returns its key (shown once, stored only as a hash).

        Raises:
            ArenaError: the name is taken or not a plain name.
        """
        if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
            raise ArenaError(f"bot name {name!r}: use 1-64 letters, digits, '-', '_' or '.'")
        key = "bk-" + secrets.token_urlsafe(32)
        try:
            with self._tx() as db:
                db.execute(
                    "INSERT INTO bots (name, owner, key_sha256, created) VALUES (?, ?, ?, ?)",
                    (name, owner, key_hash(key), _now()),
                )
        except sqlite3.IntegrityError:
            raise ArenaError(f"a bot named {name!r} is already registered") from None
        return key

    def rotate_key(self, name: str) -> str:
        """A new key for ``name``; the old one stops working at once."""
        key = "bk-" + secrets.token_urlsafe(32)
        with self._tx() as db:
            cursor = db.execute(
                "UPDATE bots SET key_sha256 = ?, rotated = ? WHERE name = ?",
                (key_hash(key), _now(), name),
            )
        if cursor.rowcount == 0:
            raise ArenaError(f"no bot named {name!r}")
        return key

    def set_disabled(self, name: str, disabled: bool) -> None:
        with self._tx() as db:
            cursor = db.execute(
                "UPDATE bots SET disabled = ? WHERE name = ?", (int(disabled), name)
            )
        if cursor.rowcount == 0:
            raise ArenaError(f"no bot named {name!r}")

    def bots(self) -> list[Bot]:
        rows = self.db.execute(
            "SELECT name, owner, disabled, created, rotated FROM bots ORDER BY name"
        )
        return [Bot(r[0], r[1], bool(r[2]), r[3], r[4]) for r in rows]

    def bot_by_key(self, key: str) -> Bot | None:
        """The bot whose key this is (looked up by hash), disabled or not."""
        row = self.db.execute(
            "SELECT name, owner, disabled, created, rotated FROM bots WHERE key_sha256 = ?",
            (key_hash(key),),
        ).fetchone()
        return Bot(row[0], row[1], bool(row[2]), row[3], row[4]) if row else None

    def enabled(self, name: str) -> bool:
        row = self.db.execute("SELECT disabled FROM bots WHERE name = ?", (name,)).fetchone()
        return row is not None and not row[0]

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
                    "INSERT INTO events (name, format, settings, state, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (name, fmt, json.dumps(settings, sort_keys=True), RUNNING, _now()),
                )
                db.executemany(
                    "INSERT INTO event_matches (event, idx, seats, seed, state) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [
                        (name, i, json.dumps(list(seats)), seed, PENDING)
                        for i, (seats, seed) in enumerate(matches)
                    ],
                )
        except sqlite3.IntegrityError:
            raise ArenaError(f"an event named {name!r} already exists") from None

    def events(self, state: str | None = None) -> list[Event]:
        rows = self.db.execute(
            "SELECT name, format, settings, state, created FROM events ORDER BY created, name"
        )
        found = [Event(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in rows]
        return [e for e in found if state is None or e.state == state]

    def event(self, name: str) -> Event:
        for event in self.events():
            if event.name == name:
                return event
        raise ArenaError(f"no event named {name!r}")

    def matches(self, event: str, state: str | None = None) -> list[EventMatch]:
        rows = self.db.execute(
            "SELECT event, idx, seats, seed, state, match_id, record, result "
            "FROM event_matches WHERE event = ? ORDER BY idx",
            (event,),
        )
        found = [
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
        return [m for m in found if state is None or m.state == state]

    def mark_running(self, event: str, index: int, match_id: str) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE event_matches SET state = ?, match_id = ? WHERE event = ? AND idx = ?",
                (RUNNING, match_id, event, index),
            )

    def mark_pending(self, event: str, index: int) -> None:
        """Back to the queue: the match never started (no record), so nothing is lost."""
        with self._tx() as db:
            db.execute(
                "UPDATE event_matches SET state = ?, match_id = NULL, record = NULL "
                "WHERE event = ? AND idx = ?",
                (PENDING, event, index),
            )

    def mark_finished(
        self, event: str, index: int, state: str, record: str, result: dict[str, Any]
    ) -> None:
        """``state``: finished, cancelled or failed; the event ends with its last match."""
        with self._tx() as db:
            db.execute(
                "UPDATE event_matches SET state = ?, record = ?, result = ?, finished = ? "
                "WHERE event = ? AND idx = ?",
                (state, record, json.dumps(result, sort_keys=True), _now(), event, index),
            )
            left = db.execute(
                "SELECT COUNT(*) FROM event_matches WHERE event = ? AND state IN (?, ?)",
                (event, PENDING, RUNNING),
            ).fetchone()[0]
            settings = json.loads(
                db.execute("SELECT settings FROM events WHERE name = ?", (event,)).fetchone()[0]
            )
            total = db.execute(
                "SELECT COUNT(*) FROM event_matches WHERE event = ?", (event,)
            ).fetchone()[0]
            fmt = settings.get("format")
            more = (
                fmt == "swiss" and int(settings.get("round", 1)) < int(settings.get("rounds", 1))
            ) or (fmt == "ladder" and total < int(settings.get("matches", 0)))
            if left == 0 and not more:
                db.execute("UPDATE events SET state = ? WHERE name = ?", (FINISHED, event))

    def add_matches(self, event: str, matches: Sequence[tuple[tuple[str, ...], int]]) -> None:
        """Append matches to an event (a ladder's next pairing), at the end."""
        with self._tx() as db:
            start = db.execute(
                "SELECT COUNT(*) FROM event_matches WHERE event = ?", (event,)
            ).fetchone()[0]
            db.executemany(
                "INSERT INTO event_matches (event, idx, seats, seed, state) VALUES (?, ?, ?, ?, ?)",
                [
                    (event, start + i, json.dumps(list(seats)), seed, PENDING)
                    for i, (seats, seed) in enumerate(matches)
                ],
            )

    def add_round(
        self, event: str, round_no: int, matches: Sequence[tuple[tuple[str, ...], int]]
    ) -> None:
        """Append a Swiss round's matches and move the event to that round, at once."""
        with self._tx() as db:
            settings = json.loads(
                db.execute("SELECT settings FROM events WHERE name = ?", (event,)).fetchone()[0]
            )
            if int(settings.get("round", 1)) >= round_no:
                return  # already added (a second scheduler pass)
            settings["round"] = round_no
            db.execute(
                "UPDATE events SET settings = ? WHERE name = ?",
                (json.dumps(settings, sort_keys=True), event),
            )
            start = db.execute(
                "SELECT COUNT(*) FROM event_matches WHERE event = ?", (event,)
            ).fetchone()[0]
            db.executemany(
                "INSERT INTO event_matches (event, idx, seats, seed, state) VALUES (?, ?, ?, ?, ?)",
                [
                    (event, start + i, json.dumps(list(seats)), seed, PENDING)
                    for i, (seats, seed) in enumerate(matches)
                ],
            )


def open_store(path: Path) -> Store:
    """Open (creating if new, mode 0600) the competition database at ``path``.

    Raises:
        ArenaError: the file cannot be opened, or holds another schema version.
    """
    new = not path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if new:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        db = sqlite3.connect(path, timeout=10, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise ArenaError(f"cannot open the competition database {path}: {exc}") from None
    db.isolation_level = "DEFERRED"
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA foreign_keys=ON")
    has_schema = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not has_schema:
        with db:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    version = db.execute("SELECT version FROM schema_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        db.close()
        raise ArenaError(
            f"the competition database {path} has schema version {version}; this arena "
            f"reads version {SCHEMA_VERSION}"
        )
    return Store(db)
