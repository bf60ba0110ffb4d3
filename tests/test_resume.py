"""Crash safety: SIGKILL the server mid-match, restart it, and the match finishes.

Real processes throughout: ``arena serve`` on a loopback port, four sample bots that
reconnect with their tokens, and an organiser client creating the match over gRPC.
The finished record must verify as if nothing had happened.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, records: Path, log: Path) -> subprocess.Popen[bytes]:
    out = log.open("ab")
    server = subprocess.Popen(
        [sys.executable, "-m", "arena.cli.main", "serve", "--listen", f"127.0.0.1:{port}",
         "--records", str(records), "--log-json", "--open", "--workers", "1"],
        stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.1)
    server.kill()
    raise AssertionError(f"server did not start:\n{log.read_text()}")


def wait_for_answers(path: Path, count: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b'"type":"answer"') >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the match did not reach {count} answers")


def test_a_killed_server_resumes_the_match_and_the_record_verifies(tmp_path: Path) -> None:
    port = free_port()
    records = tmp_path / "records"
    log = tmp_path / "server.log"
    server = start_server(port, records, log)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            created = pb_grpc.MatchesStub(channel).Create(
                pb.CreateMatchRequest(seed=11, deals=4, seat_names=["r0", "g1", "r2", "g3"],
                                      time_control=pb.TimeControl(grace_ms=30_000)),
                timeout=10,
            )  # fmt: skip
        env = {**os.environ, "ARENA_SERVER": f"127.0.0.1:{port}"}
        for seat, script in enumerate(["random_bot", "greedy_bot"] * 2):
            bots.append(subprocess.Popen(
                [sys.executable, str(ROOT / "sample_bots" / f"{script}.py"), "--reconnect", "60",
                 "--token", created.seat_tokens[seat], "--seed", str(seat)],
                env=env, stdout=subprocess.DEVNULL,
                stderr=(tmp_path / f"bot{seat}.log").open("wb"),
            ))  # fmt: skip
        record_path = records / f"{created.match_id}.jsonl"
        wait_for_answers(record_path, 100)
        server.send_signal(signal.SIGKILL)
        server.wait()
        before = read_record(record_path)
        assert not before.complete  # cut off: no footer
        server = start_server(port, records, log)
        for seat, bot in enumerate(bots):
            code = bot.wait(timeout=90)
            assert code == 0, (tmp_path / f"bot{seat}.log").read_text() + log.read_text()[-2000:]
        deadline = time.monotonic() + 10
        while not read_record(record_path).complete and time.monotonic() < deadline:
            time.sleep(0.1)
        after = read_record(record_path)
        assert after.complete, log.read_text()[-3000:]
        result = verify(after)
        assert result.ok, str(result)
        assert len(after.answers()) > len(before.answers())
        assert "match_restored" in log.read_text()
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        server.kill()
        server.wait()
