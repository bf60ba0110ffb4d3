"""The kernel's receive time on a bot's connection (arena/server/receive_clock.py).

First on real loopback TCP connections: the connection is found by its peer, its last
receipt is dated no later than the data arrived and at most two kernel ticks earlier,
bytes sent early do not date a later answer, and a descriptor reused by another
connection is never read as the first one's. Then on a real server, the case the clock
is for: gRPC's own threads are starved of CPU (pinned to one CPU beside a busy process,
run only when it has nothing else to run: SCHED_IDLE), so an answer waits in them
before the asyncio loop can see it (~45 ms at the median: with the loop's bound alone a
bot that thinks 0.1 s is charged ~0.145 s); it is charged its thinking.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.bots import make_bot
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet
from arena.server import receive_clock
from arena.server.app import open_arena_server
from arena.server.host import MatchSpec
from arena.server.receive_clock import (
    Receipt,
    ReceiveClock,
    data_ages,
    measure_jiffy,
    parse_peer,
)
from arena.server.wire import SeatWire

JIFFY = measure_jiffy()
needs_tcp_info = pytest.mark.skipif(JIFFY is None, reason="no TCP_INFO here (Linux only)")
HOSTILE = Path(__file__).resolve().parent / "hostile"
FALLBACK_BOT = Path(__file__).resolve().parents[1] / "bench" / "bots" / "fallback_bot.py"


def test_peers_are_read_from_grpc_s_peer_strings() -> None:
    assert parse_peer("ipv4:127.0.0.1:5400") == ("127.0.0.1", 5400)
    assert parse_peer("ipv6:[::1]:5400") == ("::1", 5400)
    assert parse_peer("ipv6:%5B::1%5D:5400") == ("::1", 5400)
    assert parse_peer("ipv6:[::ffff:127.0.0.1]:80") == ("127.0.0.1", 80)  # dual stack
    assert parse_peer("unix:/tmp/arena.sock") is None
    assert parse_peer("ipv4:127.0.0.1") is None


@pytest.fixture
def connection() -> Iterator[tuple[socket.socket, socket.socket, str]]:
    """(client, server side, the server side's peer as gRPC writes it), over IPv6 dual
    stack when there is one, as gRPC listens."""
    family = socket.AF_INET6 if socket.has_dualstack_ipv6() else socket.AF_INET
    dual = family == socket.AF_INET6
    with socket.create_server(("", 0), family=family, dualstack_ipv6=dual) as server:
        client = socket.create_connection(("127.0.0.1", server.getsockname()[1]))
        conn, _ = server.accept()
        with client, conn:
            yield client, conn, f"ipv4:127.0.0.1:{client.getsockname()[1]}"


@needs_tcp_info
def test_the_tick_is_the_unit_the_receive_time_counts_in(
    connection: tuple[socket.socket, socket.socket, str],
) -> None:
    """``tcpi_last_data_recv`` steps by whole ticks: no two of its readings differ by
    less than the tick :func:`measure_jiffy` gives (a millisecond of rounding for a tick
    that is not a whole number of them, HZ=300), and it reads it from the kernel, not by
    timing: a preempted measurer cannot inflate it."""
    client, conn, _ = connection
    assert JIFFY is not None
    tick_ms = JIFFY * 1000
    client.sendall(b"x")
    seen = [0]
    give_up = time.monotonic() + 6 * JIFFY
    while time.monotonic() < give_up:
        ages = data_ages(conn.fileno())
        assert ages is not None
        since = ages[0]  # tcpi_last_data_recv
        if since != seen[-1]:
            seen.append(since)
        time.sleep(0.0002)
    steps = [b - a for a, b in itertools.pairwise(seen)]
    assert len(steps) >= 2, seen  # six ticks of waiting moved it
    assert min(steps) >= tick_ms - 1, (seen, tick_ms)
    busy = time.monotonic() + 0.05
    while time.monotonic() < busy:  # a measurer that would be preempted: no matter
        assert measure_jiffy() == JIFFY


@needs_tcp_info
def test_the_receipt_is_never_later_than_the_data(
    connection: tuple[socket.socket, socket.socket, str],
) -> None:
    client, conn, peer_string = connection
    assert JIFFY is not None and 0 < JIFFY <= 0.01
    peer = parse_peer(peer_string)
    assert peer is not None
    clock = ReceiveClock(JIFFY)
    found = clock.find(peer)
    assert found is not None and found[0] == conn.fileno()
    for wait in (0.0, 0.003, 0.02, 0.06):
        client.sendall(b"x")
        sent = time.perf_counter()
        time.sleep(wait)
        conn.recv(16)
        received = clock.received(found, peer)
        assert received is not None
        assert sent - 2 * JIFFY - 0.002 <= received <= sent, (wait, sent - received)


@needs_tcp_info
def test_bytes_sent_early_do_not_date_a_later_answer(
    connection: tuple[socket.socket, socket.socket, str],
) -> None:
    """A bot that sends the first bytes of its message at once and the last after its
    thinking is dated by the last: the receipt is the connection's latest data."""
    client, _, peer_string = connection
    peer = parse_peer(peer_string)
    assert peer is not None and JIFFY is not None
    clock = ReceiveClock(JIFFY)
    found = clock.find(peer)
    assert found is not None
    client.sendall(b"early")
    time.sleep(0.1)
    client.sendall(b"last")
    last = time.perf_counter()
    time.sleep(0.02)
    received = clock.received(found, peer)
    assert received is not None and received >= last - 2 * JIFFY - 0.002


@needs_tcp_info
@pytest.mark.parametrize("cookies", [True, False], ids=["by-cookie", "by-peer"])
def test_a_reused_descriptor_is_not_read_as_the_old_connection(
    cookies: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The socket is checked at every read: by its cookie, or (a kernel without
    ``SO_COOKIE``) by its peer's address."""
    if not cookies:
        monkeypatch.setattr(receive_clock, "_cookie_of", lambda fd: None)
    assert JIFFY is not None
    clock = ReceiveClock(JIFFY)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        first = socket.create_connection(("127.0.0.1", port))
        conn, _ = server.accept()
        peer = parse_peer(f"ipv4:127.0.0.1:{first.getsockname()[1]}")
        assert peer is not None
        found = clock.find(peer)
        assert found is not None and (found[2] is not None) == cookies
        assert clock.received(found, peer) is not None
        conn.close()  # gRPC closed it; the number is free
        second = socket.create_connection(("127.0.0.1", port))
        again, _ = server.accept()
        with first, second, again:
            assert found[0] in (second.fileno(), again.fileno())  # the number, reused
            assert clock.received(found, peer) is None  # another peer now, or no socket
            assert clock.find(peer) is None


def test_a_peer_never_found_stops_being_looked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[float] = []
    clock = ReceiveClock(0.004)
    monkeypatch.setattr(receive_clock, "RESCAN", 0.0)
    monkeypatch.setattr(clock, "_scan", lambda: scans.append(time.monotonic()))
    receipt = Receipt(clock, ("203.0.113.9", 4))  # behind a proxy that rewrote it
    assert [receipt.at() for _ in range(3 * receive_clock.TRIES)] == [None] * (
        3 * receive_clock.TRIES
    )
    assert len(scans) == receive_clock.TRIES


# ------------------------------------------------------------- gRPC's threads starved

THINK = 0.1  # s
TC = TimeControl(decision_ms=2000, bank_ms=5000, grace_ms=5000)


def _grpc_threads() -> list[int]:
    """The native ids of this process's gRPC core threads (``event_engine``...)."""
    found = []
    for tid in os.listdir("/proc/self/task"):
        comm = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
        if comm.startswith(("event_engine", "grpc")):
            found.append(int(tid))
    return found


async def _thinker(target: str, token: str, *how: str) -> None:
    env = {**os.environ, "ARENA_SERVER": target, "ARENA_TOKEN": token}
    argv = [sys.executable, str(HOSTILE / "thinker.py"), str(THINK), *how]
    await trio.run_process(argv, env=env, stdout=subprocess.DEVNULL)


@pytest.mark.slow
@needs_tcp_info
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
async def test_an_answer_held_in_grpc_s_threads_is_not_charged() -> None:
    cpu = max(os.sched_getaffinity(0))
    local = {s: make_bot("random", s) for s in (0, 2, 3)}
    spec = MatchSpec(RuleSet.from_mapping({"deals": 1}), 3, TC, FaultPolicy(), local=local)
    hog = [sys.executable, "-c", "while True: pass"]
    async with open_arena_server() as server:
        hosted = server.host.create(spec)
        threads = _grpc_threads()
        if not threads:
            pytest.skip("no gRPC core threads found by name in /proc/self/task")
        busy = subprocess.Popen(hog)
        try:
            os.sched_setaffinity(busy.pid, {cpu})
            for tid in threads:  # threads they start inherit this
                os.sched_setaffinity(tid, {cpu})
                os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
            with trio.fail_after(120):
                await _thinker(server.target, hosted.tokens[1])
                await hosted.done.wait()
        finally:
            busy.kill()
            busy.wait()
    referee = hosted.referee
    assert referee is not None
    charged = referee.latencies[1]
    assert len(charged) >= 10 and not [f for f in referee.faults if f.seat == 1]
    # charged its thinking: at most a tick or two less (the kernel's clock), not more
    assert THINK - 0.012 <= statistics.median(charged) <= THINK + 0.01, sorted(charged)


# ------------------------------------------------------------- nothing sent while it thinks


@pytest.mark.slow
@needs_tcp_info
async def test_the_server_sends_a_thinking_bot_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The receipt is the connection's latest data, so anything the bot's stack sends after
    its answer dates the answer late. A bot's stack sends by itself only in reply to the
    server (a ping's acknowledgement, a window update), so the server sends nothing on the
    connection between a request and the answer's read. gRPC's bandwidth-delay probe
    would: a ping each time the bot's data arrives (grpc_thread: ``bdp_probe`` off). The
    bot here sends no pings of its own, which the server would acknowledge."""
    seen: list[tuple[float, float]] = []  # (the request's write, the server's last send)
    answer = SeatWire.answer

    def watched(wire: SeatWire, message: Any) -> Any:
        fd = getattr(wire.receipt, "_fd", None)  # the connection, once the receipt found it
        if fd is not None and message.WhichOneof("kind") == "action":
            ages = data_ages(fd[0])
            assert ages is not None
            since = ages[1] / 1000  # tcpi_last_data_sent
            seen.append((wire.sent_at, time.perf_counter() - since))
        return answer(wire, message)

    monkeypatch.setattr(SeatWire, "answer", watched)
    local = {s: make_bot("random", s) for s in (0, 2, 3)}
    spec = MatchSpec(RuleSet.from_mapping({"deals": 1}), 3, TC, FaultPolicy(), local=local)
    async with open_arena_server() as server:
        hosted = server.host.create(spec)
        with trio.fail_after(120):
            await _thinker(server.target, hosted.tokens[1], "quiet")
            await hosted.done.wait()
    assert len(seen) >= 10
    assert JIFFY is not None
    # the request itself leaves at once; nothing later (its thinking is 0.1 s)
    late = [last - wrote for wrote, last in seen if last - wrote > THINK / 2 + JIFFY]
    assert not late, late


# ------------------------------------------------------------- a thinker's whole time


@pytest.mark.slow
@needs_tcp_info
async def test_a_thinker_is_charged_its_time_on_its_machine(tmp_path: Path) -> None:
    """Four seats of the benchmark's thinking bot (``bench/bots/fallback_bot.py``: one
    process, a connection each, 20 ms of thinking), which notes by its own kernel when
    each request arrived and each answer left: the referee charges each decision that
    time, to the kernel's ticks (both ends read to a tick, the charge a tick or two in
    the bot's favour). The bench's fair-clock verdict (``bench/remote.py``) rests on it."""
    assert JIFFY is not None
    spec = MatchSpec(RuleSet.from_mapping({"deals": 1}), 7, TC, FaultPolicy())
    trace = tmp_path / "trace.json"
    async with open_arena_server() as server:
        hosted = server.host.create(spec)
        argv = [sys.executable, str(FALLBACK_BOT), "--server", server.target,
                "--tokens-file", "-", "--think-ms", "20", "--trace", str(trace)]  # fmt: skip
        tokens = "\n".join(hosted.tokens) + "\n"
        with trio.fail_after(120):
            await trio.run_process(argv, stdin=tokens.encode(), stdout=subprocess.DEVNULL)
            await hosted.done.wait()
    referee = hosted.referee
    assert referee is not None and not referee.faults
    rows = json.loads(trace.read_text())
    for seat, token in enumerate(hosted.tokens):
        mine = sorted((row for row in rows if row[0] == token), key=lambda row: row[1])
        charged = referee.latencies[seat]
        assert len(mine) == len(charged) >= 5
        for (_, seq, read, _, _, arrived, departed), paid in zip(mine, charged, strict=True):
            assert arrived is not None and departed is not None, seq  # its connection found
            assert arrived <= read + JIFFY  # in its kernel before its Python read it
            own = departed - arrived
            assert own >= 0.02 - 2 * JIFFY, (seq, own)  # its thinking, at least
            assert own - 4 * JIFFY - 0.002 <= paid <= own + 2 * JIFFY + 0.002, (seq, paid, own)
