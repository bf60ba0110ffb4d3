"""When an answer reached this machine: the kernel's receive time on a bot's connection.

A bot is charged from its request's write to its answer's arrival (docs/architecture.md,
"Fair clocks"). :mod:`arena.server.loop_clock` bounds the arrival by the gRPC thread's
loop, but under load an answer waits before the loop can see it at all: in gRPC's
``event_engine`` threads, runnable behind the server's own busy threads for a CPU
(measured by ``bench/clock_parts.py``: at 250 matches in one process, 37 ms at the
median between the bot's write and the server's read, of which the loop bound credits
6). That wait is the server's, yet no timestamp visible to Python is earlier than it.

The kernel keeps one: ``TCP_INFO``'s ``tcpi_last_data_recv`` is the time since the last
data segment arrived on the connection, set in the receive path (for loopback, in the
sender's own ``write``). Read where the answer is read, it dates the answer's last byte —
or a later segment on the same connection (another stream's message, an HTTP/2 ping
acknowledgement), which makes it later, never earlier. A bot's gRPC stack sends such
segments by itself only in reply to the server, so the server sends nothing while a bot
thinks: no bandwidth-delay pings (:mod:`arena.server.grpc_thread`); its keepalive ping,
once in 5 minutes, is the one exception (an answer it follows is charged no more than
the loop's bound gives). It counts in jiffies (4 ms here, :func:`measure_jiffy`),
so one jiffy is taken off: the result is never later than the answer's arrival. The
charge takes the earlier of this and the loop's bound (:meth:`SeatWire.answer`), so it
is never more than the loop's bound alone gave, and a bot cannot move it earlier than
its own answer's last byte: it may be charged up to about two jiffies less than its
time, never more.

Which socket: gRPC owns the connection's file descriptor and tells only the peer's
address (``context.peer()``). :class:`ReceiveClock` finds the descriptor whose socket
has that peer by scanning ``/proc/self/fd`` (new sockets only, at most every
:data:`RESCAN` seconds) and notes the socket's cookie (``SO_COOKIE``: unique to the
socket while the system runs), and checks it again at every read, so a descriptor closed
and reused by another connection is never read as this one's. The check is a
``getsockopt``, as the read is: neither lets go of the GIL, while ``getpeername`` (the
check before, still the fallback on a kernel without cookies) does — at 250 matches in
one process every system call that lets go of the GIL hands it to the other busy
thread and waits to get it back (``bench/server_cpu.py --syscalls``;
docs/architecture.md, "One CPU for the two Python threads"). It wraps the descriptor for
those calls and detaches it in the same function: the descriptor is never closed or kept
here. No ``TCP_INFO`` (not Linux, a Unix socket, a sandboxed bot): no receive time, the
loop's bound alone, as before.
"""

from __future__ import annotations

import _socket
import asyncio
import os
import socket
import struct
import sys
import time
import weakref

RESCAN = 0.05  # s: at most one scan of /proc/self/fd per this, however many streams look
TRIES = 8  # answers a stream's connection is looked for before it is given up (a proxy's)
_TCP_INFO_BYTES = 104
_LAST_DATA_RECV = struct.Struct("=I")  # tcpi_last_data_recv (ms), at offset 52
_OFFSET = 52
_LAST_DATA = struct.Struct("=I4xI")  # tcpi_last_data_sent (ms) at 44, …_recv at 52
_CLOCK_MONOTONIC_COARSE = 6  # <linux/time.h>; not in Python's time module
_LONGEST_TICK = 0.05  # s: HZ is 100 or more on Linux; anything else is not a tick
_SO_COOKIE = 57  # <asm-generic/socket.h> (Linux 4.6+); not in Python's socket module

Peer = tuple[str, int]  # (host, port) of the far end
Found = tuple[int, int, bytes | None]  # a connection's socket: (fd, family, its cookie)


def parse_peer(peer: str) -> Peer | None:
    """``context.peer()`` as (host, port): ``ipv4:127.0.0.1:5400``, ``ipv6:[::1]:5400``
    (or with ``%5B``/``%5D``); None for anything else (a Unix socket)."""
    kind, _, rest = peer.partition(":")
    host, _, port = rest.rpartition(":")
    if kind not in ("ipv4", "ipv6") or not port.isdigit():
        return None
    host = host.replace("%5B", "[").replace("%5D", "]").strip("[]")
    return _plain(host), int(port)


