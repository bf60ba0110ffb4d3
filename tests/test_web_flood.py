"""Attacks on the live pages of a real ``arena serve --http`` (real bots over gRPC):
a flood of event-stream clients on one match is capped with a clear ``503``, and a
page that never reads holds no growing memory and slows neither the match nor the
other pages (docs/web.md, "Many pages, slow pages")."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from webkit import SPECTATOR_TOKEN, EventStream, Web, start_match, start_web

from arena.records import read_record, verify

pytestmark = pytest.mark.slow
CAP = 64  # --pages-per-match's default


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    server = start_web(tmp_path_factory.mktemp("flood"))
    try:
        yield server
    finally:
        server.serve.stop()


def gauge(web: Web, name: str) -> float:
    status, text = web.get("/metrics", token=None)
    assert status == 200
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return sample.value
    raise AssertionError(f"{name} not in /metrics")


def open_raw(web: Web, match_id: str, receive_buffer: int = 0) -> socket.socket:
    """A page's request on a bare socket, which this test then reads only if it wants."""
    host, port = web.http.removeprefix("http://").split(":")
    sock = socket.socket()
    if receive_buffer:  # before connecting, so the TCP window stays that small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect((host, int(port)))
    sock.sendall(
        f"GET /matches/{match_id}/events HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {SPECTATOR_TOKEN}\r\n\r\n".encode()
    )
    return sock


def status_line(sock: socket.socket) -> bytes:
    sock.settimeout(20)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, "closed before the response's head"
        data += chunk
    return data


def wait_for(web: Web, name: str, value: float, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while (got := gauge(web, name)) != value and time.monotonic() < deadline:
        time.sleep(0.1)
    assert got == value, f"{name} = {got}, expected {value}"


def test_a_flood_of_pages_on_one_match_is_capped_with_503(web: Web) -> None:
    match = start_match(web, think_ms=5, seed=3)
    socks: list[socket.socket] = []
    refused_before = gauge(web, "arena_http_event_streams_refused_total")
    try:
        heads = []
        for _ in range(200):
            socks.append(open_raw(web, match.id))
            heads.append(status_line(socks[-1]))
        accepted = [h for h in heads if h.startswith(b"HTTP/1.1 200")]
        refused = [h for h in heads if h.startswith(b"HTTP/1.1 503")]
        assert (len(accepted), len(refused)) == (CAP, 200 - CAP)
        assert all(b"retry-after: 10" in h.lower() for h in refused)
        status, text = web.get(f"/matches/{match.id}/events")
        assert status == 503 and "already has 64 pages open (--pages-per-match)" in text
        assert gauge(web, "arena_http_event_streams") == CAP
        refused_now = gauge(web, "arena_http_event_streams_refused_total")
        assert refused_now - refused_before == 200 - CAP + 1
        match.wait()  # the 64 pages (never read here) do not hold the match back
        record = read_record(web.serve.records / f"{match.id}.jsonl")
        assert record.complete and verify(record).ok
    finally:
        match.stop()
        for sock in socks:
            sock.close()
    wait_for(web, "arena_http_event_streams", 0)  # every place freed as its client went


def test_a_page_that_never_reads_slows_nothing_and_holds_no_growing_memory(
    web: Web, tmp_path: Path
) -> None:
    match = start_match(web, deals=3, think_ms=1, seed=8)
    stalled = [open_raw(web, match.id, receive_buffer=2048) for _ in range(8)]
    try:
        for sock in stalled:
            assert status_line(sock).startswith(b"HTTP/1.1 200")
        rss_before = _rss_kib(web)
        reader = EventStream(web, match.id)
        names = []
        for name, _ in reader.messages():
            names.append(name)
            if name == "end":
                break
        assert names[-1] == "end" and names.count("message") > 300  # all of it, to the end
        match.wait()
        # the stalled pages are still there, blocked in a write (else they would have
        # written the end and gone), holding only their place
        wait_for(web, "arena_http_event_streams", len(stalled))
        grown = _rss_kib(web) - rss_before
        assert grown < 64 * 1024, f"the server grew {grown} KiB"
        # the stalled pages took in far less than the reader: their writes are blocked
        for sock in stalled:
            sock.setblocking(False)
            try:
                taken = len(sock.recv(1 << 20))
            except BlockingIOError:
                taken = 0
            assert taken < len(reader.raw)
    finally:
        match.stop()
        for sock in stalled:
            sock.close()
    wait_for(web, "arena_http_event_streams", 0)


def _rss_kib(web: Web) -> int:
    status = Path(f"/proc/{web.serve.process.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1])
