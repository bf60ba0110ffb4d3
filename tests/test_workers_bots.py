"""The bots built from ``proto/`` alone (the minimal Python bot and the C++ bot) on
``arena serve --workers 2``: each dials the front with its seat token, is refused at its
``Hello`` with ``arena-seat-address`` and follows it to the worker that hosts its match.
Two matches (one per worker), each seat a real bot process; both matches end with no
fault and verify (docs/workers.md, docs/protocol.md "Where to connect")."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from servekit import ROOT, bearer, start_serve
from test_sample_bots import CPP_PACKAGES, _cpp_missing, make

from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
MINIMAL = [sys.executable, str(ROOT / "sample_bots" / "minimal" / "bot.py")]
CPP = [str(ROOT / "sample_bots" / "cpp" / "bot")]


def test_minimal_and_cpp_bots_follow_the_front_to_their_worker(tmp_path: Path) -> None:
    make("minimal-bot", timeout=120)
    bots_of = [MINIMAL, MINIMAL, MINIMAL, MINIMAL]
    if not _cpp_missing():
        make("cpp-bot", timeout=900)
        bots_of = [MINIMAL, CPP, MINIMAL, CPP]
    serve = start_serve(tmp_path, "--workers", "2")
    bots: list[subprocess.Popen[bytes]] = []
    try:
        with grpc.insecure_channel(serve.target) as channel:
            stub = pb_grpc.MatchesStub(channel)
            created = [
                stub.Create(
                    pb.CreateMatchRequest(seed=5 + i, deals=1), metadata=bearer(serve.token)
                )
                for i in range(2)
            ]
        assert len({c.seat_address for c in created}) == 2  # one match on each worker
        for n, match in enumerate(created):
            for seat, token in enumerate(match.seat_tokens):
                env = {**os.environ, "ARENA_SERVER": serve.target, "ARENA_TOKEN": token}
                log = (tmp_path / f"bot{n}{seat}.log").open("wb")
                bots.append(subprocess.Popen(
                    bots_of[seat], env=env, stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT
                ))  # fmt: skip
        for n, bot in enumerate(bots):
            log = tmp_path / f"bot{n // 4}{n % 4}.log"
            assert bot.wait(timeout=180) == 0, log.read_text() + serve.log.read_text()[-2000:]
        for match in created:
            path = serve.records / f"{match.match_id}.jsonl"
            deadline = time.monotonic() + 10
            while not read_record(path).complete and time.monotonic() < deadline:
                time.sleep(0.1)
            record = read_record(path)
            assert record.complete, serve.log.read_text()[-2000:]
            assert verify(record).ok
            assert not [a for a in record.answers() if a.fault or a.absent]
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.stop()


@pytest.mark.skipif(
    not _cpp_missing(), reason="the C++ toolchain is here: the test above plays the C++ bot"
)
def test_without_the_cpp_toolchain_only_the_minimal_bot_played() -> None:
    pytest.skip(f"C++ gRPC toolchain missing ({_cpp_missing()}); install {CPP_PACKAGES}")
