"""One worker process of ``arena serve --workers N`` (``python -m arena.cli.serve_worker``).

A whole arena server for the matches the front sends it: it reads its settings as one
JSON line on stdin (tokens never appear on a command line), listens on its own port for
bots (TLS as the front) and on a private Unix socket for the front, resumes the records
it is given, and writes JSON lines on stdout: ``{"ready": "host:port", "http": url}``
once it listens, then ``{"match": id, "state": ..., "tokens": [sha256 ...]}`` for each
match it hosts whenever its state changes (``"forgotten"`` once out of memory; an
ended match also says its ``error`` and the seats whose bot never connected,
``absent``). After the settings, stdin carries the front's orders for the competition's
lobby, one JSON line each, answered by ``{"answer": ref, ...}`` on stdout: ``create``
(an event match) and ``seat`` (fresh seat tokens for a restored match) — a pipe from the
front, so no one else can give them. It ends on SIGTERM/SIGINT (cancelling its matches,
as ``arena serve`` does) or when its stdin closes (the front is gone).
:mod:`arena.server.workers.pool` starts it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import IO, Any

import structlog
import trio

from arena.cli.logs import configure_logging
from arena.cli.serve import resume_matches
from arena.competition.places import absent_seats, add_seat_tokens, event_spec
from arena.server import (
    Access,
    Limits,
    MatchHost,
    ServerTls,
    SpectatorDelay,
    die_with_parent,
    open_arena_server,
    record_factory,
)
from arena.server.placement import AUTO, cpu_for

log = structlog.get_logger()

REPORT_EVERY = 0.1  # seconds between two looks at the matches' states


def worker_limits(limits: Limits) -> Limits:
    """A worker's own bounds: the front counts live matches per organiser and Watch
    streams per client across workers (every call it forwards comes from one peer, the
    front), so the worker's per-client bounds must not count them again."""
    return dataclasses.replace(
        limits,
        matches_per_organiser=limits.matches_total,
        watches_per_client=limits.watches_per_match * limits.matches_total,
    )


def main() -> int:
    settings: dict[str, Any] = json.loads(_read_line() or "{}")
    if not settings:
        print("arena serve worker: no settings on stdin (arena serve starts workers)")
        return 2
    die_with_parent(settings["parent"])
    report = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # a stray print goes to the log, never into the reports
    configure_logging(settings["log_level"], settings["log_json"])
    access = Access(
        tuple(settings["organiser_tokens"]),
        tuple(settings["spectator_tokens"]),
        settings["open"],
        SpectatorDelay(*settings["spectator_delay"]),
    )
    tls = ServerTls.from_files(*settings["tls"]) if settings["tls"] else None
    limits = worker_limits(Limits(**settings["limits"]))
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(work, settings, access, tls, limits, report)
    return 0


def worker_cpu(settings: dict[str, Any]) -> int | None:
    """The CPU for this worker's two Python threads (``--cpu-pinning``; worker i takes
    the i-th CPU it may use), or None. ``arena serve`` checked the setting before it
    started the worker; one the host no longer allows (its CPU set changed since) is one
    warning, not a worker that cannot start."""
    try:
        return cpu_for(settings.get("cpu_pinning", AUTO), settings.get("index", 0))
    except ValueError as exc:
        log.warning("cpu_pinning_ignored", reason=str(exc))
        return None


# the task that carries out the front's orders and ends when the front is gone
Orders = Callable[[trio.CancelScope, MatchHost, IO[str]], Awaitable[None]]


