"""Bounds on everything a client controls, and the checks that apply them.

``arena serve`` runs for days with strangers' bots and organisers. Every resource a
client can make the server hold — bytes buffered for a seat or a connection, cards in
an action, ``Check`` calls, streams, ``Watch`` subscriptions, live matches, the length
of every string, the size of a ``List`` answer, the time a finished match stays in
memory — has one bound here, a server setting with a default that suits a
competition (docs/limits.md). Going over a bound is a clear gRPC status
(``RESOURCE_EXHAUSTED``, ``INVALID_ARGUMENT``) or a recorded fault; never a crash, and
never a slowdown of other matches.

This module holds the settings and the pure checks; the servicers and the host call
them (keeping the bounds in one place, apart from authentication and the referee).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from arena.errors import ArenaError

MiB = 1024 * 1024


class LimitExceeded(ArenaError):
    """A bound refuses the request (``RESOURCE_EXHAUSTED``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """The server's bounds (``arena serve --help`` lists each with its flag)."""

    #: largest message a client may send (gRPC ``max_receive_message_length``)
    max_message_bytes: int = 64 * 1024
    #: unrequested bytes kept for one seat (answers sent while no request is pending);
    #: more are dropped and counted
    seat_buffer_bytes: int = 256 * 1024
    #: bytes read from one stream and not yet taken by the referee; past it the server
    #: stops reading that stream (HTTP/2 flow control then holds the client back)
    connection_buffer_bytes: int = 1 * MiB
    #: cards in one Action or Check (two decks: a hand holds at most 33 cards)
    max_cards: int = 64
    #: Check calls per seat per decision (and per seat between decisions)
    checks_per_decision: int = 32
    #: concurrent streams on one HTTP/2 connection (gRPC ``max_concurrent_streams``)
    streams_per_connection: int = 32
    #: concurrent RPCs on the whole server (gRPC ``maximum_concurrent_rpcs``)
    max_rpcs: int = 4096
    #: Watch streams one client (peer address) may hold at once
    watches_per_client: int = 16
    #: Watch streams on one match at once
    watches_per_match: int = 64
    #: batches of events queued for one slow Watch reader before its stream is ended
    watch_backlog: int = 20_000
    #: live pages (HTTP event streams of ``--http``) on one match at once
    pages_per_match: int = 64
    #: live (waiting or running) matches one organiser may have
    matches_per_organiser: int = 64
    #: live matches on the whole server
    matches_total: int = 512
    #: characters in any string a client sends (ids, tokens, rule values, reasons)
    max_string: int = 256
    #: characters in a name (seat names; a longer Hello name is cut to this)
    max_name: int = 64
    #: entries in the rules map of a Create
    max_rules: int = 32
    #: List page size when the request names none, and the largest allowed
    page_size: int = 100
    max_page_size: int = 1000
    #: seconds a finished match stays in memory; its info and record stay on disk
    retention_s: float = 300.0
    #: seconds a created match waits for its four bots; then a team lacking a seat
    #: forfeits (the match is void if both do)
    join_timeout_s: float = 60.0
    #: free bytes the records directory needs to start a match
    min_free_bytes: int = 64 * MiB

    def refuse_check(
        self, budget: CheckBudget | None, seat: int, asked: int | None, cards: int
    ) -> str | None:
        """A ``Check`` over a bound: raises :class:`LimitExceeded` past the calls per
        decision; the reason for a ``MALFORMED`` verdict when ``cards`` is over
        ``max_cards``; ``None`` if within."""
        if budget is not None and not budget.spend(seat, asked):
            raise LimitExceeded(
                f"more than {self.checks_per_decision} Check calls for this decision "
                "(--checks-per-decision)"
            )
        if cards <= self.max_cards:
            return None
        return f"{cards} cards in one action (at most {self.max_cards})"

    def grpc_options(self) -> tuple[tuple[str, int | str], ...]:
        """The gRPC channel arguments that carry some of these bounds."""
        return (
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.max_concurrent_streams", self.streams_per_connection),
            ("grpc.max_metadata_size", 16 * 1024),
        )


#: (flag, field, type, help) for ``arena serve``; the default comes from ``Limits``
_FLAGS: tuple[tuple[str, str, type, str], ...] = (
    ("--max-message-bytes", "max_message_bytes", int, "largest message a client may send"),
    ("--seat-buffer-bytes", "seat_buffer_bytes", int,
     "unrequested bytes kept per seat; more are dropped"),
    ("--connection-buffer-bytes", "connection_buffer_bytes", int,
     "bytes read from one stream not yet taken by the referee; past it reading pauses"),
    ("--max-cards", "max_cards", int, "cards in one action (more: a MALFORMED fault)"),
    ("--checks-per-decision", "checks_per_decision", int,
     "Check calls per seat per decision (more: RESOURCE_EXHAUSTED)"),
    ("--streams-per-connection", "streams_per_connection", int,
     "concurrent streams on one connection"),
    ("--max-rpcs", "max_rpcs", int, "concurrent RPCs on the whole server"),
    ("--watches-per-client", "watches_per_client", int, "Watch streams one client may hold"),
    ("--watches-per-match", "watches_per_match", int, "Watch streams on one match"),
    ("--watch-backlog", "watch_backlog", int,
     "event batches queued for a slow Watch reader before its stream is ended"),
    ("--pages-per-match", "pages_per_match", int,
     "live pages (HTTP event streams, --http) on one match; more get 503"),
    ("--matches-per-organiser", "matches_per_organiser", int,
     "live matches one organiser (client address) may have"),
    ("--matches-total", "matches_total", int, "live matches on the server"),
    ("--max-string", "max_string", int, "characters in any string a client sends"),
    ("--max-name", "max_name", int, "characters in a name"),
    ("--page-size", "page_size", int, "List page size when none is asked"),
    ("--max-page-size", "max_page_size", int, "largest List page"),
    ("--retention", "retention_s", float,
     "seconds a finished match stays in memory (its record stays on disk)"),
    ("--join-timeout", "join_timeout_s", float,
     "seconds a created match waits for its bots; a team lacking a seat then forfeits"),
    ("--min-free-bytes", "min_free_bytes", int,
     "free bytes the records directory needs to start a match"),
)  # fmt: skip


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """The ``arena serve`` flags for every bound (docs/limits.md explains each)."""
    group = parser.add_argument_group(
        "limits", "bounds on what clients may make the server hold (docs/limits.md)"
    )
    defaults = Limits()
    for flag, field, kind, text in _FLAGS:
        default = getattr(defaults, field)
        shown = f"{default:g}" if kind is float else str(default)
        group.add_argument(
            flag, dest=f"limit_{field}", type=kind, default=default,
            metavar="S" if kind is float else "N", help=f"{text} (default {shown})",
        )  # fmt: skip


def limits_of(args: argparse.Namespace) -> Limits:
    values = {field: getattr(args, f"limit_{field}") for _f, field, _k, _t in _FLAGS}
    for field, value in values.items():
        if value <= 0:
            raise ArenaError(f"--{field.replace('_', '-')} must be positive, got {value}")
    return Limits(**values)


# -- strings ---------------------------------------------------------------------------------


def string_problem(message: Message, limits: Limits, names: tuple[str, ...] = ()) -> str | None:
    """The first string field of ``message`` (nested, repeated or map) longer than
    allowed, described for an ``INVALID_ARGUMENT``; ``None`` if all fit. Fields named
    in ``names`` are names (``max_name``); every other string has ``max_string``."""
    for field, value in message.ListFields():
        where = field.name
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            if len(value) > limits.max_rules:
                return f"{where} has {len(value)} entries (at most {limits.max_rules})"
            for key, item in value.items():
                for text in (key, item):
                    if isinstance(text, str) and len(text) > limits.max_string:
                        return f"{where}[{key[:32]!r}] is {len(text)} characters " \
                               f"(at most {limits.max_string})"  # fmt: skip
            continue
        items = list(value) if field.is_repeated else [value]
        for item in items:
            if isinstance(item, str):
                bound = limits.max_name if field.name in names else limits.max_string
                if len(item) > bound:
                    return f"{where} is {len(item)} characters (at most {bound})"
            elif isinstance(item, Message):
                found = string_problem(item, limits, names)
                if found is not None:
                    return f"{where}.{found}"
    return None


# -- who is asking ---------------------------------------------------------------------------


def client_of(peer: str) -> str:
    """The client behind a gRPC peer string: its address without the port
    (``ipv4:127.0.0.1:5400`` → ``ipv4:127.0.0.1``), a Unix socket as it is."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6") and ":" in rest:
        return f"{kind}:{rest.rsplit(':', 1)[0]}"
    return peer


class Counter:
    """Counts per key, thread-safe: ``acquire`` refuses past ``limit``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def acquire(self, key: str, limit: int) -> bool:
        with self._lock:
            held = self._counts.get(key, 0)
            if held >= limit:
                return False
            self._counts[key] = held + 1
            return True

    def release(self, key: str) -> None:
        with self._lock:
            held = self._counts.get(key, 0) - 1
            if held > 0:
                self._counts[key] = held
            else:
                self._counts.pop(key, None)

    def get(self, key: str) -> int:
        with self._lock:
            return self._counts.get(key, 0)


class LiveCount:
    """Live (waiting or running) matches per organiser (trio thread only)."""

    def __init__(self) -> None:
        self.by_organiser: dict[str, int] = {}

    def admit(self, limits: Limits, organiser: str) -> None:
        """Raise :class:`LimitExceeded` if ``organiser`` may not have one more."""
        total = sum(self.by_organiser.values())
        if total >= limits.matches_total:
            raise LimitExceeded(f"the server already runs {total} live matches (--matches-total)")
        mine = self.by_organiser.get(organiser, 0)
        if mine >= limits.matches_per_organiser:
            raise LimitExceeded(f"you already have {mine} live matches (--matches-per-organiser)")

    def add(self, organiser: str) -> None:
        self.by_organiser[organiser] = self.by_organiser.get(organiser, 0) + 1

    def drop(self, organiser: str) -> None:
        left = self.by_organiser.get(organiser, 0) - 1
        if left > 0:
            self.by_organiser[organiser] = left
        else:
            self.by_organiser.pop(organiser, None)


class CheckBudget:
    """``Check`` calls per seat per decision: a new decision (another ``seq``) refills."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._by_seat: dict[int, tuple[int | None, int]] = {}

    def spend(self, seat: int, seq: int | None) -> bool:
        last, used = self._by_seat.get(seat, (None, 0))
        if last != seq:
            used = 0
        if used >= self.limit:
            return False
        self._by_seat[seat] = (seq, used + 1)
        return True


class ByteGauge:
    """Bytes in flight between two threads: read on the gRPC side, taken on trio's.

    Each counter has one writer (``read`` the gRPC thread, ``taken`` the trio thread),
    and reading an ``int`` the other thread writes is atomic, so no lock is needed: a
    lock cost three acquisitions per decision on the hot path (issue 20).
    """

    __slots__ = ("read", "taken")

    def __init__(self) -> None:
        self.read = 0
        self.taken = 0

    @property
    def in_flight(self) -> int:
        return self.read - self.taken


# -- the records directory -------------------------------------------------------------------


def records_problem(folder: Path, min_free: int, probe: bool = True) -> str | None:
    """Why matches cannot be recorded in ``folder`` now, or ``None``: missing and not
    creatable, not writable (a read-only mount: ``root`` is refused too), or less than
    ``min_free`` bytes free. ``probe`` writes and removes a small file (at start)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"the records directory {folder} cannot be created: {exc.strerror or exc}"
    if not os.access(folder, os.W_OK):
        return f"the records directory {folder} is not writable"
    try:
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        return f"the records directory {folder} cannot be examined: {exc.strerror or exc}"
    if free < min_free:
        return (
            f"the records directory {folder} has {free // 1024} KiB free, "
            f"under the {min_free // 1024} KiB a match needs (--min-free-bytes)"
        )
    if probe:
        test = folder / f".arena-write-test-{uuid.uuid4().hex}"
        try:
            with open(test, "wb") as out:
                out.write(b"x" * 4096)
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            return f"the records directory {folder} cannot be written: {exc.strerror or exc}"
        finally:
            with contextlib.suppress(OSError):
                test.unlink()
    return None


def page_of(token: str) -> int:
    """The position a ``List`` page token stands for. Raises ``ValueError``."""
    if not token:
        return 0
    if not token.startswith("p") or not token[1:].isdigit() or len(token) > 20:
        raise ValueError(f"page_token {token[:40]!r} is not one this server gave")
    return int(token[1:])


def page_asked(token: str, page_size: int, limits: Limits) -> tuple[int, int]:
    """Where a ``List`` page starts and how long it is: the token's position, and the size
    asked for within the limits (their default when none is). Raises ``ValueError``."""
    return page_of(token), min(page_size or limits.page_size, limits.max_page_size)


def page_token(position: int) -> str:
    return f"p{position}"


def is_match_id(text: str) -> bool:
    """A well-formed match id (``m-`` and 12 hex digits): safe to name a file with."""
    return (
        len(text) == 14 and text.startswith("m-") and all(c in "0123456789abcdef" for c in text[2:])
    )


def payload_size(message: Any) -> int:
    """The wire size of a protobuf message (0 for anything else)."""
    size = getattr(message, "ByteSize", None)
    return int(size()) if size is not None else 0


__all__ = [
    "ByteGauge",
    "CheckBudget",
    "Counter",
    "LimitExceeded",
    "Limits",
    "LiveCount",
    "add_limit_options",
    "client_of",
    "is_match_id",
    "limits_of",
    "page_of",
    "page_token",
    "payload_size",
    "records_problem",
    "string_problem",
]
