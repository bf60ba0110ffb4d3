"""Who may see and do what (docs/security.md), attacked with real clients against a real
``arena serve`` on a loopback port.

One match is played by three fallback bots and a cheating bot (tests/hostile/cheat.py)
that, mid-deal, tries every RPC a seat can reach. While it holds the deal, the test looks
at the match as a spectator (2-trick delay), as the organiser, with a wrong token and with
none. Another server runs ``--open``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servekit import ROOT, Serve, bearer, start_serve

from arena.cli.main import main
from arena.game import CardDealt, DealStarted
from arena.records import parse_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

SPECTATOR_TOKEN = "a-spectator-token-for-the-test"
CHEAT = ROOT / "tests" / "hostile" / "cheat.py"
FALLBACK = ROOT / "bench" / "bots" / "fallback_bot.py"


def rpc_code(call: Any) -> str:
    """The status a call ends with ("OK", or the code's name), reading a stream to its end."""
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)
    except grpc.RpcError as exc:
        return exc.code().name  # type: ignore[no-any-return]
    return "OK"


def fetch(stub: pb_grpc.MatchesStub, match_id: str, token: str, full: bool = False) -> list[str]:
    request = pb.FetchRecordRequest(match_id=match_id, full=full)
    return [c.line for c in stub.FetchRecord(request, metadata=bearer(token), timeout=10)]


@dataclass
class Played:
    """Everything the module's one match showed, gathered while it ran."""

    server: Serve
    match_id: str = ""
    reports: list[dict[str, Any]] = field(default_factory=list)
    spectator_copy: list[str] = field(default_factory=list)  # mid-deal, 2-trick delay
    organiser_copy: list[str] = field(default_factory=list)  # mid-deal, no `full`
    full_copy: list[str] = field(default_factory=list)  # mid-deal, `full`
    codes: dict[str, str] = field(default_factory=dict)  # attempts made by the test
    spectator_watch: list[pb.Event] = field(default_factory=list)
    organiser_watch: list[pb.Event] = field(default_factory=list)
    finished_copy: list[str] = field(default_factory=list)  # the spectator's, at the end


def _watch(stub: pb_grpc.MatchesStub, match_id: str, token: str, into: list[pb.Event]) -> None:
    into.extend(stub.Watch(pb.WatchRequest(match_id=match_id), metadata=bearer(token), timeout=90))


