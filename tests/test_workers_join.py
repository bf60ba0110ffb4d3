"""A worker on "another host" joins a running front: ``arena serve --join FRONT
--listen 127.0.0.2:0`` (a second loopback address stands for the other host).

Real processes: the front (``--workers 2``), the joining worker with the front's
organiser token, sample bots that dial the front and are redirected to whichever worker
hosts their match. Attacks: an anonymous stream, a seat token and a wrong token are
refused at ``Workers.Join``, and a worker started with a wrong token stops with one
line; a joined worker SIGKILLed mid-match costs that match only (the front forgets it,
keeps serving, and creates on the others) (docs/workers.md).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from servekit import ROOT, Serve, bearer, start_serve
from test_resume import wait_for_answers

from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
ARENA = [sys.executable, "-m", "arena.cli.main"]
JOINED = re.compile(r"worker (\d) on (127\.0\.0\.2:\d+) \(joined from another host\)")


def join_argv(front: Serve, records: Path, token_file: Path) -> list[str]:
    """``arena serve --join`` on another loopback address, as an operator types it."""
    return [
        *ARENA,
        "serve",
        "--join",
        front.target,
        "--listen",
        "127.0.0.2:0",
        "--records",
        str(records),
        "--organiser-token-file",
        str(token_file),
    ]


def joining(tmp_path: Path, front: Serve, token_file: Path) -> subprocess.Popen[bytes]:
    argv = join_argv(front, tmp_path / "remote", token_file)
    log = (tmp_path / "remote.log").open("ab")
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)


def wait_joined(front: Serve, remote: subprocess.Popen[bytes], log: Path) -> str:
    """The joined worker's address, once the front's log says it joined (60 s)."""
    deadline = time.monotonic() + 60
    while not (joined := JOINED.search(front.log.read_text())):
        assert time.monotonic() < deadline and remote.poll() is None, (
            log.read_text() + front.log.read_text()
        )
        time.sleep(0.2)
    return joined[2]


def stop_all(
    processes: list[subprocess.Popen[bytes] | None], channel: grpc.Channel, front: Serve
) -> None:
    """A test's end, whatever it reached: its bots and joined worker killed, then the
    front's channel closed and the front stopped."""
    for process in processes:
        if process is not None and process.poll() is None:
            process.kill()
    channel.close()
    front.stop()


def bots_for(
    match: pb.CreateMatchResponse, front: Serve, folder: Path, tag: str
) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "sample_bots" / "random_bot.py"),
                "--server",
                front.target,
                "--token",
                token,
                "--seed",
                str(seat),
            ],
            stdout=subprocess.DEVNULL,
            stderr=(folder / f"bot-{tag}{seat}.log").open("wb"),
        )
        for seat, token in enumerate(match.seat_tokens)
    ]


def test_a_worker_joins_from_another_address_and_its_death_costs_only_its_match(
    tmp_path: Path,
) -> None:
    front = start_serve(tmp_path, "--workers", "2")
    channel = grpc.insecure_channel(front.target)
    workers = pb_grpc.WorkersStub(channel)
    stub = pb_grpc.MatchesStub(channel)
    remote: subprocess.Popen[bytes] | None = None
    bots: list[subprocess.Popen[bytes]] = []
    try:
        token = front.token
        seat = stub.Create(pb.CreateMatchRequest(), metadata=bearer(token)).seat_tokens[0]
        for metadata, code in (
            ((), "UNAUTHENTICATED"),
            (bearer("nope"), "UNAUTHENTICATED"),
            (bearer(seat), "PERMISSION_DENIED"),
        ):
            with pytest.raises(grpc.RpcError) as refused:
                next(iter(workers.Join(iter([pb.WorkerLine(json="{}")]), metadata=metadata)))
            assert refused.value.code().name == code
        wrong = tmp_path / "wrong.token"
        wrong.write_text("not-the-organiser-token\n")
        wrong.chmod(0o600)
        done = subprocess.run(
            join_argv(front, tmp_path / "x", wrong),
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        assert done.returncode == 1 and "UNAUTHENTICATED" in done.stderr, done.stderr
        last = done.stderr.strip().splitlines()[-1]  # one line says why
        assert last.startswith("arena serve: the front at") and "did not take" in last, last

        remote = joining(tmp_path, front, front.token_file)
        address = wait_joined(front, remote, tmp_path / "remote.log")
        # the front gives new matches to the worker with the fewest live ones: all three
        tc = pb.TimeControl(grace_ms=30_000)
        created = [
            stub.Create(
                pb.CreateMatchRequest(seed=i, deals=1, time_control=tc), metadata=bearer(token)
            )
            for i in range(2)
        ]
        assert address in {c.seat_address for c in created}
        for n, match in enumerate(created):
            bots += bots_for(match, front, tmp_path, str(n))
        for bot in bots:
            assert bot.wait(timeout=120) == 0, front.log.read_text()[-2000:]
        there = next(c for c in created if c.seat_address == address)
        info = stub.Get(pb.GetMatchRequest(match_id=there.match_id), metadata=bearer(token))
        assert info.state == pb.FINISHED  # the front forwards to the joined worker
        path = tmp_path / "remote" / f"{there.match_id}.jsonl"
        deadline = time.monotonic() + 10
        while not read_record(path).complete and time.monotonic() < deadline:
            time.sleep(0.1)
        assert verify(read_record(path)).ok  # its record is on its own host

        # the joined worker dies mid-match: that match is lost, nothing else
        doomed = [
            stub.Create(pb.CreateMatchRequest(seed=9 + i, time_control=tc), metadata=bearer(token))
            for i in range(3)
        ]
        victim = next(c for c in doomed if c.seat_address == address)
        bots = bots_for(victim, front, tmp_path, "v")
        wait_for_answers(tmp_path / "remote" / f"{victim.match_id}.jsonl", 10)
        os.kill(remote.pid, signal.SIGKILL)
        remote.wait()
        deadline = time.monotonic() + 30
        while "left; 1 live match(es) lost" not in front.log.read_text():
            assert time.monotonic() < deadline, front.log.read_text()[-2000:]
            time.sleep(0.2)
        again = stub.Create(pb.CreateMatchRequest(), metadata=bearer(token))
        assert again.seat_address != address and front.process.poll() is None
        listed = stub.List(pb.ListMatchesRequest(), metadata=bearer(token))
        assert victim.match_id not in {m.match_id for m in listed.matches}
    finally:
        stop_all([*bots, remote], channel, front)


def test_an_open_front_takes_no_worker(tmp_path: Path) -> None:
    """``--open`` makes every caller an organiser: such a front refuses every join."""
    front = start_serve(tmp_path, "--workers", "2", "--open")
    try:
        with grpc.insecure_channel(front.target) as channel:
            stream = pb_grpc.WorkersStub(channel).Join(iter([pb.WorkerLine(json="{}")]))
            with pytest.raises(grpc.RpcError) as refused:
                next(iter(stream))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "--open" in (refused.value.details() or "")
        assert "joined from another host" not in front.log.read_text()
    finally:
        front.stop()
