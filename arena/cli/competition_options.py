"""The ``--database``/``--records`` options ``arena bots`` and ``arena events`` share."""

from __future__ import annotations

import argparse
from typing import Any

from arena.competition.store import Store, database_path, open_store


def add_database_options(p: Any) -> None:
    p.add_argument(
        "--records",
        default="records",
        metavar="DIR",
        help="the server's records folder (default ./records); the database is in it",
    )
    p.add_argument(
        "--database",
        default=None,
        metavar="FILE",
        help="the competition database (default RECORDS/competition.sqlite3, created if new)",
    )


def store_of(args: argparse.Namespace) -> Store:
    """Open the database the options name (ArenaError if it cannot be used)."""
    return open_store(database_path(args.database, args.records))