def _attempts(channel: grpc.Channel, match_id: str, organiser: str) -> dict[str, str]:
    """Every refused call the test itself makes while the match runs (and health checks,
    which anyone may make, whatever metadata they send)."""
    stub = pb_grpc.MatchesStub(channel)
    calls: dict[str, Any] = {
        "Create": (stub.Create, pb.CreateMatchRequest()),
        "Cancel": (stub.Cancel, pb.CancelMatchRequest(match_id=match_id)),
        "List": (stub.List, pb.ListMatchesRequest()),
        "Get": (stub.Get, pb.GetMatchRequest(match_id=match_id)),
        "FetchRecord": (stub.FetchRecord, pb.FetchRecordRequest(match_id=match_id)),
        "Watch": (stub.Watch, pb.WatchRequest(match_id=match_id)),
    }
    credentials = {
        "anonymous": (),
        "wrong organiser token": bearer(organiser[:-2] + "xx"),
        "spectator": bearer(SPECTATOR_TOKEN),
        "malformed": (("authorization", organiser),),  # no "Bearer"
    }
    codes = {}
    for who, metadata in credentials.items():
        for name, (rpc, request) in calls.items():
            if who == "spectator" and name in ("List", "Get", "FetchRecord", "Watch"):
                continue  # allowed (checked elsewhere)
            codes[f"{name} as {who}"] = rpc_code(
                lambda rpc=rpc, request=request, md=metadata: rpc(request, metadata=md, timeout=5)
            )
    health = health_pb2_grpc.HealthStub(channel)
    for who, metadata in credentials.items():  # health checking is open, whatever is sent
        answer = health.Check(health_pb2.HealthCheckRequest(), metadata=metadata, timeout=5)
        codes[f"Health as {who}"] = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
    codes["FetchRecord full as spectator"] = rpc_code(
        lambda: stub.FetchRecord(
            pb.FetchRecordRequest(match_id=match_id, full=True),
            metadata=bearer(SPECTATOR_TOKEN),
            timeout=5,
        )
    )
    return codes


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    folder = tmp_path_factory.mktemp("security")
    (folder / "spectator.token").write_text(SPECTATOR_TOKEN + "\n")
    server = start_serve(folder, "--spectator-token-file", str(folder / "spectator.token"),
                         "--spectator-delay", "2 tricks")  # fmt: skip
    run = Played(server)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MatchesStub(channel)
            token = server.token
            slow = pb.TimeControl(decision_ms=30_000, bank_ms=30_000)
            created = stub.Create(
                pb.CreateMatchRequest(seed=3, deals=1, time_control=slow),
                metadata=bearer(token),
                timeout=10,
            )
            run.match_id = created.match_id
            watchers = [
                threading.Thread(target=_watch, args=(stub, run.match_id, t, into), daemon=True)
                for t, into in (
                    (SPECTATOR_TOKEN, run.spectator_watch),
                    (token, run.organiser_watch),
                )
            ]
            for w in watchers:
                w.start()
            report, go = folder / "cheat.jsonl", folder / "go"
            env = {**os.environ, "ARENA_SERVER": server.target,
                   "ARENA_TOKEN": created.seat_tokens[0], "HOSTILE_REPORT": str(report),
                   "CHEAT_GO": str(go)}  # fmt: skip
            procs.append(subprocess.Popen([sys.executable, str(CHEAT)], env=env))
            fallback = subprocess.Popen(
                [sys.executable, str(FALLBACK), "--server", server.target, "--tokens-file", "-"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            )  # fmt: skip
            procs.append(fallback)
            assert fallback.stdin is not None
            fallback.stdin.write(("\n".join(created.seat_tokens[1:]) + "\n").encode())
            fallback.stdin.close()
            deadline = time.monotonic() + 60
            while not (report.exists() and b'"paused"' in report.read_bytes()):
                assert time.monotonic() < deadline, server.log.read_text()
                time.sleep(0.05)
            # The cheater holds the deal at its first PLAY request: look at the match now.
            run.spectator_copy = fetch(stub, run.match_id, SPECTATOR_TOKEN)
            run.organiser_copy = fetch(stub, run.match_id, token)
            run.full_copy = fetch(stub, run.match_id, token, full=True)
            run.codes = _attempts(channel, run.match_id, token)
            info = stub.Get(
                pb.GetMatchRequest(match_id=run.match_id), metadata=bearer(SPECTATOR_TOKEN)
            )
            run.codes["Get as spectator (state)"] = pb.MatchState.Name(info.state)
            go.touch()
            for proc in procs:
                assert proc.wait(timeout=60) == 0
            for w in watchers:
                w.join(timeout=30)
            run.finished_copy = fetch(stub, run.match_id, SPECTATOR_TOKEN)
        run.reports = [json.loads(line) for line in report.read_text().splitlines()]
        yield run
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        server.stop()


def _types(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        data = json.loads(line)
        out.append(data["event"]["type"] if data["type"] == "event" else data["type"])
    return out


@pytest.mark.slow
def test_a_cheating_seat_gets_nothing_from_any_rpc(played: Played) -> None:
    attacks = [r for r in played.reports if "attack" in r]
    assert len(attacks) == 15, played.reports
    for attack in attacks:
        expected = "PERMISSION_DENIED" if "seat token" in attack["attack"] else "UNAUTHENTICATED"
        assert attack["code"] == expected, attack
        assert attack["received"] == [], attack  # not one line, event or match
    welcome = next(r for r in played.reports if "welcome_seat" in r)
    assert welcome == {"welcome_seat": 0, "match_id": played.match_id}
    paused = next(r for r in played.reports if "paused" in r)
    assert paused["deal"] == 1  # the attacks came mid-deal …
    assert _types(played.full_copy)[-1] != "deal_ended"  # … and the deal was still on
    assert played.reports[-1] == {"match_end": "deals_played"}


@pytest.mark.slow
def test_the_record_of_a_running_match_hides_every_hand(played: Played) -> None:
    full = parse_record("\n".join(played.full_copy).encode() + b"\n")
    assert full.header is not None and full.header.seed == 3
    events = full.events()  # the organiser's `full` copy has every hand (after redeals)
    last = max(i for i, e in enumerate(events) if isinstance(e, DealStarted))
    dealt = [e for e in events[last:] if isinstance(e, CardDealt)]
    assert sorted(sum(e.seat == seat for e in dealt) for seat in range(4)) == [25] * 4
    assert "deck" in _types(played.full_copy)
    for copy in (played.organiser_copy, played.spectator_copy):
        header = json.loads(copy[0])
        assert header["type"] == "header" and header["view"] == "spectator"
        assert header["seed"] is None and header["stacked"] == {}  # the seed deals every hand
        kinds = _types(copy)
        assert "deck" not in kinds and "card_dealt" not in kinds and "answer" not in kinds
        for line in copy[1:]:
            event = json.loads(line)["event"]
            if event["type"] in ("kitty_taken", "kitty_buried"):
                assert event["cards"] == []
    public = _types(played.organiser_copy)
    assert {"deal_started", "redealt", "trump_declared"} <= set(public)
    # Every public line is the full record's line of the same number, unchanged.
    by_n = {json.loads(line)["n"]: line for line in played.full_copy}
    for line in played.organiser_copy[1:]:
        data = json.loads(line)
        if data["event"]["type"] not in ("kitty_taken", "kitty_buried"):
            assert by_n[data["n"]] == line


@pytest.mark.slow
def test_spectators_are_kept_behind_and_lose_nothing(played: Played) -> None:
    # Mid-trick 1, two tricks behind: the spectator sees the header and no event yet.
    assert _types(played.spectator_copy) == ["header"]
    assert len(played.organiser_copy) > 5
    # Watch: the same public events as the organiser's live feed, once the match ended.
    assert played.spectator_watch and [e.index for e in played.spectator_watch] == [
        e.index for e in played.organiser_watch
    ]
    kinds = {e.WhichOneof("kind") for e in played.spectator_watch}
    assert "card_dealt" not in kinds and "match_ended" in kinds
    # A finished match's record is whole, for spectators too, and verifies.
    finished = parse_record("\n".join(played.finished_copy).encode() + b"\n")
    assert finished.complete and verify(finished).ok


@pytest.mark.slow
def test_strangers_and_wrong_tokens_are_refused(played: Played) -> None:
    codes = played.codes
    for name in ("Create", "Cancel", "List", "Get", "FetchRecord", "Watch"):
        assert codes[f"{name} as anonymous"] == "UNAUTHENTICATED", codes
        assert codes[f"{name} as wrong organiser token"] == "UNAUTHENTICATED", codes
        assert codes[f"{name} as malformed"] == "UNAUTHENTICATED", codes
    assert codes["Create as spectator"] == "PERMISSION_DENIED"
    assert codes["Cancel as spectator"] == "PERMISSION_DENIED"
    assert codes["FetchRecord full as spectator"] == "PERMISSION_DENIED"
    assert codes["Get as spectator (state)"] == "RUNNING"  # the match was untouched
    assert {codes[f"Health as {who}"] for who in ("anonymous", "malformed")} == {"SERVING"}


@pytest.mark.slow
def test_the_organiser_token_is_generated_private_and_named(played: Played) -> None:
    token_file = played.server.token_file
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert len(played.server.token) >= 40
    log = played.server.log.read_text()
    assert f"organiser token: generated in {token_file} (mode 0600)" in log
    assert played.server.token not in log  # printed: where, never what
    assert "WARNING" not in log


@pytest.mark.slow
def test_open_restores_anonymous_access_with_a_warning(tmp_path: Path) -> None:
    known = "an-organiser-token-from-an-earlier-start"
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "organiser.token").write_text(known + "\n")
    token_file = str(tmp_path / "kept" / "organiser.token")
    server = start_serve(tmp_path, "--open", "--organiser-token-file", token_file)
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MatchesStub(channel)
            created = stub.Create(pb.CreateMatchRequest(seed=1), timeout=10)
            listed = stub.List(pb.ListMatchesRequest(), timeout=10).matches
            assert [m.match_id for m in listed] == [created.match_id]
            assert stub.Get(pb.GetMatchRequest(match_id=created.match_id), timeout=10).state == (
                pb.WAITING
            )
            # a seat token is still only a seat token
            seat = bearer(created.seat_tokens[0])
            assert rpc_code(lambda: stub.List(pb.ListMatchesRequest(), metadata=seat)) == (
                "PERMISSION_DENIED"
            )
            stub.Cancel(pb.CancelMatchRequest(match_id=created.match_id), timeout=10)
            # an organiser token that exists is accepted (arena matches sends it if found)
            stub.List(pb.ListMatchesRequest(), metadata=bearer(known), timeout=10)
    finally:
        log = server.stop()
    assert "WARNING: --open: anyone who can reach" in log
    assert not server.token_file.exists()


def _arena(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The ``arena`` command in this process (its parser, its code, a real server)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_arena_matches_says_clearly_what_is_wrong(
    played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    target = played.server.target
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-token\n")
    code, _, err = _arena(
        capsys, "matches", "list", "--server", target, "--organiser-token-file", str(wrong)
    )
    assert code == 1 and err.startswith("arena matches list: UNAUTHENTICATED: unknown token")
    # No token anywhere (an empty config folder): the server says which role it needs.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARENA_ORGANISER_TOKEN", raising=False)
    code, _, err = _arena(capsys, "matches", "get", played.match_id, "--server", target)
    assert code == 1 and "needs the organiser or spectator role" in err
    # The organiser's token from the environment: the match, finished.
    monkeypatch.setenv("ARENA_ORGANISER_TOKEN", played.server.token)
    code, out, err = _arena(capsys, "matches", "get", played.match_id, "--server", target)
    assert code == 0 and f"{played.match_id}  finished" in out, err
    # Create one, see it waiting, cancel it.
    code, out, _ = _arena(capsys, "matches", "create", "--server", target, "--seed", "4")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("match m-") and len(lines) == 5
    match_id = lines[0].split()[1]
    code, out, _ = _arena(capsys, "matches", "list", "--state", "waiting", "--server", target)
    assert code == 0 and f"{match_id}  waiting" in out
    code, out, _ = _arena(capsys, "matches", "cancel", match_id, "--server", target, "--json")
    assert code == 0 and json.loads(out)["match_id"] == match_id
    refused = played.server.log.read_text()
    assert '"event": "access_refused"' in refused and "Matches/Create" in refused


def test_arena_serve_refuses_half_a_tls_setup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listen = ("--listen", "127.0.0.1:0", "--records", str(tmp_path))
    code, _, err = _arena(capsys, "serve", "--tls-cert", str(tmp_path / "cert.pem"), *listen)
    assert code == 2 and "TLS needs both --tls-cert and --tls-key" in err
    (tmp_path / "k.pem").write_text("not a key")
    pem = str(tmp_path / "k.pem")
    code, _, err = _arena(capsys, "serve", "--tls-cert", pem, "--tls-key", pem, *listen)
    assert code == 2 and "is not a PEM file" in err
    with pytest.raises(SystemExit):
        main(["serve", "--spectator-delay", "soon"])
    assert "give a number of tricks or deals" in capsys.readouterr().err
