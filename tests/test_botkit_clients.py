"""botkit's two clients against a real ``arena serve`` on loopback, bots as processes:
both play whole matches (faults still reach the bot as Verdicts, accepted answers do not
when the protocol lets them ride along), both give up with one line when the server is
gone for good, and the asyncio client leaves a peer that never speaks gRPC.
(Reconnecting with the same token after a server restart: tests/test_resume.py, whose
bots use both clients.)"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from servekit import Serve, start_serve, wait_for_answers

from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots"))

import botkit  # noqa: E402
import botkit.aio  # noqa: E402

pytestmark = pytest.mark.slow


def create(serve: Serve, deals: int) -> pb.CreateMatchResponse:
    with grpc.insecure_channel(serve.target) as channel:
        return pb_grpc.MatchesStub(channel).Create(  # type: ignore[no-any-return]
            pb.CreateMatchRequest(
                seed=3, deals=deals, time_control=pb.TimeControl(grace_ms=20_000)
            ),
            timeout=10,
        )


def info(serve: Serve, match_id: str) -> pb.MatchInfo:
    with grpc.insecure_channel(serve.target) as channel:
        return pb_grpc.MatchesStub(channel).Get(  # type: ignore[no-any-return]
            pb.GetMatchRequest(match_id=match_id), timeout=10
        )


def launch(
    script: str, token: str, serve: Serve, log: Path, *extra: str
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ARENA_SERVER": serve.target, "ARENA_TOKEN": token}
    env.pop("ARENA_BOT_CLIENT", None)
    return subprocess.Popen(
        [sys.executable, str(ROOT / script), *extra], env=env, stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )  # fmt: skip


def test_both_clients_play_a_match_and_only_faults_get_a_verdict(tmp_path: Path) -> None:
    serve = start_serve(tmp_path / "serve", "--open")
    bots: list[subprocess.Popen[bytes]] = []
    try:
        created = create(serve, deals=1)
        seats = [
            ("sample_bots/random_bot.py", "--seed", "1", "--transcript", str(tmp_path / "t0")),
            ("sample_bots/random_bot.py", "--client", "sync", "--transcript", str(tmp_path / "t1")),
            ("tests/hostile/clumsy.py", "--seed", "2"),  # every 5th play illegal: faults
            ("sample_bots/greedy_bot.py", "--client", "sync", "--verdicts", "every",
             "--transcript", str(tmp_path / "t3")),
        ]  # fmt: skip
        for seat, (script, *extra) in enumerate(seats):
            log = tmp_path / f"bot{seat}.log"
            bots.append(launch(script, created.seat_tokens[seat], serve, log, *extra))
        for seat, bot in enumerate(bots):
            assert bot.wait(timeout=120) == 0, (tmp_path / f"bot{seat}.log").read_text()
        got = info(serve, created.match_id)
        assert got.state == pb.FINISHED
        faults = list(got.result.fault_counts)
        assert faults[0] == faults[1] == faults[3] == 0 and faults[2] > 0, faults
        clumsy = (tmp_path / "bot2.log").read_text()
        assert clumsy.count("clumsy: fault on seq") == faults[2], clumsy
        assert verify(read_record(serve.records / f"{created.match_id}.jsonl")).ok
        texts = [(tmp_path / t).read_text() for t in ("t0", "t1", "t3")]
        answers = [text.count("sent BotMessage") - 1 for text in texts]
        verdicts = [text.count("accepted: true") for text in texts]
        acks = [text.count("accepted_seq: ") for text in texts]
        assert all(n > 20 for n in answers), answers
        for text in texts[:2]:  # both clients asked for faults only, and the Welcome agrees
            hello, welcome = text.split("received RefereeMessage")[:2]
            assert (
                "verdicts: VERDICT_FAULTS_ONLY" in hello
                and "verdicts: VERDICT_FAULTS_ONLY" in welcome
            )
        # no Verdict for an accepted answer: each is acknowledged on the next message instead
        assert verdicts[:2] == [0, 0] and acks[:2] == answers[:2], (verdicts, acks, answers)
        assert "verdicts: " not in texts[2]  # --verdicts every: a Verdict per answer, as before
        assert verdicts[2] == answers[2] and acks[2] == 0
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.stop()


def test_a_server_gone_for_good_ends_both_clients_with_one_line(tmp_path: Path) -> None:
    serve = start_serve(tmp_path / "serve", "--open")
    bots: list[subprocess.Popen[bytes]] = []
    try:
        created = create(serve, deals=4)
        for seat in range(4):
            client = ("--client", "sync") if seat % 2 else ()
            log = tmp_path / f"bot{seat}.log"
            token = created.seat_tokens[seat]
            bots.append(launch("sample_bots/random_bot.py", token, serve, log,
                               "--reconnect", "2", *client))  # fmt: skip
        wait_for_answers(serve.records / f"{created.match_id}.jsonl", 30)
        serve.process.send_signal(signal.SIGKILL)
        serve.process.wait()
        for seat, bot in enumerate(bots):
            assert bot.wait(timeout=30) == 1
            log = (tmp_path / f"bot{seat}.log").read_text()
            assert log.strip().splitlines()[-1] == "random_bot: gave up reconnecting after 2s"
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.stop()


def test_the_asyncio_client_leaves_a_peer_that_never_speaks_grpc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A listener that takes the TCP connection and says nothing (a wedged server, a wrong
    port) costs one handshake time per attempt, then the bot gives up as usual."""
    monkeypatch.setattr(botkit.aio, "HANDSHAKE_S", 0.5)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        target = f"127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        code = asyncio.run(botkit.play_async(lambda _t, _b: [], "quiet", target, "tok", "1", 1.0))
        took = time.monotonic() - started
    assert code == 1 and 1.0 < took < 10, took
