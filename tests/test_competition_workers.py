"""A competition on ``arena serve --workers 2``: the front runs the lobby, the event's
matches run in both workers (docs/workers.md, docs/competition.md).

Real processes throughout: the front and its workers, four registered sample bots
(botkit, ``--bot-key``, two matches each at once) dialing the front and redirected to
the worker named in their offers, a raw ``Lobby.Join`` that reads the offers' worker
address, the SQLite database or a real PostgreSQL cluster (tests/pgkit.py; skipped,
naming the package, where it is missing). A worker is SIGKILLed mid-event, then the
whole front: every event match is played to its end exactly once, every record
verifies, the standings count every match.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from competitionkit import arena, assert_each_match_played_once, join, start_bot, wait_for
from pgkit import new_database
from servekit import Serve, start_serve
from test_workers import workers_of

from arena.competition.store import open_store

pytestmark = pytest.mark.slow
BOTS = ("ann", "ben", "cat", "dan")
MATCHES = 6
# 4 deals: a 1-deal match now lasts ~0.2 s, too short to be seen running beside another,
# or to be still running when a worker and then the front are killed "mid-match"


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "records" / "competition.sqlite3")
    return new_database(request.getfixturevalue("pg_socket"))


def test_event_on_two_workers_survives_a_worker_and_a_front_kill(
    tmp_path: Path, database: str
) -> None:
    db = open_store(database)
    keys = {name: db.add_bot(name, f"{name}'s author") for name in BOTS}
    spare = db.add_bot("eve", "a raw lobby client")  # reads the offers itself
    created = arena(tmp_path, "events", "create", "cup", "--bots", ",".join(BOTS),
                    "--format", "ladder", "--matches", str(MATCHES), "--deals", "4",
                    "--no-duplicate", "--connect-timeout", "20",
                    database=database)  # fmt: skip
    assert created.returncode == 0, created.stderr
    options = ("--database", database, "--workers", "2", "--log-json")
    serve: Serve = start_serve(tmp_path, *options)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        # the offers of a bot in no event: none; the lobby is open on the front
        welcome = next(join(serve.target, spare))
        assert welcome.welcome.bot == "eve"
        for name in BOTS:
            script = "sample_bots/greedy_bot.py" if name == "ann" else "sample_bots/random_bot.py"
            bots.append(start_bot(serve.target, script, keys[name], name, tmp_path / f"{name}.log"))

        def both_running() -> bool:  # two tables at once (each bot plays two): both workers
            return [m.state for m in db.matches("cup")].count("running") >= 2

        wait_for(both_running, 120, "two event matches running at once")
        workers = workers_of(serve)
        started = re.findall(r'"address": "([^"]+)"[^\n]*"event_match_started"|'
                             r'"event_match_started"[^\n]*"address": "([^"]+)"',
                             serve.log.read_text())  # fmt: skip
        addresses = {a or b for a, b in started}
        assert addresses == set(workers), (addresses, workers)  # offers name both workers
        os.kill(next(iter(workers.values())), signal.SIGKILL)  # one worker, mid-match

        def one_more_finished() -> bool:  # and one running, for the front's kill to cut
            states = [m.state for m in db.matches("cup")]
            return states.count("finished") >= 3 and "running" in states

        wait_for(one_more_finished, 120, "three finished matches after the worker's kill")
        serve.process.send_signal(signal.SIGKILL)  # now the whole server, mid-match
        serve.process.wait()
        port = int(serve.target.rsplit(":", 1)[1])
        serve = start_serve(tmp_path, *options, port=port)
        wait_for(lambda: db.event("cup").state == "finished", 240, "the event to finish")
    finally:
        for bot in bots:
            bot.kill()
            bot.wait()
        log = serve.stop()
    assert "died (SIGKILL); restarting it" in (tmp_path / "serve.log").read_text()
    # after the front's kill, the running matches were resumed (fresh seat tokens from
    # their new workers), found finished in their records, or put back in the queue
    recovered = ("event_match_resumed", "event_match_found_finished", "event_match_requeued")
    assert any(word in log for word in recovered), log[-3000:]
    matches = db.matches("cup")
    assert_each_match_played_once(tmp_path / "records", matches, MATCHES, log)
    standings = arena(tmp_path, "events", "standings", "cup", "--json", database=database)
    assert '"finished": 6' in standings.stdout and '"left": 0' in standings.stdout
    db.close()


def test_offers_name_the_worker_hosting_the_match(tmp_path: Path) -> None:
    """A raw ``Lobby.Join`` (as a bot in another language) gets offers whose
    ``seat_address`` is a worker's address, never the front's."""
    database = str(tmp_path / "records" / "competition.sqlite3")
    db = open_store(database)
    keys = [db.add_bot(f"b{i}", "raw") for i in range(4)]
    created = arena(tmp_path, "events", "create", "one", "--bots", "b0,b1,b2,b3",
                    "--matches", "1", "--format", "ladder", "--deals", "1",
                    "--no-duplicate", "--connect-timeout", "1", database=database)  # fmt: skip
    assert created.returncode == 0, created.stderr
    serve = start_serve(tmp_path, "--database", database, "--workers", "2")
    try:
        streams = [join(serve.target, key) for key in keys]
        offers = []
        for stream in streams:
            assert next(stream).HasField("welcome")
            offers.append(next(stream).offer)
        workers = workers_of(serve)
        assert {o.seat_address for o in offers} <= set(workers)
        assert len({o.match_id for o in offers}) == 1 and sorted(o.seat for o in offers) == [
            0, 1, 2, 3
        ]  # fmt: skip
    finally:
        serve.stop()
    db.close()