def _plain(host: str) -> str:
    """An IPv4-mapped IPv6 address as the IPv4 one (a dual-stack socket's peer)."""
    return host[7:] if host.startswith("::ffff:") and "." in host else host


def _family_of(fd: int) -> int | None:
    """The address family of socket ``fd`` (gRPC listens dual-stack: AF_INET6)."""
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0, fileno=fd)
    except OSError:
        return None
    try:
        return sock.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN)
    except OSError:
        return None
    finally:
        sock.detach()  # the descriptor is gRPC's: never closed here


def _cookie_of(fd: int) -> bytes | None:
    """The cookie of socket ``fd`` (``SO_COOKIE``), or None (no such option here)."""
    try:
        sock = _socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0, fd)
    except OSError:
        return None
    try:
        cookie: bytes = sock.getsockopt(socket.SOL_SOCKET, _SO_COOKIE, 8)
    except OSError:
        return None
    finally:
        sock.detach()  # the descriptor is gRPC's: never closed here
    return cookie


def _since_if(fd: int, cookie: bytes) -> int | None:
    """``tcpi_last_data_recv`` (ms ago) of socket ``fd`` if it is still the socket with
    ``cookie``; None otherwise. Two ``getsockopt`` calls: the GIL is held throughout.
    (The family given does not matter: no address is decoded.)"""
    try:
        sock = _socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0, fd)
    except OSError:
        return None
    try:
        if sock.getsockopt(socket.SOL_SOCKET, _SO_COOKIE, 8) != cookie:
            return None  # closed, and the number reused by another socket
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    except OSError:
        return None
    finally:
        sock.detach()  # the descriptor is gRPC's: never closed here
    if len(info) < _OFFSET + 4:
        return None
    since: int = _LAST_DATA_RECV.unpack_from(info, _OFFSET)[0]
    return since


def _peer_of(fd: int, family: int) -> tuple[Peer, int] | None:
    """The peer of the connected TCP socket ``fd`` of ``family`` and its last receipt
    (ms ago). The family must be the socket's: CPython decodes the address by it."""
    try:
        sock = socket.socket(family, socket.SOCK_STREAM, 0, fileno=fd)
    except OSError:
        return None
    try:
        address = sock.getpeername()
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    except OSError:
        return None  # not connected (a listener), not TCP, or closed
    finally:
        sock.detach()  # the descriptor is gRPC's: never closed here
    if not isinstance(address, tuple) or len(info) < _OFFSET + 4:
        return None
    since: int = _LAST_DATA_RECV.unpack_from(info, _OFFSET)[0]
    return (_plain(address[0]), address[1]), since


def data_ages(fd: int) -> tuple[int, int] | None:
    """(ms since data last arrived, ms since data last left) on the TCP socket ``fd``, by
    its kernel (to the tick), or None (not TCP, or closed). For tools that watch a
    connection from either end (``bench/``, the tests); the descriptor is not closed."""
    try:
        sock = socket.socket(fileno=fd)  # its family and type read from the descriptor
    except OSError:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    except OSError:
        return None
    finally:
        sock.detach()
    if len(info) < _OFFSET + 4:
        return None
    sent, received = _LAST_DATA.unpack_from(info, 44)
    return received, sent


def measure_jiffy() -> float | None:
    """The kernel's tick in seconds, the unit ``tcpi_last_data_recv`` counts in (None: no
    ``TCP_INFO`` here). Linux gives it as the resolution of its coarse clocks, which read
    the same ``jiffies``: exact and instant. (It was once timed as the first non-zero
    ``tcpi_last_data_recv`` after a byte on a fresh connection; a server that first
    asked with a thousand bots connecting was preempted past a tick or two and measured
    12 ms for a 4 ms tick, dating every answer 8 ms early: ``bench/clock_parts.py``.)"""
    if not hasattr(socket, "TCP_INFO") or sys.platform != "linux":
        return None
    try:
        tick = time.clock_getres(_CLOCK_MONOTONIC_COARSE)
    except OSError:
        return None
    return tick if 0 < tick <= _LONGEST_TICK else None


