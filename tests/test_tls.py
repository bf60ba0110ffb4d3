"""TLS end to end: ``arena serve --tls-cert --tls-key --tls-client-ca`` (mutual TLS) with
certificates made in the test, the organiser's ``arena matches`` and the sample bots
(Python, and Node when installed) all connecting with their ``--tls-*`` options.

Without the right certificates nothing gets through: a plaintext client and a client
without a certificate are both turned away at the handshake.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from servekit import ROOT, Certificates, Serve, bearer, make_certificates, start_serve

from arena.cli.main import main
from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
NODE_BOT = ROOT / "sample_bots" / "node"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Serve, Certificates]]:
    folder = tmp_path_factory.mktemp("tls")
    certs = make_certificates(folder / "pki")
    server = start_serve(
        folder,
        *("--tls-cert", str(certs.server_cert), "--tls-key", str(certs.server_key)),
        *("--tls-client-ca", str(certs.ca)),
    )
    try:
        yield server, certs
    finally:
        server.stop()


def client_options(certs: Certificates) -> list[str]:
    return ["--tls-ca", str(certs.ca), "--tls-cert", str(certs.client_cert),
            "--tls-key", str(certs.client_key)]  # fmt: skip


def organiser(server: Serve, certs: Certificates, *args: str) -> str:
    """``arena matches VERB ...`` over mutual TLS (the command's code, in this process:
    a fresh interpreter per call costs seconds on a loaded machine); its standard output."""
    argv = ["matches", *args, "--server", server.target,
            "--organiser-token-file", str(server.token_file), *client_options(certs)]  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    return out.getvalue()


def tls_channel(server: Serve, certs: Certificates) -> grpc.Channel:
    credentials = grpc.ssl_channel_credentials(
        certs.ca.read_bytes(), certs.client_key.read_bytes(), certs.client_cert.read_bytes()
    )
    return grpc.secure_channel(server.target, credentials)


@dataclass
class Played:
    match_id: str
    node: bool  # the Node bot played seats 0 and 2
    info: pb.MatchInfo
    listed: list[str]
    record: Path
    watched: list[str]
    logs: Path  # bot{seat}.log: each bot's standard error


@pytest.fixture(scope="module")
def played(tls: tuple[Serve, Certificates], tmp_path_factory: pytest.TempPathFactory) -> Played:
    """One one-deal match over mutual TLS: the organiser's ``arena matches`` creates,
    watches and fetches it; the Python sample bots (and the Node one, if installed) play."""
    server, certs = tls
    folder = tmp_path_factory.mktemp("tls-match")
    created = json.loads(organiser(server, certs, "create", "--deals", "1", "--seed", "9",
                                   "--seat-names", "s0", "s1", "s2", "s3", "--json"))  # fmt: skip
    node = shutil.which("node")
    node_ready = node is not None and (NODE_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir()
    python = [sys.executable]
    seats = [[*python, str(ROOT / "sample_bots" / f"{n}_bot.py"), *client_options(certs)]
             for n in ("random", "greedy", "random", "greedy")]  # fmt: skip
    env = dict(os.environ)
    if node_ready:  # the Node bot takes its TLS files from the environment (ARENA_TLS_*)
        seats[0] = seats[2] = [str(node), str(NODE_BOT / "bot.js")]
        env.update(ARENA_TLS_CA=str(certs.ca), ARENA_TLS_CERT=str(certs.client_cert),
                   ARENA_TLS_KEY=str(certs.client_key))  # fmt: skip
    bots = []
    for seat, argv in enumerate(seats):
        log = (folder / f"bot{seat}.log").open("wb")
        bots.append(subprocess.Popen(
            [*argv, "--server", server.target, "--token", created["seat_tokens"][seat]],
            stdout=subprocess.DEVNULL, stderr=log, cwd=folder, env=env,
        ))  # fmt: skip
    for seat, bot in enumerate(bots):
        assert bot.wait(timeout=120) == 0, (folder / f"bot{seat}.log").read_text()
    match_id = str(created["match_id"])
    with tls_channel(server, certs) as channel:
        stub = pb_grpc.MatchesStub(channel)
        md = bearer(server.token)
        info = stub.Get(pb.GetMatchRequest(match_id=match_id), metadata=md, timeout=10)
        finished = pb.ListMatchesRequest(states=[pb.FINISHED])
        listed = [m.match_id for m in stub.List(finished, metadata=md, timeout=10).matches]
    record = folder / "record.jsonl"
    organiser(server, certs, "fetch", match_id, "-o", str(record))
    watched = organiser(server, certs, "watch", match_id).splitlines()
    return Played(match_id, node_ready, info, listed, record, watched, folder)


def test_python_bots_play_over_mutual_tls(played: Played) -> None:
    assert played.info.state == pb.FINISHED and played.info.result.reason == "deals_played"
    assert list(played.info.seat_names) == ["s0", "s1", "s2", "s3"]
    assert played.match_id in played.listed
    record = read_record(played.record)
    assert verify(record).ok and record.footer is not None and not record.footer.faults
    assert json.loads(played.watched[-1])["match_ended"]["result"]["reason"] == "deals_played"


def test_the_node_bot_plays_over_mutual_tls(played: Played) -> None:
    if not played.node:
        pytest.skip("node or sample_bots/node/node_modules (make setup) is missing")
    for seat in (0, 2):  # the Node bot's own words: it connected, played, saw the end
        log = (played.logs / f"bot{seat}.log").read_text()
        assert f"node_bot: seat {seat} in {played.match_id}" in log, log
        assert "match over (deals_played)" in log and "my faults 0" in log, log


def test_plaintext_and_certificateless_clients_are_turned_away(
    tls: tuple[Serve, Certificates],
) -> None:
    server, certs = tls
    request = pb.ListMatchesRequest()
    no_client_cert = grpc.ssl_channel_credentials(root_certificates=certs.ca.read_bytes())
    for channel in (
        grpc.insecure_channel(server.target),
        grpc.secure_channel(server.target, no_client_cert),
    ):
        with channel, pytest.raises(grpc.RpcError) as refused:
            pb_grpc.MatchesStub(channel).List(request, metadata=bearer(server.token), timeout=5)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
