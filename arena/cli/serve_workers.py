"""``arena serve --workers N``: the front process and its options (docs/workers.md).

With more than one worker, ``arena serve`` becomes a front: it starts N worker
processes (:mod:`arena.cli.serve_worker`, each a whole arena server on its own port),
listens on ``--listen`` for organisers, spectators and bots, and shares the matches out
(:mod:`arena.server.workers`). Each worker uses one core; the front only routes.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.cli.options import address
from arena.errors import ArenaError
from arena.server import Access, Limits, ServerTls, open_workers_server
from arena.server.placement import AUTO, OFF, cpu_for, parse_setting
from arena.server.workers.run import Extend

log = structlog.get_logger()


def cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of workers") from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError("give 1 to 256 workers")
    return value


def add_worker_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("workers (docs/workers.md)")
    group.add_argument(
        "--workers",
        type=_count,
        default=None,
        metavar="N",
        help=f"run matches in N worker processes, one core each, behind --listen "
        f"(default: the number of cores, {cores()} here; 1 = one process, as before)",
    )
    group.add_argument(
        "--cpu-pinning",
        type=_pinning,
        default=AUTO,
        metavar="auto|off|CPU",
        help="auto (default): keep each serving process's two Python threads (the "
        "referee's and gRPC's, which share one GIL) on one CPU, worker i on the i-th CPU "
        "this process may use: at 250 matches ~1.6× the decisions/s of letting them move "
        "between CPUs (docs/workers.md); off: let the OS place them; a CPU number: that "
        "CPU (one process, or a --join worker)",
    )
    group.add_argument(
        "--advertise",
        default=None,
        metavar="HOST",
        help="the host name bots use to reach the workers (Create's seat_address); "
        "default the --listen host (this machine's name if that is 0.0.0.0 or ::)",
    )
    group.add_argument(
        "--join",
        default=None,
        type=address,
        metavar="FRONT",
        help="be a worker of the arena serve --workers N at FRONT (host:port), from any "
        "host: serve its matches on --listen; needs the front's organiser token "
        "(--organiser-token-file); a plaintext front takes only a worker on its own host",
    )
    group.add_argument(
        "--join-ca",
        default=None,
        metavar="PEM",
        help="with --join: the CA of the front's certificate (a worker with --tls-cert dials "
        "the front with TLS, and presents that certificate to a front with --tls-client-ca)",
    )


def _pinning(text: str) -> str:
    try:
        return parse_setting(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cpu_of(setting: str, workers: int) -> int | None:
    """The CPU of a lone serving process (``workers`` 1), or None; checks the setting for
    any count: raises ArenaError for a CPU number given to several workers or one not
    allowed here (each worker takes its own, :func:`serve_worker.worker_cpu`)."""
    if workers > 1 and setting not in (AUTO, OFF):
        raise ArenaError(f"--cpu-pinning {setting} would put all {workers} workers on one "
                         "CPU: give --workers 1 (one process), or auto or off")  # fmt: skip
    try:
        return cpu_for(setting)
    except ValueError as exc:
        raise ArenaError(f"--cpu-pinning: {exc}") from None


def worker_count(requested: int | None) -> int:
    """``--workers``, or its default."""
    return requested if requested is not None else cores()


def advertised(listen_host: str, advertise: str | None) -> str:
    """The host in the workers' addresses given to bots."""
    if advertise:
        return advertise
    if listen_host.strip("[]") in ("0.0.0.0", "::", ""):
        return socket.getfqdn()
    return listen_host


def worker_settings(args: argparse.Namespace, access: Access, limits: Limits) -> dict[str, Any]:
    """What every worker reads on its stdin (secrets stay off command lines)."""
    tls = [args.tls_cert, args.tls_key, args.tls_client_ca] if args.tls_cert else None
    http_host = args.http.rsplit(":", 1)[0] if args.http else ""
    return {
        "records": args.records,
        "organiser_tokens": list(access.organiser_tokens),
        "spectator_tokens": list(access.spectator_tokens),
        "open": access.open,
        "spectator_delay": [access.spectator_delay.amount, access.spectator_delay.unit],
        "tls": tls,
        "limits": dataclasses.asdict(limits),
        "http": f"{http_host}:0" if args.http else None,
        "log_level": args.log_level,
        "log_json": args.log_json,
        "cpu_pinning": args.cpu_pinning,  # worker i takes the i-th CPU (auto)
    }


def shares(records: Path, count: int, resume: bool) -> list[list[str]]:
    """The records each worker looks at to resume (it skips the complete ones)."""
    paths = sorted(str(p) for p in records.glob("*.jsonl")) if resume else []
    return [paths[i::count] for i in range(count)]


def run_front(args: argparse.Namespace, access: Access, tls: ServerTls | None, limits: Limits,
              count: int, competition: bool = False) -> int:  # fmt: skip
    """The front of ``count`` workers; with ``competition`` (a competition database was
    found) the front also runs the lobby and the ``Competition`` service, the event
    matches in the workers (:mod:`arena.competition.shards`)."""
    if args.join:
        from arena.cli.serve_join import run_join

        if competition:
            print("arena serve: a worker (--join) takes no --database: the front runs the "
                  "lobby", file=sys.stderr)  # fmt: skip
            return 2
        return run_join(args, access, tls)
    extend = None
    if competition:
        from arena.competition.database import database_url
        from arena.competition.service import front_extensions

        extend = front_extensions(database_url(args.database, args.records), args.records)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            trio.run(_front, args, access, tls, limits, count, extend)
    except ArenaError as exc:
        print(f"arena serve: {exc}", file=sys.stderr)
        return 1
    return 0


async def _front(
    args: argparse.Namespace,
    access: Access,
    tls: ServerTls | None,
    limits: Limits,
    count: int,
    extend: Extend | None,
) -> None:
    from arena.cli.serve import announce  # serve imports this module

    async with open_workers_server(
        args.listen,
        count,
        worker_settings(args, access, limits),
        access,
        tls,
        limits,
        shares(Path(args.records), count, not args.no_resume),
        advertised(args.listen.rsplit(":", 1)[0], args.advertise),
        args.http,
        extend,
    ) as server:
        announce(server.target, args.listen, args.records, access, tls, args.http,
                 server.http_url, f"; {count} workers: {', '.join(server.addresses)}")  # fmt: skip
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                log.info("server_stopping")
                break
