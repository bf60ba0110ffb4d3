"""``arena serve``: a long-running referee server for organisers.

Matches are created through the ``arena.v1.Matches`` service (Create → match id, four
seat tokens, the address they play at); bots connect to ``arena.v1.Arena`` there. Matches
run in one worker process per core (``--workers``, docs/workers.md), each writing its
record under ``--records``. Stop with Ctrl-C: running matches are cancelled and recorded.

Every resource a client can make the server hold is bounded; the limits below are the
defaults for a competition (docs/limits.md explains each). The records directory must
be writable and have --min-free-bytes free, at start and before each match.

The Matches service needs the organiser token (metadata ``authorization: Bearer
TOKEN``): it is read from ``--organiser-token-file``, or generated there (mode 0600) at
the first start; ``arena matches`` finds it in the same default place. ``--open`` drops
that requirement (a trusted LAN or CI only). docs/security.md has the roles, TLS and
the spectator delay; docs/organiser.md how to run a competition.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import ipaddress
import signal
import socket
import sys
from collections.abc import Collection
from functools import partial
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.cli.logs import add_logging_options, configure_logging
from arena.cli.options import listen_address
from arena.cli.serve_workers import add_worker_options, cpu_of, run_front, worker_count
from arena.errors import ArenaError
from arena.records import read_record
from arena.server import (
    Access,
    Limits,
    MatchHost,
    Plugin,
    ServerTls,
    SpectatorDelay,
    add_limit_options,
    default_token_file,
    limits_of,
    load_or_create_token,
    loose_permissions,
    open_arena_server,
    read_token_file,
    record_factory,
    records_problem,
)
from arena.text import printable

log = structlog.get_logger()


def resume_matches(host: MatchHost, folder: Path, only: Collection[str] | None = None) -> list[str]:
    """Restore every match whose record in ``folder`` is incomplete (a crash cut it off):
    each carries on from its last complete decision once its bots reconnect. ``only``:
    look at these record paths alone (a worker's share, ``--workers``)."""
    restored: list[str] = []
    paths = sorted(folder.glob("*.jsonl")) if only is None else sorted(map(Path, only))
    for path in paths:
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


def competition_plugins(database: str | None, records: str) -> list[Plugin]:
    """The lobby, scheduler and ``Competition`` service if there is a competition database
    (``--database``, or ``RECORDS/competition.sqlite3``), opened (and migrated) here so a
    bad one stops the start at once (ArenaError)."""
    from arena.competition.database import database_url, default_path, shown
    from arena.competition.service import competition_plugin, lobby_plugin
    from arena.competition.store import open_store

    if database is None and not default_path(records).exists():
        return []
    url = database_url(database, records)
    open_store(url).close()
    print(f"competition database: {shown(url)} (lobby open)", file=sys.stderr, flush=True)
    return [lobby_plugin(url, records), competition_plugin(url)]


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
        "--http",
        default=None,
        metavar="HOST:PORT",
        help="also serve web pages (match list, live tables, replays), /metrics and /healthz "
        "on this address (off by default; docs/operations.md)",
    )
    p.add_argument(
        "--no-resume",
        action="store_true",
        help="do not resume the matches whose records in --records are incomplete",
    )
    p.add_argument(
        "--database",
        default=None,
        metavar="FILE|URL",
        help="the competition database (registered bots, events; docs/competition.md): a "
        "SQLite file or a postgresql://USER@HOST/DB URL; default RECORDS/competition.sqlite3, "
        "used if it exists",
    )
    access = p.add_argument_group("access (docs/security.md)")
    access.add_argument(
        "--organiser-token-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="the organiser token for the Matches service; generated (mode 0600) if FILE "
        f"does not exist (default {_tilde(default_token_file())})",
    )
    access.add_argument(
        "--spectator-token-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="a token that may list, get, watch (delayed) and fetch spectator records",
    )
    access.add_argument(
        "--open",
        action="store_true",
        help="no credential needed for the Matches service (trusted LAN or CI only)",
    )
    access.add_argument(
        "--spectator-delay",
        type=_delay,
        default=SpectatorDelay(),
        metavar="N tricks|deals",
        help="keep spectators (Watch, FetchRecord of a running match) this far behind, "
        "e.g. '3 tricks' or '1 deal' (default 0)",
    )
    tls = p.add_argument_group("TLS")
    tls.add_argument("--tls-cert", metavar="PEM", help="serve TLS with this certificate chain")
    tls.add_argument("--tls-key", metavar="PEM", help="the certificate's private key")
    tls.add_argument(
        "--tls-client-ca",
        metavar="PEM",
        help="require client certificates signed by this CA (mutual TLS)",
    )
    add_worker_options(p)
    add_limit_options(p)
    add_logging_options(p, default="info")
    p.set_defaults(func=run)


def _delay(text: str) -> SpectatorDelay:
    try:
        return SpectatorDelay.parse(text)
    except ArenaError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_say = partial(print, file=sys.stderr, flush=True)  # a line for the operator, at once


