"""Competitions end to end: registered bots in the lobby of a real ``arena serve``, an
event scheduled from the database, standings, and a SIGKILL of the server mid-event.

Bots are real processes (the sample bots through ``botkit --bot-key``, the Node one
where node is installed, and two hostile ones); the server is the real command; the
database is the SQLite file the commands share, or a real PostgreSQL cluster started
for the module (tests/pgkit.py; skipped, naming the package, where it is missing).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest
from competitionkit import (
    NODE,
    arena,
    assert_each_match_played_once,
    fetch,
    join,
    refused,
    register,
    start_bot,
    wait_for,
)
from pgkit import new_database
from servekit import ROOT, Serve, bearer, free_port, start_serve

from arena.competition.store import open_store
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The event's database: ``--database`` for every command and the server."""
    if request.param == "sqlite":
        return str(tmp_path / "records" / "competition.sqlite3")
    return new_database(request.getfixturevalue("pg_socket"))


def test_bot_keys_wrong_disabled_rotated_and_two_seats(tmp_path: Path, database: str) -> None:
    """The organiser registers a bot on the database, then manages it over gRPC
    (``--server``); the lobby refuses a wrong, disabled, rotated or doubled key."""
    key = register(tmp_path, "solo", database)
    serve = start_serve(tmp_path, "--database", database)
    remote = ("--server", serve.target, "--organiser-token-file", str(serve.token_file))

    def organiser(*argv: str) -> subprocess.CompletedProcess[str]:
        return arena(tmp_path, *argv, *remote)

    stub = pb_grpc.CompetitionStub(grpc.insecure_channel(serve.target))
    md = bearer(serve.token)
    try:
        assert refused(serve.target, "bk-not-a-key") == grpc.StatusCode.UNAUTHENTICATED
        assert refused(serve.target, "") == grpc.StatusCode.UNAUTHENTICATED
        stream = join(serve.target, key)
        welcome = next(stream)
        assert welcome.welcome.bot == "solo"
        # the same key again while the first is in the lobby
        assert refused(serve.target, key) == grpc.StatusCode.ALREADY_EXISTS
        stream.cancel()  # type: ignore[attr-defined]
        assert organiser("bots", "disable", "solo").returncode == 0
        assert refused(serve.target, key) == grpc.StatusCode.PERMISSION_DENIED
        assert not stub.SetBotDisabled(pb.SetBotDisabledRequest(name="solo"), metadata=md).disabled
        rotated = organiser("bots", "rotate", "solo")
        new_key = rotated.stdout.rsplit(" ", 1)[-1].strip()
        assert refused(serve.target, key) == grpc.StatusCode.UNAUTHENTICATED
        assert next(join(serve.target, new_key)).welcome.bot == "solo"
        added = organiser("bots", "add", "b", "--owner", "me")
        assert added.returncode == 0 and "bk-" in added.stdout, added.stderr
        for name in ("c", "d"):  # the RPC itself (the CLI's remote path is the line above)
            reply = stub.AddBot(pb.AddBotRequest(name=name, owner="me"), metadata=md)
            assert reply.bot == name and reply.bot_key.startswith("bk-")
        listed = json.loads(organiser("bots", "list", "--json").stdout)
        assert [b["name"] for b in listed] == ["b", "c", "d", "solo"]
        assert listed[3]["key_rotated"] and "key" not in json.dumps(listed).replace("key_", "")
        missing = organiser("bots", "disable", "nobody")
        assert missing.returncode == 1 and "NOT_FOUND: no bot named 'nobody'" in missing.stderr
        # one bot cannot take two seats of a match unless the event is a self-play event
        twice = organiser("events", "create", "e1", "--bots", "solo,solo,b,c")
        assert twice.returncode == 1 and "two seats" in twice.stderr
        ok = organiser("events", "create", "e2", "--bots", "solo,solo,b,c,d", "--self-play")
        assert ok.returncode == 0 and "matches scheduled" in ok.stdout, ok.stderr
        listed_events = stub.ListEvents(pb.ListEventsRequest(), metadata=md).events
        assert [(e.name, e.matches) for e in listed_events] == [("e2", 30)]
        # organiser only: a bot key, a seat-less anonymous caller, a wrong token
        for metadata, code in (((), grpc.StatusCode.UNAUTHENTICATED),
                               (bearer(new_key), grpc.StatusCode.UNAUTHENTICATED)):  # fmt: skip
            with pytest.raises(grpc.RpcError) as caught:
                stub.AddBot(pb.AddBotRequest(name="x", owner="y"), metadata=metadata)
            assert caught.value.code() == code
    finally:
        log = serve.stop()
    assert key not in log and new_key not in log  # keys never logged
    db = open_store(database)
    assert any(m.seats.count("solo") == 2 for m in db.matches("e2"))
    assert "x" not in {b.name for b in db.bots()}
    db.close()


