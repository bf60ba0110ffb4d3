"""Crash safety: SIGKILL the server mid-match, restart it, and the match finishes.

Real processes throughout: ``arena serve`` on a loopback port, four sample bots that
reconnect with their tokens, and an organiser client creating the match over gRPC.
The finished record must verify as if nothing had happened.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from servekit import (
    ROOT,
    create_match,
    finish_after_restart,
    kill_9,
    reconnecting_bots,
    restart,
    start_serve,
    stop_all,
    wait_for_answers,
)

from arena.records import read_record

pytestmark = pytest.mark.slow
# one process, not a front and workers: the kill -9 hits the referee itself
OPTIONS = ("--log-json", "--open", "--workers", "1")


def test_a_killed_server_resumes_the_match_and_the_record_verifies(tmp_path: Path) -> None:
    server = start_serve(tmp_path, *OPTIONS)
    bots = []
    try:
        created = create_match(server, seed=11, deals=4, names=["r0", "g1", "r2", "g3"])
        scripts = [ROOT / "sample_bots" / f"{s}.py" for s in ["random_bot", "greedy_bot"] * 2]
        bots = reconnecting_bots(server, scripts, list(created.seat_tokens), tmp_path)
        record_path = server.records / f"{created.match_id}.jsonl"
        wait_for_answers(record_path, 100)
        kill_9(server)
        before = read_record(record_path)
        assert not before.complete  # cut off: no footer
        server = restart(server, tmp_path, *OPTIONS)
        after = finish_after_restart(server, bots, record_path, tmp_path)
        assert len(after.answers()) > len(before.answers())
    finally:
        stop_all(server, bots)
