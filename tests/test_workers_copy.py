"""A joined worker's record copied into the front's folder (``server/workers/copy.py``),
from a hostile worker: a real gRPC server on 127.0.0.1 that answers ``FetchRecord``
with another match's record, or with an endless one. The front gets one clear error and
keeps nothing: no record under the match's name, no partial file."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.cli.main import main
from arena.errors import ArenaError
from arena.server.workers.copy import MAX_RECORD_BYTES, copy_record
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ASKED = "m-0123456789ab"


class HostileWorker(pb_grpc.MatchesServicer):
    def __init__(self, lines: Iterator[str] | list[str]) -> None:
        self.lines = lines

    def FetchRecord(self, request: Any, context: Any) -> Iterator[pb.RecordChunk]:
        for line in self.lines:
            yield pb.RecordChunk(line=line)


def serve(worker: HostileWorker) -> tuple[grpc.Server, str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_MatchesServicer_to_server(worker, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


def another_match(tmp_path: Path) -> list[str]:
    """A complete record of a match other than the one asked for."""
    record = tmp_path / "other.jsonl"
    argv = ["match", "--deals", "1", "--seed", "3", "--record", str(record)]
    argv += ["--bot", "builtin:greedy", "--bot", "builtin:random"] * 2
    assert main(argv) == 0
    return record.read_text().splitlines()


def endless() -> Iterator[str]:
    line = "x" * (1 << 20)
    while True:
        yield line


@pytest.mark.parametrize("kind", ["another match's record", "an endless record"])
def test_a_hostile_worker_cannot_hand_the_front_a_record(tmp_path: Path, kind: str) -> None:
    lines: Iterator[str] | list[str] = (
        another_match(tmp_path) if kind == "another match's record" else endless()
    )
    server, address = serve(HostileWorker(lines))
    folder = tmp_path / "front"
    folder.mkdir()
    try:
        with pytest.raises(ArenaError) as caught:
            copy_record(address, None, "organiser-token", ASKED, folder)
    finally:
        server.stop(None)
    message = str(caught.value)
    assert ASKED in message and address in message and "\n" not in message
    if kind == "an endless record":
        assert f"over {MAX_RECORD_BYTES >> 20} MiB" in message
    else:
        assert "another match's" in message
    assert list(folder.iterdir()) == []  # nothing kept: no record, no partial file
