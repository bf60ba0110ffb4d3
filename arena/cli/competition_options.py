"""The option block ``arena bots`` and ``arena events`` share, defined once: where the
competition is (``add_competition_target``) and the organiser that works on it
(``organiser_of``).

Without ``--server`` the commands work on the database itself (``--database``, by
default ``RECORDS/competition.sqlite3``; on the server's machine, as the server's user);
with ``--server HOST:PORT`` they call the server's ``Competition`` service with the
organiser token, found as ``arena matches`` finds it (``--organiser-token-file``, else
``$ARENA_ORGANISER_TOKEN``, else the file ``arena serve`` writes by default).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli.convention import UsageError
from arena.cli.options import address
from arena.errors import ArenaError

if TYPE_CHECKING:  # the database layer loads SQLAlchemy: only for the command that runs
    from arena.competition.organiser import Organiser


def add_competition_target(p: Any) -> None:
    """``--records``/``--database`` (local) or ``--server`` and its credentials."""
    local = p.add_argument_group("the database itself (on the server's machine)")
    local.add_argument(
        "--records",
        default="records",
        metavar="DIR",
        help="the server's records folder (default ./records); the database is in it",
    )
    local.add_argument(
        "--database",
        default=None,
        metavar="FILE|URL",
        help="the competition database: a SQLite file (default RECORDS/competition.sqlite3, "
        "created if new) or postgresql://USER@HOST/DB",
    )
    remote = p.add_argument_group("or a running arena serve (the organiser's token)")
    remote.add_argument(
        "--server",
        default=None,
        type=address,
        metavar="HOST:PORT",
        help="call this server's Competition service instead of opening the database",
    )
    remote.add_argument(
        "--organiser-token-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="the organiser token (default $ARENA_ORGANISER_TOKEN, else the file arena serve "
        "writes by default)",
    )
    remote.add_argument(
        "--tls-ca", default=None, metavar="PEM", help="connect with TLS, trusting this CA"
    )
    remote.add_argument(
        "--timeout", type=float, default=10.0, metavar="S", help="per call (default 10)"
    )


CREATING_VERBS = frozenset({"add", "create"})
"""The verbs that may make a new local database; the others need one that exists."""


def organiser_of(args: argparse.Namespace) -> Organiser:
    """The organiser the options name (ArenaError if the database cannot be used)."""
    if args.server is None:
        from arena.competition.database import database_url, is_postgres, shown
        from arena.competition.organiser import LocalOrganiser
        from arena.competition.store import open_store

        url = database_url(args.database, args.records)
        missing = not is_postgres(args.database) and not Path(shown(url)).is_file()
        if missing and args.verb not in CREATING_VERBS:  # a typo must not list a new, empty one
            raise ArenaError(
                f"no competition database at {shown(url)} (`arena bots add` or "
                "`arena events create` makes one; check --database / --records)"
            )
        return LocalOrganiser(open_store(args.database, args.records))
    if args.database is not None:
        raise UsageError("give --server or --database, not both")
    import grpc

    from arena.cli.matches import organiser_token
    from arena.competition.client import RemoteOrganiser
    from arena.server import channel_credentials

    token = organiser_token(args)
    if args.tls_ca:
        channel = grpc.secure_channel(args.server, channel_credentials(args.tls_ca, None, None))
    else:
        channel = grpc.insecure_channel(args.server)
    return RemoteOrganiser(channel, token, args.timeout)
