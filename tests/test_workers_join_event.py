"""A competition on a worker joined from "another host" (``arena serve --join FRONT
--listen 127.0.0.2:0``, its own ``--records``), docs/workers.md.

Real processes: the front (``--workers 2 --database``), the joined worker, four
registered sample bots (botkit) in the front's lobby, redirected to the joined worker.
The two local workers are kept busy with organisers' matches that wait for their bots,
so the front gives the event's matches to the joined worker (fewest live matches
first). The joined worker plays event matches to their end (the front copies each
record into its own folder before reading the result); then it is SIGKILLed mid-match:
its unfinished match goes back in the queue and is played on a local worker, and the
standings count every match once, each from one complete, verified record. Every match
link of the event's page on the front's ``--http`` opens (the joined worker's matches
from the front's copy of their records).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from urllib.parse import urljoin

import grpc
import pytest
from competitionkit import arena, assert_each_match_played_once, start_bot, wait_for
from servekit import Serve, bearer, start_serve
from test_workers_events_web import WEB, get, links
from test_workers_join import JOINED, joining

from arena.competition.store import open_store
from arena.server.workers.copy import complete
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
BOTS = ("ann", "ben", "cat", "dan")
MATCHES = 4


def answers(path: Path) -> int:
    return path.read_bytes().count(b'"type":"answer"') if path.is_file() else 0


def test_an_event_on_a_joined_worker_survives_its_death(tmp_path: Path) -> None:
    database = str(tmp_path / "records" / "competition.sqlite3")
    db = open_store(database)
    keys = {name: db.add_bot(name, f"{name}'s author") for name in BOTS}
    # 4 deals a match: a 1-deal match now lasts ~0.2 s, and the 0.2 s polls below missed
    # the moment one has finished on the joined worker while the next runs there
    created = arena(tmp_path, "events", "create", "cup", "--bots", ",".join(BOTS),
                    "--format", "ladder", "--matches", str(MATCHES), "--deals", "4",
                    "--no-duplicate", "--connect-timeout", "20",
                    database=database)  # fmt: skip
    assert created.returncode == 0, created.stderr
    front: Serve = start_serve(tmp_path, "--database", database, "--workers", "2", "--log-json",
                               "--join-timeout", "600", "--http", "127.0.0.1:0")  # fmt: skip
    remote: subprocess.Popen[bytes] | None = None
    bots: list[subprocess.Popen[bytes]] = []
    channel = grpc.insecure_channel(front.target)
    try:
        # two waiting matches on each local worker, then the joined one has the fewest
        stub = pb_grpc.MatchesStub(channel)
        for _ in range(4):
            stub.Create(pb.CreateMatchRequest(), metadata=bearer(front.token))
        remote = joining(tmp_path, front, front.token_file)
        wait_for(lambda: JOINED.search(front.log.read_text()), 60, "the worker to join")
        for name in BOTS:
            bots.append(start_bot(front.target, "sample_bots/random_bot.py", keys[name], name,
                                  tmp_path / f"{name}.log"))  # fmt: skip
        there = tmp_path / "remote"

        def on_the_joined_worker() -> list[str]:
            matches = db.matches("cup")
            return [m.match_id for m in matches if (there / f"{m.match_id}.jsonl").exists()]

        def one_played_there_and_one_running() -> bool:
            matches = {m.match_id: m.state for m in db.matches("cup")}
            ids = on_the_joined_worker()
            return any(matches[i] == "finished" for i in ids) and any(
                answers(there / f"{i}.jsonl") >= 5 and not complete(there / f"{i}.jsonl")
                for i in ids
            )

        wait_for(one_played_there_and_one_running, 120, "a finished and a running match there")
        os.kill(remote.pid, signal.SIGKILL)  # the joined worker, mid-match
        remote.wait()
        cut = {i for i in on_the_joined_worker() if not complete(there / f"{i}.jsonl")}
        assert cut, "a match was running on the joined worker"
        wait_for(lambda: db.event("cup").state == "finished", 180, "the event to finish")
        # the leaderboard's links work through the front: a joined worker's finished
        # match from the front's copy of its record (that worker serves no pages)
        found = WEB.search(front.log.read_text())
        assert found is not None
        base = found[1]
        status, board, _ = get(f"{base}/events/cup", front.token)
        assert status == 200
        for href in [h for h in links(board) if h.startswith("../matches/")]:
            url = urljoin(f"{base}/events/cup", href)
            status, page, _ = get(url, front.token)
            assert status == 200 and href.rsplit("/", 1)[1] in page, (href, status, page[:200])
            assert get(url)[0] == 401  # anonymous, as on one process
    finally:
        for bot in bots:
            bot.kill()
            bot.wait()
        if remote is not None and remote.poll() is None:
            remote.kill()
        channel.close()
        log = front.stop()
    assert "live match(es) lost with it" in log
    assert '"event_match_requeued"' in log
    matches = db.matches("cup")
    # every match finished once, from a complete verified record in the front's folder
    # (the joined worker's were copied there); the cut ones were played again elsewhere
    assert_each_match_played_once(tmp_path / "records", matches, MATCHES, log)
    finished_there = [m for m in matches if (there / f"{m.match_id}.jsonl").exists()]
    assert finished_there, "an event match was played to its end on the joined worker"
    for m in finished_there:
        assert Path(m.record).read_bytes() == (there / f"{m.match_id}.jsonl").read_bytes()
        assert Path(m.record).parent == tmp_path / "records"
    assert not cut & {m.match_id for m in matches}
    standings = json.loads(arena(tmp_path, "events", "standings", "cup", "--json",
                                 database=database).stdout)  # fmt: skip
    assert standings["finished"] == MATCHES and standings["left"] == 0
    assert sum(r["played"] for r in standings["bots"]) == 4 * MATCHES
    db.close()