async def work(
    settings: dict[str, Any],
    access: Access,
    tls: ServerTls | None,
    limits: Limits,
    report: IO[str],
    orders: Orders | None = None,
) -> None:
    """Serve the worker's matches until the front is gone (``orders`` ends: by default
    stdin, :func:`_lifeline`) or a signal; reports go to ``report``."""
    records = Path(settings["records"])
    shares: list[str] = settings["resume"]
    restore = partial(resume_matches, folder=records, only=shares) if shares else None
    async with open_arena_server(
        settings["listen"],
        record_factory(None, str(records)),
        restore,
        access,
        tls,
        limits=limits,
        records=records,
        http=settings["http"],
        extra_addresses=tuple(a for a in [settings.get("control")] if a),
        settle_gc=True,
        cpu=worker_cpu(settings),
    ) as server:
        seen: dict[str, str] = {}
        _report(server.host, seen, report)  # the restored matches, before "ready"
        target = server.target
        if settings.get("advertise"):  # a worker on another host: its name for bots
            target = f"{settings['advertise']}:{target.rsplit(':', 1)[1]}"
        ready = {"ready": target, "http": server.http_url, "matches": list(seen)}
        print(json.dumps(ready), file=report)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(orders or _lifeline, nursery.cancel_scope, server.host, report)
            nursery.start_soon(_signals, nursery.cancel_scope)
            while True:
                await trio.sleep(REPORT_EVERY)
                _report(server.host, seen, report)


def _report(host: MatchHost, seen: dict[str, str], report: IO[str]) -> None:
    """Tell the front about every match whose state changed since the last look."""
    for match_id, hosted in list(host.matches.items()):
        state = hosted.state.value
        if seen.get(match_id) == state:
            continue
        news: dict[str, Any] = {"match": match_id, "state": state}
        if match_id not in seen:
            news["tokens"] = hosted.token_hashes
        if state in ("finished", "cancelled", "failed"):
            news["error"] = hosted.error
            news["absent"] = absent_seats(host, match_id)
        seen[match_id] = state
        print(json.dumps(news), file=report)
    for match_id in [m for m in seen if m not in host.matches]:
        del seen[match_id]
        print(json.dumps({"match": match_id, "state": "forgotten"}), file=report)


async def _lifeline(scope: trio.CancelScope, host: MatchHost, report: IO[str]) -> None:
    """Carry out the front's orders; stop when stdin ends: the front is gone
    (PR_SET_PDEATHSIG covers Linux anyway)."""
    await trio.to_thread.run_sync(_read_orders, partial(obey, host, report), abandon_on_cancel=True)
    scope.cancel()


def obey(host: MatchHost, report: IO[str], line: bytes) -> None:
    """(trio thread) One order of the front's lobby; the answer goes to ``report``."""
    try:
        order = json.loads(line)
        ref = order["ref"]
    except (ValueError, KeyError, TypeError):
        return
    answer: dict[str, Any] = {"answer": ref}
    try:
        if order["op"] == "create":
            spec = event_spec(order["settings"], int(order["seed"]), order["seats"])
            hosted = host.create(spec)
            answer.update(match=hosted.id, tokens=[t or "" for t in hosted.tokens])
        elif order["op"] == "seat":
            tokens = add_seat_tokens(host, order["match"])
            answer.update(match=order["match"], tokens=tokens)
        else:
            answer["error"] = f"unknown order {order['op']!r}"
    except Exception as exc:  # a bad order must not end the worker: the front is told
        answer["error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(answer), file=report)


def _read_line() -> bytes:
    """The settings line, read unbuffered (nothing past it is taken from stdin)."""
    line = b""
    while not line.endswith(b"\n") and (byte := os.read(0, 1)):
        line += byte
    return line


def _read_orders(obey: Callable[[bytes], None]) -> None:
    """(a thread) Read stdin's lines until it ends, each carried out on the trio thread
    (raw reads: an abandoned thread holds no buffer lock)."""
    buffer = b""
    while chunk := os.read(0, 65536):
        *lines, buffer = (buffer + chunk).split(b"\n")
        for line in lines:
            trio.from_thread.run_sync(obey, line)


async def _signals(scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            scope.cancel()
            return


if __name__ == "__main__":
    sys.exit(main())
