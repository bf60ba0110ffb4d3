"""Alembic's environment for the competition database: always run from
:func:`arena.competition.database.migrate` with an open connection (never from an
``alembic.ini``), so SQLite and PostgreSQL take the same revisions."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