BOTS = {
    "rand": "sample_bots/random_bot.py",
    "greedy": "sample_bots/greedy_bot.py",
    "node": "sample_bots/node/bot.js" if NODE else "sample_bots/random_bot.py",
    "rand2": "sample_bots/random_bot.py",
    "hostile": "tests/hostile/lobby_illegal.py",
    "slow": "tests/hostile/lobby_slow.py",
}


def test_six_bots_event_survives_sigkill(tmp_path: Path, database: str) -> None:
    """Six registered bots (two hostile) in a ladder of 8 matches through the lobby; the
    server is SIGKILLed mid-event and restarted; every match is played once, every
    record verifies; the standings are read from the CLI and the HTTP side alike."""
    db = open_store(database)
    keys = {name: db.add_bot(name, f"{name}'s author") for name in BOTS}  # as `arena bots add`
    created = arena(tmp_path, "events", "create", "cup", "--bots", ",".join(BOTS),
                    "--format", "ladder", "--matches", "8", "--deals", "1",
                    "--decision-ms", "300", "--connect-timeout", "20", "--max-faults", "1000",
                    database=database)  # fmt: skip
    assert created.returncode == 0, created.stderr
    http = f"127.0.0.1:{free_port()}"
    serve: Serve = start_serve(tmp_path, "--database", database, "--http", http)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        # three bots in the lobby: nothing can start, and nobody is faulted for it
        def launch(name: str) -> None:
            log = tmp_path / f"{name}.log"
            bots.append(start_bot(serve.target, BOTS[name], keys[name], name, log))

        for name in ("rand", "greedy", "node"):
            launch(name)

        def in_lobby(*names: str) -> bool:
            logs = [(tmp_path / f"{n}.log").read_text(errors="replace") for n in names]
            return all("in the lobby as" in log for log in logs)

        wait_for(lambda: in_lobby("rand", "greedy", "node"), 60, "three bots in the lobby")
        time.sleep(0.5)  # the lobby pairs on each join: a match would have started by now
        assert db.matches("cup") == []
        for name in ("rand2", "hostile", "slow"):
            launch(name)

        def midway() -> bool:
            states = [m.state for m in db.matches("cup")]
            return states.count("finished") >= 1 and "running" in states

        wait_for(midway, 120, "a finished match and a running one")
        serve.process.send_signal(signal.SIGKILL)
        serve.process.wait()
        port = int(serve.target.rsplit(":", 1)[1])
        serve = start_serve(tmp_path, "--database", database, "--http", http, port=port)

        def over() -> bool:
            return db.event("cup").state == "finished"

        wait_for(over, 240, "the event to finish")
        page = fetch(f"http://{http}/events/cup", serve.token)
        exported = json.loads(fetch(f"http://{http}/api/events/cup/standings", serve.token))
        with pytest.raises(urllib.error.HTTPError) as anonymous:
            fetch(f"http://{http}/api/events/cup/standings", "")
        assert anonymous.value.code == 401
    finally:
        for bot in bots:
            bot.kill()
            bot.wait()
        log = serve.stop()
    # the match running at the kill was resumed from its record, found finished in it,
    # or (never started) put back in the queue
    recovered = ("event_match_resumed", "event_match_found_finished", "event_match_requeued")
    assert any(word in log for word in recovered), log
    matches = db.matches("cup")
    assert_each_match_played_once(tmp_path / "records", matches, 8, log)
    # and by the command a user runs, as a process of its own (one is enough: it is the
    # same verify as above, and a new Python costs seconds on a loaded machine)
    done = subprocess.run([sys.executable, "-m", "arena.cli.main", "replay",
                           str(matches[0].record), "--verify"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(arena(tmp_path, "events", "standings", "cup", "--json",
                            database=database).stdout)  # fmt: skip
    rows = {r["bot"]: r for r in data["bots"]}
    assert data["finished"] == 8 and data["left"] == 0 and set(rows) == set(BOTS)
    assert sum(r["played"] for r in rows.values()) == 32
    assert all(r["won"] + r["lost"] + r["drawn"] == r["played"] for r in rows.values())
    assert rows["hostile"]["faults"] > 0 and rows["greedy"]["faults"] == 0
    assert rows["slow"]["mean_latency_ms"] > rows["greedy"]["mean_latency_ms"]
    assert {k: v for k, v in exported.items() if k not in ("event", "format", "state")} == data
    assert exported["state"] == "finished" and exported["format"] == "ladder"
    for row in data["bots"]:
        assert f"{row['mu']:.2f} ± {row['sigma']:.2f}" in page
    assert "By partnership" in page and matches[0].match_id in page
    db.close()


def test_a_bot_that_never_takes_its_seat_leaves_the_lobby(tmp_path: Path) -> None:
    db = open_store(tmp_path / "records" / "competition.sqlite3")
    keys = {name: db.add_bot(name, "me") for name in ("r1", "r2", "r3", "ghost")}
    created = arena(tmp_path, "events", "create", "cup", "--bots", "r1,r2,r3,ghost",
                    "--deals", "1", "--no-duplicate", "--connect-timeout", "2",
                    "--decision-ms", "200", "--grace-ms", "200", "--bank-ms", "1000")  # fmt: skip
    assert created.returncode == 0, created.stderr
    serve = start_serve(tmp_path)
    bots = []
    try:
        ghost = join(serve.target, keys["ghost"])  # joins, then ignores every offer
        assert next(ghost).welcome.bot == "ghost"
        for name in ("r1", "r2", "r3"):
            log = tmp_path / f"{name}.log"
            bots.append(start_bot(serve.target, BOTS["rand"], keys[name], name, log))
        offer = next(ghost)
        assert offer.offer.seat_token and offer.offer.event == "cup"
        with pytest.raises(StopIteration):
            next(ghost)  # the match was played without it; the server closed its stream
        states = [m.state for m in db.matches("cup")]
        assert states.count("finished") == 1 and states.count("pending") == 2
        time.sleep(1)  # nothing more starts without the ghost
        assert [m.state for m in db.matches("cup")].count("pending") == 2
        # the standings over gRPC: organiser (or spectator) only
        stub = pb_grpc.CompetitionStub(grpc.insecure_channel(serve.target))
        reply = stub.Standings(pb.StandingsRequest(event="cup"), metadata=bearer(serve.token))
        assert reply.state == "running" and json.loads(reply.standings_json)["finished"] == 1
        for metadata in ((), (("authorization", "Bearer " + keys["r1"]),)):
            with pytest.raises(grpc.RpcError) as caught:
                stub.Standings(pb.StandingsRequest(event="cup"), metadata=metadata)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED  # a bot key is no token
        with pytest.raises(grpc.RpcError) as caught:
            stub.Standings(pb.StandingsRequest(event="nope"), metadata=bearer(serve.token))
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        for bot in bots:
            bot.kill()
            bot.wait()
        log = serve.stop()
    assert "lobby_no_show" in log
    db.close()


def test_a_clean_stop_puts_the_running_matches_back_in_the_queue(tmp_path: Path) -> None:
    db = open_store(tmp_path / "records" / "competition.sqlite3")
    keys = {name: db.add_bot(name, "me") for name in ("r1", "r2", "r3", "r4")}
    created = arena(tmp_path, "events", "create", "cup", "--bots", "r1,r2,r3,r4",
                    "--deals", "6", "--decision-ms", "300")  # fmt: skip
    assert created.returncode == 0, created.stderr
    serve = start_serve(tmp_path)
    bots = []
    try:
        for name, key in keys.items():
            bots.append(start_bot(serve.target, BOTS["rand"], key, name, tmp_path / f"{name}.log"))
        wait_for(lambda: "running" in [m.state for m in db.matches("cup")], 60, "a match")
        serve.stop()  # SIGTERM, as Ctrl-C: the running matches are cancelled
        port = int(serve.target.rsplit(":", 1)[1])
        serve = start_serve(tmp_path, port=port)
        time.sleep(1)
    finally:
        for bot in bots:
            bot.kill()
            bot.wait()
        serve.stop()
    states = [m.state for m in db.matches("cup")]
    assert "cancelled" not in states and states.count("pending") >= 5, states  # replayed later
    assert all(m.result is None or "error" not in m.result for m in db.matches("cup"))
    db.close()
