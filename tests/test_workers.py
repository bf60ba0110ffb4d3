"""``arena serve --workers 2``: matches on both workers behind one address.

Real processes throughout: the front and its two workers, sample bots (Python and Node
ones that dial the front and follow its redirect, Python ones that dial the
``seat_address`` Create returned), an organiser client, the merged ``/metrics``. One
worker is SIGKILLed mid-match: the front restarts it, the match resumes from its
record, every record verifies with ``arena replay --verify``, and a SIGKILL of the
front leaves no worker behind (docs/workers.md).
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from servekit import ROOT, Serve, bearer, start_serve
from test_resume import wait_for_answers

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
NODE_BOT = ROOT / "sample_bots" / "node" / "bot.js"
WORKER = re.compile(r"worker (\d) on (\S+) \(pid (\d+)\)")


def workers_of(serve: Serve) -> dict[str, int]:
    """Worker address -> pid of its latest process, from the front's log."""
    return {address: int(pid) for _, address, pid in WORKER.findall(serve.log.read_text())}


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def watch(stub: pb_grpc.MatchesStub, match_id: str, token: str, out: list[pb.Event]) -> None:
    for event in stub.Watch(pb.WatchRequest(match_id=match_id), metadata=bearer(token)):
        out.append(event)


def test_two_workers_share_matches_survive_a_worker_kill_and_verify(tmp_path: Path) -> None:
    node = shutil.which("node") if (NODE_BOT.parent / "node_modules").is_dir() else None
    serve = start_serve(
        tmp_path, "--workers", "2", "--matches-total", "3", "--log-json", "--http", "127.0.0.1:0"
    )
    bots: list[subprocess.Popen[bytes]] = []
    try:
        token = serve.token
        channel = grpc.insecure_channel(serve.target)
        stub = pb_grpc.MatchesStub(channel)
        # the organiser token is asked for, and checked, as on one process
        for metadata, code in (((), "UNAUTHENTICATED"), (bearer("nope"), "UNAUTHENTICATED")):
            with pytest.raises(grpc.RpcError) as refused:
                stub.Create(pb.CreateMatchRequest(), metadata=metadata, timeout=10)
            assert refused.value.code().name == code
        tc = pb.TimeControl(grace_ms=30_000)
        created = [
            stub.Create(
                pb.CreateMatchRequest(seed=i, deals=2 if i == 0 else 1, time_control=tc),
                metadata=bearer(token),
                timeout=10,
            )
            for i in range(3)
        ]
        workers = workers_of(serve)
        assert len(workers) == 2
        assert {c.seat_address for c in created} == set(workers)  # both workers host some
        with pytest.raises(grpc.RpcError) as full:  # --matches-total holds across workers
            stub.Create(pb.CreateMatchRequest(), metadata=bearer(token), timeout=10)
        assert full.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        with pytest.raises(grpc.RpcError) as seat:  # a seat token is not an organiser's
            stub.Create(pb.CreateMatchRequest(), metadata=bearer(created[0].seat_tokens[0]))
        assert seat.value.code() == grpc.StatusCode.PERMISSION_DENIED

        victim = created[0]
        survivor = next(c for c in created if c.seat_address != victim.seat_address)
        for n, match in enumerate(created):
            direct = n % 2 == 1 and match is not survivor  # else: the front redirects
            server = match.seat_address if direct else serve.target
            for seat_no, token_ in enumerate(match.seat_tokens):
                # the survivor's bots are Node bots (when Node is here), redirected too
                argv = (
                    [node, str(NODE_BOT)] if match is survivor and node
                    else [sys.executable, str(ROOT / "sample_bots" / "random_bot.py"),
                          "--seed", str(seat_no), "--reconnect", "60"]
                )  # fmt: skip
                bots.append(subprocess.Popen(
                    [*argv, "--server", server, "--token", token_],
                    stdout=subprocess.DEVNULL,
                    stderr=(tmp_path / f"bot{n}{seat_no}.log").open("wb"),
                ))  # fmt: skip
        watched: list[pb.Event] = []
        watcher = threading.Thread(target=watch, args=(stub, survivor.match_id, token, watched))
        watcher.start()

        record = serve.records / f"{victim.match_id}.jsonl"
        for match in created:  # a match still waiting for its bots has no record to resume
            if match.seat_address == victim.seat_address and match is not victim:
                wait_for_answers(serve.records / f"{match.match_id}.jsonl", 1)
        wait_for_answers(record, 60)
        os.kill(workers[victim.seat_address], signal.SIGKILL)
        for n, bot in enumerate(bots):
            assert bot.wait(timeout=120) == 0, (
                tmp_path / f"bot{n // 4}{n % 4}.log"
            ).read_text() + serve.log.read_text()[-3000:]
        watcher.join(timeout=30)
        assert watched and watched[-1].HasField("match_ended")

        log = serve.log.read_text()
        assert re.search(r"died \(SIGKILL\); restarting it, resuming [12] match", log)
        assert f"resuming match {victim.match_id}" in log
        resumed: list[pb.Event] = []  # Watch reaches the restarted worker's match too
        watch(stub, victim.match_id, token, resumed)
        assert resumed[-1].HasField("match_ended")
        for match in created:
            info = stub.Get(pb.GetMatchRequest(match_id=match.match_id), metadata=bearer(token))
            assert info.state == pb.FINISHED, info
            verified = subprocess.run(
                [sys.executable, "-m", "arena.cli.main", "replay", "--verify",
                 str(serve.records / f"{match.match_id}.jsonl")],
                capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
            )  # fmt: skip
            assert verified.returncode == 0, verified.stdout + verified.stderr
        listed = stub.List(pb.ListMatchesRequest(page_size=2), metadata=bearer(token))
        rest = stub.List(
            pb.ListMatchesRequest(page_token=listed.next_page_token), metadata=bearer(token)
        )
        assert len(listed.matches) == 2 and len(rest.matches) >= 1 and not rest.next_page_token
        channel.close()
        # one /metrics for both workers, each sample labelled with its worker
        web = re.search(r"web pages on (http://\S+)/ ", serve.log.read_text())
        assert web is not None
        with urllib.request.urlopen(f"{web[1]}/metrics", timeout=30) as response:
            metrics = response.read().decode()
        for worker in ("0", "1"):  # (a restarted worker counts from zero again)
            assert f'arena_decisions_total{{kind="play",worker="{worker}"}}' in metrics
        assert re.search(r'arena_decisions_total{kind="play",worker="\d"} [1-9]', metrics)
        # a match's page is the worker's: the front redirects there
        page = http.client.HTTPConnection(web[1].removeprefix("http://"), timeout=30)
        page.request("GET", f"/matches/{survivor.match_id}", headers=dict(bearer(token)))
        moved = page.getresponse()
        assert moved.status == 307
        assert re.fullmatch(rf"http://127\.0\.0\.1:\d+/matches/{survivor.match_id}",
                            moved.getheader("location") or "")  # fmt: skip
        page.close()

        # SIGKILL of the front takes its workers with it (no orphans)
        pids = list(workers_of(serve).values())
        serve.process.send_signal(signal.SIGKILL)
        serve.process.wait()
        deadline = time.monotonic() + 10
        while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(gone(pid) for pid in pids)
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.stop()
