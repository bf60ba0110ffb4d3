"""A continuous ladder over the network: no schedule and no end, tables paired by
rating and uncertainty from whichever registered bots are in the lobby, a bot
registered later (over gRPC) seated once it joins, a restart in the middle, and an end
only when the organiser says so (``arena events finish --server``).

Real ``arena serve``, real bot processes (the random sample bot through
``botkit --bot-key``), the SQLite default (the PostgreSQL path is the same code:
tests/test_competition.py runs the end-to-end event on both).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from competitionkit import arena, start_bot, wait_for
from servekit import Serve, start_serve

from arena.competition.store import open_store

pytestmark = pytest.mark.slow
BOT = "sample_bots/random_bot.py"


def test_a_continuous_ladder_runs_until_finished_and_survives_a_restart(tmp_path: Path) -> None:
    db = open_store(tmp_path / "records" / "competition.sqlite3")
    keys = {name: db.add_bot(name, "me") for name in ("a", "b", "c", "d", "e")}
    created = arena(tmp_path, "events", "create", "lad", "--format", "ladder", "--bots", "all",
                    "--matches", "0", "--deals", "1", "--decision-ms", "300")  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "a ladder of every registered bot, continuous" in created.stdout
    serve: Serve = start_serve(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []

    def remote(*argv: str) -> subprocess.CompletedProcess[str]:
        where = ("--server", serve.target, "--organiser-token-file", str(serve.token_file))
        return arena(tmp_path, *argv, *where)

    def finished() -> list[str]:
        return [m.match_id or "" for m in db.matches("lad") if m.state == "finished"]

    try:
        for name, key in keys.items():
            bots.append(start_bot(serve.target, BOT, key, name, tmp_path / f"{name}.log"))
        # five bots, one table at a time: the one left out is the least certain next time,
        # so every bot gets a seat (a 1-deal match is now ~0.2 s: a bot whose process
        # starts last can miss the first tables, so this waits rather than counts them)
        def played() -> set[str]:
            return {n for m in db.matches("lad") for n in m.seats}

        wait_for(lambda: len(finished()) >= 3 and played() == set(keys), 120,
                 "three ladder matches and every bot seated")  # fmt: skip
        serve.stop()  # a clean stop: the running match goes back to the queue
        before = len(finished())
        port = int(serve.target.rsplit(":", 1)[1])
        serve = start_serve(tmp_path, port=port)
        added = remote("bots", "add", "late", "--owner", "me")
        assert added.returncode == 0, added.stderr
        late_key = added.stdout.rsplit(" ", 1)[-1].strip()
        bots.append(start_bot(serve.target, BOT, late_key, "late", tmp_path / "late.log"))
        wait_for(lambda: len(finished()) >= before + 3, 120, "the ladder to go on")
        wait_for(lambda: any("late" in m.seats for m in db.matches("lad")), 60, "late's seat")
        done = remote("events", "finish", "lad")
        assert done.returncode == 0 and "event lad finished" in done.stdout, done.stderr
        wait_for(lambda: all(m.state != "running" for m in db.matches("lad")), 60, "the end")
        count = len(db.matches("lad"))
        standings = json.loads(remote("events", "standings", "lad", "--json").stdout)
    finally:
        for bot in bots:
            bot.kill()
            bot.wait()
        serve.stop()
    assert db.event("lad").state == "finished"
    assert len(db.matches("lad")) == count  # nothing paired after the finish
    assert all(m.state == "finished" for m in db.matches("lad"))
    ids = [m.match_id for m in db.matches("lad")]
    assert len(set(ids)) == len(ids)  # no match played twice
    rows = {r["bot"]: r for r in standings["bots"]}
    assert set(rows) == {*keys, "late"} and standings["left"] == 0
    assert sum(r["played"] for r in rows.values()) == 4 * len(ids)
    db.close()
