"""Where the competition database is and how it is opened: SQLite or PostgreSQL.

``--database`` names it: nothing (``RECORDS/competition.sqlite3``, the embedded default
that needs no set-up), a file path or ``sqlite:///path``, or a PostgreSQL URL
(``postgresql://user:password@host/dbname``, or ``postgresql:///dbname?host=/socket/dir``).
Both are reached through SQLAlchemy Core, so :mod:`arena.competition.store` writes its
SQL once; PostgreSQL through psycopg 3.

The schema is kept by alembic (revisions in ``migrations/versions``): opening a database
brings it up to this arena's newest revision in one transaction, and a database whose
revision this arena does not know (made by a newer arena) is refused by name rather
than touched. A SQLite file of the first, pre-alembic schema (a ``schema_version`` table
at 1) is stamped with revision 0001, whose tables are the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from arena.errors import ArenaError

DEFAULT_NAME = "competition.sqlite3"
MIGRATIONS = Path(__file__).parent / "migrations"
#: The newest revision in ``migrations/versions`` (tests/test_competition_store.py checks
#: it): a database already there is opened without loading alembic at all (a second
#: off every ``arena bots``/``events`` command).
HEAD = "0001"
POSTGRES_SCHEMES = ("postgresql:", "postgres:", "postgresql+psycopg:")


def is_postgres(database: str | None) -> bool:
    return bool(database) and str(database).startswith(POSTGRES_SCHEMES)


def default_path(records: str | Path) -> Path:
    return Path(records) / DEFAULT_NAME


def database_url(database: str | Path | None, records: str | Path = "records") -> str:
    """The SQLAlchemy URL of ``--database`` (see the module docstring)."""
    if database is None or str(database) == "":
        database = default_path(records)
    text = str(database)
    if is_postgres(text):
        _, _, rest = text.partition("://")
        return "postgresql+psycopg://" + rest
    return "sqlite:///" + text.removeprefix("sqlite:///").removeprefix("sqlite://")


def shown(url: str) -> str:
    """The URL as it may be printed: a SQLite file by its path, a password hidden."""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    text = sa.make_url(url).render_as_string(hide_password=True).replace("+psycopg", "")
    return unquote(text)


def open_engine(database: str | Path | None, records: str | Path = "records") -> Engine:
    """Connect to the competition database, creating (a SQLite file: mode 0600) and
    migrating it as needed.

    Raises:
        ArenaError: it cannot be reached or created, or its schema is newer than ours.
    """
    url = database_url(database, records)
    args: dict[str, Any] = {}
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError as exc:
            raise ArenaError(
                f"cannot open the competition database {path}: {exc.strerror or exc}"
            ) from None
        args["connect_args"] = {"timeout": 10, "check_same_thread": False}
    else:
        args["connect_args"] = {"connect_timeout": 10}
        args["pool_pre_ping"] = True  # a PostgreSQL restart must not stop the server
    try:
        engine = sa.create_engine(url, **args)
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise ArenaError(f"cannot use the competition database {shown(url)}: {exc}") from None
    if url.startswith("sqlite:///"):
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    try:
        migrate(engine)
    except sa.exc.SQLAlchemyError as exc:
        engine.dispose()
        why = str(exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc).strip()
        why = why.splitlines()[0] if why else type(exc).__name__
        raise ArenaError(f"cannot open the competition database {shown(url)}: {why}") from None
    except ArenaError:
        engine.dispose()
        raise
    return engine


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # the CLI writes while the server reads
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision (see the module docstring).

    Raises:
        ArenaError: the database is at a revision this arena does not know.
    """
    with engine.begin() as connection:
        tables = set(sa.inspect(connection).get_table_names())
        current: str | None = None
        if "alembic_version" in tables:
            found = connection.execute(sa.text("SELECT version_num FROM alembic_version"))
            current = found.scalar()
        if current == HEAD:
            return
        from alembic import command
        from alembic.config import Config
        from alembic.script import ScriptDirectory

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = connection
        script = ScriptDirectory.from_config(config)
        head = script.get_current_head()
        if current is not None and current not in {s.revision for s in script.walk_revisions()}:
            raise ArenaError(
                f"the competition database is at schema revision {current}, which this "
                f"arena does not know (its newest is {head}): use the newer arena"
            )
        if current is None and "schema_version" in tables:  # the pre-alembic schema
            version = connection.execute(sa.text("SELECT version FROM schema_version")).scalar()
            if version != 1:
                raise ArenaError(
                    f"the competition database has schema version {version}; this arena "
                    "reads version 1"
                )
            command.stamp(config, "0001")
        if current != head:
            command.upgrade(config, "head")
