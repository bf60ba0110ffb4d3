"""The organiser's service (``arena.v1.Matches``) and ``Arena.Check`` against a real
``arena serve``: create, list, get, watch, fetch the record, cancel, bad requests.

The organiser presents its token the standard way: gRPC call credentials
(``authorization: Bearer …``) on a channel with local credentials (loopback)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow
TOKEN = "organiser-token-for-the-test"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    records = tmp_path_factory.mktemp("records")
    token_file = records.parent / "organiser.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli.main", "serve", "--listen", f"127.0.0.1:{port}",
         "--records", str(records), "--organiser-token-file", str(token_file), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    target = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    try:
        yield target, records
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture
def matches(server: tuple[str, Path]) -> Iterator[pb_grpc.MatchesStub]:
    credentials = grpc.composite_channel_credentials(
        grpc.local_channel_credentials(), grpc.access_token_call_credentials(TOKEN)
    )
    with grpc.secure_channel(server[0], credentials) as channel:
        yield pb_grpc.MatchesStub(channel)


def play_fallback_bots(target: str, tokens: list[str]) -> subprocess.Popen[str]:
    bots = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "bots" / "fallback_bot.py"), "--server", target,
         "--tokens-file", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert bots.stdin is not None
    bots.stdin.write("\n".join(tokens) + "\n")
    bots.stdin.close()
    return bots


def test_a_match_created_over_grpc_is_played_watched_and_fetched(
    server: tuple[str, Path], matches: pb_grpc.MatchesStub
) -> None:
    target, records = server
    created = matches.Create(pb.CreateMatchRequest(seed=5, deals=1), timeout=10)
    assert len(created.seat_tokens) == 4 and len(set(created.seat_tokens)) == 4
    info = matches.Get(pb.GetMatchRequest(match_id=created.match_id), timeout=10)
    assert info.state == pb.WAITING and list(info.connected) == [False] * 4
    watch = matches.Watch(pb.WatchRequest(match_id=created.match_id), timeout=60)
    bots = play_fallback_bots(target, list(created.seat_tokens))
    events = list(watch)  # the stream ends with the match
    assert bots.wait(timeout=60) == 0
    kinds = [e.WhichOneof("kind") for e in events]
    assert kinds[0] == "deal_started" and kinds[-1] == "match_ended"
    assert "card_dealt" not in kinds  # spectators never see a dealt card…
    for event in events:  # …nor the kitty before the deal's end
        if event.WhichOneof("kind") in ("kitty_taken", "kitty_buried"):
            assert not getattr(event, event.WhichOneof("kind")).cards
    assert [e.index for e in events] == sorted(e.index for e in events)
    info = matches.Get(pb.GetMatchRequest(match_id=created.match_id), timeout=10)
    assert info.state == pb.FINISHED and info.result.reason == "deals_played"
    listed = matches.List(pb.ListMatchesRequest(states=[pb.FINISHED]), timeout=10).matches
    assert created.match_id in [m.match_id for m in listed]
    lines = [c.line for c in matches.FetchRecord(
        pb.FetchRecordRequest(match_id=created.match_id), timeout=10)]  # fmt: skip
    path = records / f"{created.match_id}.jsonl"
    assert lines == path.read_text().splitlines()
    assert verify(read_record(path)).ok


def test_a_waiting_match_can_be_cancelled(matches: pb_grpc.MatchesStub) -> None:
    created = matches.Create(pb.CreateMatchRequest(seed=6), timeout=10)
    info = matches.Cancel(
        pb.CancelMatchRequest(match_id=created.match_id, reason="test"), timeout=10
    )
    assert info.state == pb.CANCELLED  # Cancel answers with the final state


def test_a_running_match_cancelled_keeps_the_reason_in_its_record(
    server: tuple[str, Path], matches: pb_grpc.MatchesStub
) -> None:
    target, records = server
    created = matches.Create(pb.CreateMatchRequest(seed=8, deals=6), timeout=10)
    bots = play_fallback_bots(target, list(created.seat_tokens))
    path = records / f"{created.match_id}.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b'"type":"answer"') >= 20:
            break
        time.sleep(0.05)
    info = matches.Cancel(
        pb.CancelMatchRequest(match_id=created.match_id, reason="the venue closes"), timeout=20
    )
    assert info.state == pb.CANCELLED and info.result.reason == "cancelled"
    assert bots.wait(timeout=60) == 0
    record = read_record(path)
    assert record.complete and verify(record).ok
    cancels = [line.data for line in record.lines if line.type == "cancel"]
    assert cancels == [{"n": cancels[0]["n"], "type": "cancel", "reason": "the venue closes"}]
    assert record.result is not None and record.result.detail == "the venue closes"


def test_bad_requests_get_clear_statuses(
    server: tuple[str, Path], matches: pb_grpc.MatchesStub
) -> None:
    with pytest.raises(grpc.RpcError) as bad_rules:
        matches.Create(pb.CreateMatchRequest(rules={"no_such_rule": "1"}), timeout=10)
    assert bad_rules.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no_such_rule" in (bad_rules.value.details() or "")
    with pytest.raises(grpc.RpcError) as missing:
        matches.Get(pb.GetMatchRequest(match_id="m-nope"), timeout=10)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    with grpc.insecure_channel(server[0]) as channel:
        arena = pb_grpc.ArenaStub(channel)
        with pytest.raises(grpc.RpcError) as stranger:
            arena.Check(pb.CheckRequest(token="nope", action=pb.Action(seq=1)), timeout=10)
        assert stranger.value.code() == grpc.StatusCode.UNAUTHENTICATED
        created = matches.Create(pb.CreateMatchRequest(seed=7), timeout=10)
        with pytest.raises(grpc.RpcError) as early:  # not running yet: nothing to judge
            arena.Check(
                pb.CheckRequest(token=created.seat_tokens[0], action=pb.Action(seq=1)), timeout=10
            )
        assert early.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "has not started" in (early.value.details() or "")
        matches.Cancel(pb.CancelMatchRequest(match_id=created.match_id), timeout=10)
