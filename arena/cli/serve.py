"""``arena serve``: a long-running referee server for organisers.

Matches are created through the ``arena.v1.Matches`` service (Create → match id and four
seat tokens); bots connect to ``arena.v1.Arena`` with their tokens. Every match writes
its record under ``--records``. Stop with Ctrl-C: running matches are cancelled and
recorded as such.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import signal
import socket
import sys
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.cli.logs import add_logging_options, configure_logging
from arena.cli.options import listen_address
from arena.errors import ArenaError
from arena.records import read_record
from arena.server.app import open_arena_server
from arena.server.host import MatchHost
from arena.server.recording import record_factory

log = structlog.get_logger()


def resume_matches(host: MatchHost, folder: Path) -> list[str]:
    """Restore every match whose record in ``folder`` is incomplete (a crash cut it off):
    each carries on from its last complete decision once its bots reconnect."""
    restored: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):
        record = read_record(path)
        if record.complete or record.header is None:
            continue
        try:
            hosted = host.restore(str(path))
        except (ArenaError, OSError) as exc:
            log.warning("record_not_resumed", record=str(path), reason=str(exc))
            continue
        print(f"resuming match {hosted.id} from {path}", file=sys.stderr, flush=True)
        restored.append(hosted.id)
    return restored


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="run a long-lived referee server (matches created over gRPC)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--listen",
        default="127.0.0.1:50051",
        type=listen_address,
        metavar="HOST:PORT",
        help="address to listen on (default 127.0.0.1:50051; port 0 = any free)",
    )
    p.add_argument(
        "--records",
        default="records",
        metavar="DIR",
        help="folder for match records (default ./records)",
    )
    p.add_argument(
        "--no-resume",
        action="store_true",
        help="do not resume the matches whose records in --records are incomplete",
    )
    add_logging_options(p, default="info")
    p.set_defaults(func=run)


def check_free(listen: str) -> None:
    """Fail with one clear line if ``listen`` cannot be bound (taken, or no such host)
    before gRPC tries: gRPC's own failure is a C-core log line and a generic error."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ArenaError(
            f"cannot listen on {listen}: unknown host {host!r} ({exc.strerror})"
        ) from None
    family, kind, proto, _, where = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # as gRPC does: a port left in TIME_WAIT by a server just stopped is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except OSError as exc:
            why = (
                "the port is in use (another arena serve? choose another --listen port)"
                if exc.errno == errno.EADDRINUSE
                else exc.strerror or str(exc)
            )
            raise ArenaError(f"cannot listen on {listen}: {why}") from None


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_level, args.log_json)
    check_free(args.listen)
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(_serve, args.listen, args.records, not args.no_resume)
    return 0


async def _serve(listen: str, records: str, resume: bool) -> None:
    restore = partial(resume_matches, folder=Path(records)) if resume else None
    async with open_arena_server(listen, record_factory(None, records), restore) as server:
        print(
            f"arena serving on {server.target} (records in {records}/); Ctrl-C to stop",
            file=sys.stderr,
            flush=True,
        )
        log.info("server_started", target=server.target, records=records)
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                log.info("server_stopping")
                break
