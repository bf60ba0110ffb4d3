"""Helpers of the competition tests: the ``arena`` command, registered bots as real
processes in the lobby, a raw lobby stream, a page fetch."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from servekit import ROOT

from arena.cli.main import main
from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

# The Node sample bot joins through the lobby too where node and its npm packages are
# installed (`make setup`); elsewhere a second Python bot takes its place.
NODE = (
    shutil.which("node")
    if (ROOT / "sample_bots" / "node" / "node_modules" / "@grpc" / "grpc-js").is_dir()
    else None
)


def arena(
    folder: Path, *argv: str, database: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``arena ARGV --records FOLDER/records`` run in this process (the command's own
    ``main``, its exit status and output): a new Python per command cost 1-2 s quiet, ten
    on a loaded machine, and a module calls it a dozen times. The server and the bots
    stay real processes; ``replay --verify`` in test_competition.py runs as one too."""
    where = ["--database", database] if database else []
    full = [*argv, "--records", str(folder / "records"), *where]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(full)
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(["arena", *full], status, out.getvalue(), err.getvalue())


def register(folder: Path, name: str, database: str | None = None) -> str:
    done = arena(folder, "bots", "add", name, "--owner", f"{name}'s author", database=database)
    assert done.returncode == 0, done.stderr
    return done.stdout.rsplit(" ", 1)[-1].strip()


def start_bot(server: str, script: str, key: str, name: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'sample_bots'}:{ROOT}"}
    runner = [NODE] if script.endswith(".js") and NODE else [sys.executable]
    argv = [*runner, str(ROOT / script), "--server", server, "--bot-key", key,
            "--name", name, "--parallel", "2", "--reconnect", "60"]  # fmt: skip
    with log.open("ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)


def join(server: str, key: str) -> Iterator[pb.LobbyMessage]:
    channel = grpc.insecure_channel(server)
    return iter(pb_grpc.LobbyStub(channel).Join(pb.LobbyJoin(bot_key=key, protocol=1)))


def refused(server: str, key: str) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as caught:
        next(join(server, key))
    return caught.value.code()  # type: ignore[no-any-return]


def wait_for(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def fetch(url: str, token: str) -> str:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()  # type: ignore[no-any-return]


def assert_each_match_played_once(
    folder: Path, matches: Sequence[Any], count: int, log: str
) -> None:
    """The event's ``count`` matches all finished, each played to the end exactly once:
    every record in ``folder`` is complete and verifies, one per match, with its seed."""
    assert [m.state for m in matches] == ["finished"] * count, log[-3000:]
    assert len({m.match_id for m in matches}) == count
    played = {}
    for path in sorted(folder.glob("*.jsonl")):
        record = read_record(path)
        assert record.complete, path
        assert (verdict := verify(record)).ok, (path, str(verdict))
        played[record.header.match_id] = record.header.seed  # type: ignore[union-attr]
    assert played == {m.match_id: m.seed for m in matches}