def _warn(line: str, event: str, **where: str) -> None:
    """A warning the operator reads at start-up, and the same in the structured log."""
    _say(f"WARNING: {line}")
    log.warning(event, **where)


def _loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may well be on the network
        return False


def _tilde(path: Path) -> str:
    home = str(Path.home())
    return "~" + str(path)[len(home) :] if str(path).startswith(home + "/") else str(path)


def access_of(args: argparse.Namespace) -> Access:
    """The server's access rules from the command line; prints where the token is.

    Raises:
        ArenaError: an unreadable or empty token file.
    """
    spectators: tuple[str, ...] = ()
    if args.spectator_token_file is not None:
        spectators = (read_token_file(args.spectator_token_file),)
    path = args.organiser_token_file or default_token_file()
    if args.open:  # no token needed; an existing one still works (arena matches sends it)
        known = (read_token_file(path),) if path.exists() else ()
        return Access(known, spectators, True, args.spectator_delay)
    token, created = load_or_create_token(path)
    if created:
        print(f"organiser token: generated in {path} (mode 0600)", file=sys.stderr)
    else:
        print(f"organiser token: {path}", file=sys.stderr)
        if loose_permissions(path):
            log.warning("token_file_readable_by_others", path=str(path), fix=f"chmod 600 {path}")
    return Access((token,), spectators, False, args.spectator_delay)


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
    try:
        if (args.tls_cert is None) != (args.tls_key is None):
            raise ArenaError("TLS needs both --tls-cert and --tls-key")
        if args.tls_client_ca and not args.tls_cert:
            raise ArenaError("--tls-client-ca needs --tls-cert and --tls-key")
        tls = (
            ServerTls.from_files(args.tls_cert, args.tls_key, args.tls_client_ca)
            if (args.tls_cert)
            else None
        )
        access = access_of(args)
        plugins = competition_plugins(args.database, args.records)
        limits = limits_of(args)
        workers = worker_count(args.workers)
        cpu = cpu_of(args.cpu_pinning, 1 if args.join else workers)
    except ArenaError as exc:
        print(f"arena serve: {exc}", file=sys.stderr)
        return 2
    problem = records_problem(Path(args.records), limits.min_free_bytes)
    if problem is not None:
        print(f"arena serve: {problem}", file=sys.stderr)
        return 1
    if workers > 1 or args.join:
        return run_front(args, access, tls, limits, workers, competition=bool(plugins))
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(_serve, args.listen, args.records, not args.no_resume, access, tls, limits,
                 args.http, plugins, cpu)  # fmt: skip
    return 0


async def _serve(
    listen: str,
    records: str,
    resume: bool,
    access: Access,
    tls: ServerTls | None,
    limits: Limits,
    http: str | None = None,
    plugins: list[Plugin] | None = None,
    cpu: int | None = None,
) -> None:
    restore = partial(resume_matches, folder=Path(records)) if resume else None
    async with open_arena_server(
        listen,
        record_factory(None, records),
        restore,
        access,
        tls,
        limits=limits,
        records=Path(records),
        http=http,
        plugins=plugins or (),
        settle_gc=True,
        cpu=cpu,
    ) as server:
        announce(server.target, listen, records, access, tls, http, server.http_url)
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                log.info("server_stopping")
                break


def announce(
    target: str,
    listen: str,
    records: str,
    access: Access,
    tls: ServerTls | None,
    http: str | None,
    http_url: str,
    workers: str = "",
) -> None:
    """Say where the server listens, and warn of plaintext on a network or ``--open``."""
    scheme = "TLS" + (" with client certificates" if tls and tls.client_ca else "")
    _say(
        f"arena serving on {target} ({scheme if tls else 'plaintext'}; records in "
        f"{records}/{workers}); Ctrl-C to stop"
    )
    if http_url:
        _say(f"web pages on {http_url}/ (metrics: {http_url}/metrics)")
        web_host = (http or "").rsplit(":", 1)[0].strip("[]")
        if not _loopback(web_host):
            _warn(
                f"the web pages on {web_host} are plain HTTP: a spectator's token "
                "crosses the network in clear text; put a TLS reverse proxy in front "
                "(docs/web.md)",
                "http_plaintext_on_network",
                host=web_host,
            )
    host = listen.rsplit(":", 1)[0].strip("[]")
    if tls is None and not _loopback(host):
        _warn(
            f"plaintext on {host}: seat tokens and hands cross the network in "
            "clear text; use --tls-cert and --tls-key (docs/security.md)",
            "server_plaintext_on_network",
            host=host,
        )
    if access.open:
        _warn(
            f"--open: anyone who can reach {target} may create, cancel and "
            "read every match without a credential",
            "server_open",
            target=target,
        )
    log.info(
        "server_started",
        target=target,
        records=records,
        tls=tls is not None,
        open=access.open,
        spectator_delay=str(access.spectator_delay),
    )
