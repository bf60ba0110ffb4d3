"""The first competition schema: bots, events and the matches of each event.

The same tables as the SQLite-only schema version 1 (a database made by that version is
stamped with this revision, not rebuilt); ``seed`` is a 64-bit integer, which PostgreSQL
needs said (BIGINT) where SQLite's INTEGER already holds it.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("key_sha256", sa.Text, nullable=False, unique=True),
        sa.Column("disabled", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created", sa.Text, nullable=False),
        sa.Column("rotated", sa.Text),
    )
    op.create_table(
        "events",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("format", sa.Text, nullable=False),
        sa.Column("settings", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("created", sa.Text, nullable=False),
    )
    op.create_table(
        "event_matches",
        sa.Column("event", sa.Text, sa.ForeignKey("events.name"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("seats", sa.Text, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("match_id", sa.Text),
        sa.Column("record", sa.Text),
        sa.Column("result", sa.Text),
        sa.Column("finished", sa.Text),
        sa.PrimaryKeyConstraint("event", "idx"),
    )


def downgrade() -> None:
    op.drop_table("event_matches")
    op.drop_table("events")
    op.drop_table("bots")
