"""A benchmark bot that thinks for no time (or ``--think-ms``): it answers every request
with its fallback.

It asks for ``VERDICT_FAULTS_ONLY`` (accepted answers acknowledged on the next message)
when the protocol it was built with has it, unless ``--every-verdict``. With
``--think-ms`` it sleeps that long before each answer and measures its own time, request
read → its answer's write returned (the sleep, its lateness on this process's loop, the
write: all this process spent on the decision), reported as ``think_p50``/``think_p99``/
``think_max`` (seconds) so that the load benchmark can set what it was charged against
it; ``--trace FILE`` writes each answer's timestamps (bench/clock_parts.py, bench/remote.py):
besides this process's, its own kernel's, read from ``TCP_INFO`` on the seat's connection
(``tcpi_last_data_recv`` when it reads a request: the request's arrival; the next time,
``tcpi_last_data_sent``: its answer's departure), so that what it was charged can be set
against all the time the decision was on this machine, its waits for a CPU included (a
thinker beside a thousand busy bots waits a hundred milliseconds to read at times). To
tell its connection from the others, a tracing process connects its channels one at a
time (the handshakes; the streams, and so the matches, still start together).

One process can play one seat (``--token``, as ``arena match`` launches bots) or many
(``--tokens-file``, one token per line, ``-`` for stdin: each gets its own stream and its own TCP
connection, all on one asyncio loop), so the load benchmark needs a couple of client
processes, not a thousand. On exit it prints one JSON line to stdout: requests answered,
mean serialized request and action sizes, and any stream errors.

Like botkit, a seat sent to the front of ``arena serve --workers N`` follows the redirect
at Hello (``FAILED_PRECONDITION`` with the trailing metadata ``arena-seat-address``) to the
worker hosting its match (``redirects`` in the report).

    python bench/bots/fallback_bot.py --server HOST:PORT --token TOKEN
    python bench/bots/fallback_bot.py --server HOST:PORT --tokens-file FILE
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

# the kernel-time reader of this checkout, whatever arena is under test (a baseline's lacks it)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from own_clock import receive_clock  # bench/own_clock.py

EOF_MARK: object = grpc.aio.EOF
CHANNEL_OPTIONS = [
    ("grpc.use_local_subchannel_pool", 1),  # one TCP connection per seat
    # no bandwidth-delay pings: one sent after an answer would date its arrival late
    # (docs/protocol.md, "Time per decision")
    ("grpc.http2.bdp_probe", 0),
]
# the verdict mode asked for (None: the protocol this bot was built with predates it)
FAULTS_ONLY = getattr(pb, "VERDICT_FAULTS_ONLY", None)


@dataclass
class Tally:
    requests: int = 0
    request_bytes: int = 0
    action_bytes: int = 0
    streams: int = 0
    ended: int = 0
    verdicts: int = 0  # Verdict messages received
    acks: int = 0  # acknowledgements that rode on another message
    redirects: int = 0  # seats sent on to a worker by the front
    errors: list[str] = field(default_factory=list)
    thinks: list[float] = field(default_factory=list)  # s, with --think-ms
    # with --trace: (token, seq, read returned, think ended, write returned, the request's
    # arrival and the answer's departure by this machine's kernel or None), perf_counter s
    trace: list[list[Any]] = field(default_factory=list)


def open_channel(server: str) -> grpc.aio.Channel:
    """Plaintext, or TLS trusting ``$ARENA_TLS_CA`` when it is set."""
    ca = os.environ.get("ARENA_TLS_CA")
    if not ca:
        return grpc.aio.insecure_channel(server, options=CHANNEL_OPTIONS)
    with open(ca, "rb") as pem:
        credentials = grpc.ssl_channel_credentials(pem.read())
    return grpc.aio.secure_channel(server, credentials, options=CHANNEL_OPTIONS)


def tcp_sockets() -> dict[int, str]:
    """This process's TCP socket descriptors and their inodes (``socket:[…]``), by /proc
    (gRPC's own wake-up socket pairs left out)."""
    found = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/self/fd/{name}")
                if link.startswith("socket:") and is_tcp(int(name)):
                    found[int(name)] = link
    return found


def is_tcp(fd: int) -> bool:
    sock = socket.socket(fileno=fd)  # its family and type read from the descriptor
    try:
        return sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM
    finally:
        sock.detach()


def kernel_times(fd: int) -> tuple[float, float] | None:
    """(when data last arrived, when data last left) on the TCP socket ``fd``, perf_counter
    s, to the kernel's tick; None if it is no TCP socket (any more)."""
    ages = receive_clock().data_ages(fd)
    if ages is None:
        return None
    now = time.perf_counter()
    return now - ages[0] / 1000, now - ages[1] / 1000


SEAT_ADDRESS = "arena-seat-address"  # trailing metadata of a redirected Play (workers)
MAX_MOVES = 3  # redirects followed for one seat before it gives up
OPENING = 64  # streams of one process opening at once (a load level opens hundreds)
OPEN_FOR = 60.0  # seconds a seat keeps trying to open its stream on an overloaded server
TRACE_OPENING = asyncio.Lock()  # a tracing process connects one channel at a time


async def play(
    server: str,
    token: str,
    tally: Tally,
    every: bool,
    think: float,
    opening: asyncio.Semaphore | None = None,
    trace: bool = False,
    everyone: asyncio.Barrier | None = None,
) -> None:
    """One seat, following redirects to the worker hosting it (:func:`seat`)."""
    for _ in range(MAX_MOVES + 1):
        moved = await seat(server, token, tally, every, think, opening, trace, everyone)
        if moved is None:
            return
        tally.redirects += 1
        server, everyone = moved, None  # passed once
    tally.errors.append(f"more than {MAX_MOVES} redirects in a row")


def moved_to(exc: grpc.RpcError) -> str | None:
    """The worker's address when the front refused this seat with a redirect."""
    if not isinstance(exc, grpc.aio.AioRpcError):
        return None
    if exc.code() != grpc.StatusCode.FAILED_PRECONDITION:
        return None
    for key, value in exc.trailing_metadata() or ():
        if key == SEAT_ADDRESS:
            return value if isinstance(value, str) else value.decode()
    return None


async def seat(
    server: str,
    token: str,
    tally: Tally,
    every: bool,
    think: float,
    opening: asyncio.Semaphore | None = None,
    trace: bool = False,
    everyone: asyncio.Barrier | None = None,
) -> str | None:
    """One seat: hello, then answer each request with its fallback until MatchEnd; the
    address it was redirected to, if it was. Tracing, it connects its channel one at a
    time with the process's other seats and opens its stream once all have (``everyone``,
    the first time: the matches still start together).

    Opening the stream (connection, the referee's initial metadata, the Hello) is retried
    until :data:`OPEN_FOR` runs out, at most :data:`OPENING` at a time per process: with
    hundreds of seats in one process, an overloaded server can fail a connection that a
    second try gets (bench/remote.py's 250-match level)."""
    give_up = time.monotonic() + OPEN_FOR
    fd: int | None = None  # the seat's connection, when tracing
    connected: grpc.aio.Channel | None = None
    if trace:
        connected, fd = await connect_traced(server)
        if everyone is not None:  # every seat's channel first, then every stream at once
            await everyone.wait()
    while True:
        try:
            async with opening or contextlib.nullcontext():
                if trace and connected is None:  # a try again: connect again
                    connected, fd = await connect_traced(server)
                channel, call = await open_stream(server, token, every, connected)
            break
        except (grpc.RpcError, asyncio.InvalidStateError) as exc:
            connected = None  # closed by open_stream
            moved = moved_to(exc) if isinstance(exc, grpc.RpcError) else None
            if moved is not None:
                return moved
            if time.monotonic() > give_up or (
                isinstance(exc, grpc.RpcError) and exc.code() != grpc.StatusCode.UNAVAILABLE
            ):
                tally.errors.append(f"opening: {exc}"[:300])
                return None
            await asyncio.sleep(0.2)
    async with channel:
        try:
            tally.streams += 1
            last: list[Any] | None = None  # the latest trace row: its departure comes next
            while True:
                message = await call.read()
                if message is EOF_MARK:
                    break
                read_at = time.perf_counter()
                kernel = kernel_times(fd) if fd is not None else None
                if last is not None and kernel is not None:
                    last[6] = kernel[1]  # nothing was sent since that answer
                last = None
                kind = message.WhichOneof("kind")
                if getattr(message, "accepted_seq", 0):
                    tally.acks += 1
                if kind == "request":
                    request = message.request
                    answer = pb.BotMessage(
                        action=pb.Action(seq=request.seq, cards=request.fallback.cards)
                    )
                    thought_at = read_at
                    if think:
                        await asyncio.sleep(think)
                        thought_at = time.perf_counter()
                    await call.write(answer)
                    written_at = time.perf_counter()
                    if think:  # its own time: the request read to the answer handed over
                        tally.thinks.append(written_at - read_at)
                    if trace:
                        arrived = kernel[0] if kernel is not None else None
                        last = [token, request.seq, read_at, thought_at, written_at, arrived, None]
                        tally.trace.append(last)
                    tally.requests += 1
                    tally.request_bytes += message.ByteSize()
                    tally.action_bytes += answer.ByteSize()
                elif kind == "verdict":
                    tally.verdicts += 1
                elif kind == "match_end":
                    tally.ended += 1
                    break
            await call.done_writing()
        except grpc.RpcError as exc:
            moved = moved_to(exc)
            if moved is not None:
                tally.streams -= 1
                return moved
            tally.errors.append(f"{exc.code().name}: {exc.details()}")
        except asyncio.InvalidStateError as exc:  # the call failed before Hello (overload)
            tally.errors.append(f"{type(exc).__name__}: {exc}")
    return None


async def connect_traced(server: str) -> tuple[grpc.aio.Channel, int | None]:
    """A channel connected while no other seat of this process connects, and its socket
    (the one that appeared meanwhile; None if not exactly one did, or it timed out)."""
    async with TRACE_OPENING:
        before = tcp_sockets()
        channel = open_channel(server)
        with contextlib.suppress(asyncio.TimeoutError):  # then: no kernel times
            await asyncio.wait_for(channel.channel_ready(), 10)
        new = set(tcp_sockets().items()) - set(before.items())
    return channel, new.pop()[0] if len(new) == 1 else None


async def open_stream(
    server: str, token: str, every: bool, channel: grpc.aio.Channel | None = None
) -> tuple[grpc.aio.Channel, Any]:
    """A seat's stream with its Hello written, on ``channel`` (a new one by default; the
    channel closed if that fails)."""
    channel = channel if channel is not None else open_channel(server)
    try:
        call = pb_grpc.ArenaStub(channel).Play()
        await call.initial_metadata()  # the referee accepted the stream (DESIGN.md)
        hello = pb.Hello(token=token, name="fallback", version="bench", protocol=1)
        if FAULTS_ONLY is not None and not every:
            hello.verdicts = FAULTS_ONLY
        await call.write(pb.BotMessage(hello=hello))
    except BaseException:
        await channel.close()
        raise
    return channel, call


async def main(
    server: str, tokens: list[str], every: bool, think: float, trace: bool = False
) -> Tally:
    tally = Tally()
    opening = asyncio.Semaphore(OPENING)
    everyone = asyncio.Barrier(len(tokens)) if trace else None
    await asyncio.gather(
        *(play(server, t, tally, every, think, opening, trace, everyone) for t in tokens)
    )
    return tally


def die_with_parent() -> None:
    """Under a benchmark harness (``BENCH_PARENT_PID`` set): end when it ends (Linux)."""
    parent = os.environ.get("BENCH_PARENT_PID")
    if parent and sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != int(parent):
            os._exit(1)


def cli() -> int:
    die_with_parent()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=os.environ.get("ARENA_SERVER", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("ARENA_TOKEN", ""))
    parser.add_argument("--tokens-file", default=None, help="one token a line (- = stdin)")
    parser.add_argument("--every-verdict", action="store_true", help="a Verdict per answer")
    parser.add_argument("--think-ms", type=float, default=0.0, help="sleep before each answer")
    parser.add_argument("--trace", default=None, help="write each answer's timestamps here")
    args = parser.parse_args()
    if args.tokens_file == "-":
        tokens = [line.strip() for line in sys.stdin if line.strip()]
    elif args.tokens_file:
        with open(args.tokens_file, encoding="utf-8") as f:
            tokens = [line.strip() for line in f if line.strip()]
    else:
        tokens = [args.token]
    if not all(tokens):
        print("fallback_bot: no seat token", file=sys.stderr)
        return 2
    think = args.think_ms / 1000
    tally = asyncio.run(main(args.server, tokens, args.every_verdict, think, bool(args.trace)))
    if args.trace:
        with open(args.trace, "w", encoding="utf-8") as out:
            json.dump(tally.trace, out)
    report = asdict(tally)
    report.pop("trace")
    thinks = sorted(report.pop("thinks"))
    if thinks:
        n = len(thinks)
        report.update(think_p50=thinks[n // 2], think_p99=thinks[min(n - 1, int(n * 0.99))])
        report["think_max"] = thinks[-1]
    report["errors"] = tally.errors[:5]
    report["error_count"] = len(tally.errors)
    print(json.dumps(report), flush=True)
    return 0 if not tally.errors else 1


if __name__ == "__main__":
    sys.exit(cli())