class ReceiveClock:
    """Receive times of the process's TCP connections by their peer (one gRPC thread)."""

    def __init__(self, jiffy: float | None) -> None:
        self.jiffy = jiffy  # None: disabled
        self._fds: dict[Peer, Found] = {}  # peer → its socket
        self._seen: dict[int, str] = {}  # fd → its /proc link when scanned ("socket:[ino]")
        self._scanned = -RESCAN

    def find(self, peer: Peer) -> Found | None:
        """The socket of the connection from ``peer``, or None (not found yet: a scan ran
        less than :data:`RESCAN` ago; ask again at the next answer)."""
        if self.jiffy is None:
            return None
        fd = self._fds.get(peer)
        if fd is None and time.monotonic() - self._scanned >= RESCAN:
            self._scan()
            fd = self._fds.get(peer)
        return fd

    def received(self, fd: Found, peer: Peer) -> float | None:
        """When data last arrived on ``fd`` (perf_counter s), no later than it did; None if
        ``fd`` is no longer the connection from ``peer`` (then forgotten)."""
        now = time.perf_counter()
        number, family, cookie = fd
        if cookie is not None:
            since = _since_if(number, cookie)
        else:  # a kernel without cookies: the peer's address, checked each time
            found = _peer_of(number, family)
            since = found[1] if found is not None and found[0] == peer else None
        if since is None:
            if self._fds.get(peer) == fd:
                del self._fds[peer]
            return None
        return now - since / 1000 - (self.jiffy or 0.0)

    def _scan(self) -> None:
        self._scanned = time.monotonic()
        try:
            names = os.listdir("/proc/self/fd")
        except OSError:
            self.jiffy = None  # no /proc: nothing to find, ever
            return
        seen: dict[int, str] = {}
        for name in names:
            fd = int(name)
            try:
                link = os.readlink(f"/proc/self/fd/{name}")
            except OSError:
                continue
            if not link.startswith("socket:"):
                continue
            seen[fd] = link
            if self._seen.get(fd) == link:
                continue  # the same socket as last time: already known (or not TCP)
            family = _family_of(fd)
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            cookie = _cookie_of(fd)  # read again after the peer: the same socket throughout
            found = _peer_of(fd, family)
            if found is not None and (cookie is None or _cookie_of(fd) == cookie):
                self._fds[found[0]] = (fd, family, cookie)
        self._seen = seen


class Receipt:
    """One stream's connection on its thread's :class:`ReceiveClock`: :meth:`at` is when
    its latest data arrived, or None (not found yet, gone, or no ``TCP_INFO``)."""

    __slots__ = ("_clock", "_fd", "_peer", "_tries")

    def __init__(self, clock: ReceiveClock, peer: Peer) -> None:
        self._clock = clock
        self._peer = peer
        self._fd: Found | None = None
        self._tries = TRIES  # a peer never found (its address rewritten) stops scanning

    def at(self) -> float | None:
        fd = self._fd
        if fd is None:
            if not self._tries:
                return None
            self._tries -= 1
            fd = self._fd = self._clock.find(self._peer)
            if fd is None:
                return None
        received = self._clock.received(fd, self._peer)
        if received is None:
            self._fd = None  # looked up again at the next answer
        return received


_JIFFY: list[float | None] = []  # measured once per process
# each gRPC loop's own clock (one thread each), gone with its loop
_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ReceiveClock] = (
    weakref.WeakKeyDictionary()
)


def receipt_for(peer: str) -> Receipt | None:
    """A :class:`Receipt` for the stream from ``peer`` (``context.peer()``) on the running
    loop's clock; None for a peer that is not TCP, with no ``TCP_INFO``, or off a loop."""
    parsed = parse_peer(peer)
    if parsed is None:
        return None
    if not _JIFFY:
        _JIFFY.append(measure_jiffy())
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    if _JIFFY[0] is None:
        return None
    clock = _CLOCKS.get(loop)
    if clock is None:
        clock = _CLOCKS[loop] = ReceiveClock(_JIFFY[0])
    return Receipt(clock, parsed)
