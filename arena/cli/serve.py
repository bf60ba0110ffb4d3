"""``arena serve``: a long-running referee server for organisers.

Matches are created through the ``arena.v1.Matches`` service (Create → match id and four
seat tokens); bots connect to ``arena.v1.Arena`` with their tokens. Every match writes
its record under ``--records``. Stop with Ctrl-C: running matches are cancelled and
recorded as such.

Every resource a client can make the server hold is bounded; the limits below are the
defaults for a competition (docs/limits.md explains each). The records directory must
be writable and have --min-free-bytes free, at start and before each match.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.cli.logs import add_logging_options, configure_logging
from arena.errors import ArenaError
from arena.records import read_record
from arena.server.app import open_arena_server
from arena.server.host import MatchHost
from arena.server.limits import Limits, add_limit_options, limits_of, records_problem
from arena.server.recording import record_factory
from arena.text import printable

log = structlog.get_logger()


def resume_matches(host: MatchHost, folder: Path) -> list[str]:
    """Restore every match whose record in ``folder`` is incomplete (a crash cut it off):
    each carries on from its last complete decision once its bots reconnect."""
    restored: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):
        try:
            record = read_record(path)
        except OSError as exc:
            _skip(path, 0, exc.strerror or str(exc))
            continue
        if record.complete:
            continue
        if record.header is None:  # cut off before its header, or a damaged header
            line, why = record.issues[0] if record.issues else (0, "no complete header line")
            _skip(path, line, why)
            continue
        try:
            hosted = host.restore(str(path))
        except (ArenaError, OSError) as exc:
            log.warning("record_not_resumed", record=str(path), reason=str(exc))
            continue
        except Exception as exc:  # a damaged record must not stop the server
            line = record.issues[0][0] if record.issues else 0
            _skip(path, line, f"{type(exc).__name__}: {exc}")
            continue
        print(f"resuming match {hosted.id} from {path}", file=sys.stderr, flush=True)
        restored.append(hosted.id)
    return restored


def _skip(path: Path, line: int, why: str) -> None:
    """One warning naming the damaged record and its line; the server carries on."""
    why = printable(why, 200)
    print(f"arena serve: skipping {path} line {line}: {why}", file=sys.stderr, flush=True)
    log.warning("record_skipped", record=str(path), line=line, reason=why)


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
    add_limit_options(p)
    add_logging_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_level if args.log_level != "warning" else "info", args.log_json)
    try:
        limits = limits_of(args)
    except ArenaError as exc:
        print(f"arena serve: {exc}", file=sys.stderr)
        return 2
    problem = records_problem(Path(args.records), limits.min_free_bytes)
    if problem is not None:
        print(f"arena serve: {problem}", file=sys.stderr)
        return 1
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(_serve, args.listen, args.records, not args.no_resume, limits)
    return 0


async def _serve(listen: str, records: str, resume: bool, limits: Limits) -> None:
    restore = partial(resume_matches, folder=Path(records)) if resume else None
    async with open_arena_server(
        listen, record_factory(None, records), restore, limits, Path(records)
    ) as server:
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
