"""A worker joins a TLS front from "another host" (``arena serve --join FRONT --join-ca
CA --tls-cert ... --listen 127.0.0.2:0``), docs/workers.md and docs/security.md.

Certificates are made here with ``openssl`` (a throw-away CA; the front's for
127.0.0.1, the worker's for 127.0.0.2, both also client certificates; a bot's client
certificate; a stranger CA). The front runs mutual TLS (``--tls-client-ca``), and so
does the worker: the worker presents its certificate when it joins, the front presents
its own when it calls the worker. Real processes: the front, the joined worker, sample
bots with client certificates redirected to the worker, which hosts their match to its
end (the record verifies in the worker's folder). Attacks, each stopped with one line:
a worker without TLS, one trusting another CA, one with a certificate of another CA, one
whose certificate does not name its address (the front cannot call it back), and
``--join-ca`` without a certificate of its own (a usage error).
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from servekit import ROOT, Serve, bearer, make_ca, make_certificates, sign_certificate, start_serve
from test_workers_join import join_argv, stop_all, wait_joined

from arena.cli.main import main
from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow
BOTH = "extendedKeyUsage=serverAuth,clientAuth"


def tls_join(front: Serve, folder: Path, name: str, *tls: str) -> list[str]:
    """``arena serve --join`` on 127.0.0.2 with the TLS options ``tls``."""
    return [*join_argv(front, folder / name, front.token_file), *tls]


def serve_here(argv: list[str]) -> tuple[int, str]:
    """``arena ARGV`` run by its own ``main`` in this process: exit status, stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 2
    return status, err.getvalue()


def test_a_worker_joins_a_tls_front_and_hosts_a_match(tmp_path: Path) -> None:
    pki = tmp_path / "pki"
    certs = make_certificates(pki)  # ca.pem, and client.pem for the bots and the organiser
    front_pem, front_key = sign_certificate(pki, "front", f"subjectAltName=IP:127.0.0.1\n{BOTH}")
    worker_pem, worker_key = sign_certificate(pki, "worker", f"subjectAltName=IP:127.0.0.2\n{BOTH}")
    misnamed = sign_certificate(pki, "misnamed", f"subjectAltName=IP:127.0.0.9\n{BOTH}")
    stranger_ca = make_ca(pki, "stranger")
    foreign = sign_certificate(pki, "foreign", f"subjectAltName=IP:127.0.0.2\n{BOTH}", "stranger")
    ca = str(certs.ca)
    front = start_serve(tmp_path, "--workers", "2", "--tls-cert", str(front_pem),
                        "--tls-key", str(front_key), "--tls-client-ca", ca)  # fmt: skip

    def own(pem: Path, key: Path) -> tuple[str, ...]:
        return ("--tls-cert", str(pem), "--tls-key", str(key), "--tls-client-ca", ca)

    refused = {  # why: (folder, TLS options)
        "plaintext": ("a", ()),
        "other CA trusted": ("b", ("--join-ca", str(stranger_ca), *own(worker_pem, worker_key))),
        "certificate of another CA": ("c", ("--join-ca", ca, *own(*foreign))),
        "certificate for another name": ("d", ("--join-ca", ca, *own(*misnamed))),
        "no certificate": ("e", ("--join-ca", ca)),
    }
    good = tls_join(front, tmp_path, "remote", "--join-ca", ca, *own(worker_pem, worker_key))
    remote = None
    bots: list[subprocess.Popen[bytes]] = []
    credentials = grpc.ssl_channel_credentials(
        certs.ca.read_bytes(), certs.client_key.read_bytes(), certs.client_cert.read_bytes()
    )
    channel = grpc.secure_channel(front.target, credentials)
    try:
        remote = subprocess.Popen(good, stdout=(tmp_path / "remote.log").open("wb"),
                                  stderr=subprocess.STDOUT, cwd=ROOT)  # fmt: skip
        for why, (name, options) in refused.items():
            # the command's own main, in this process (each refusal takes well under a
            # second; a new Python per attempt cost ten on a loaded machine)
            status, err = serve_here(tls_join(front, tmp_path, name, *options)[3:])
            last = err.strip().splitlines()[-1]  # one line says why
            if why == "no certificate":
                assert status == 2 and "--tls-cert" in last, (why, err)
                continue
            assert status == 1, (why, err)
            assert last.startswith(f"arena serve: the front at {front.target} did not take"), (
                why,
                err,
            )
            if why == "certificate for another name":  # joined, but the front cannot call it
                assert "FAILED_PRECONDITION: the front cannot call this worker" in last, last
            else:  # refused at the handshake (or no answer): the line names the options
                assert "--join-ca" in last, (why, last)
        address = wait_joined(front, remote, tmp_path / "remote.log")
        assert front.log.read_text().count("joined from another host") == 1  # only the good one

        stub = pb_grpc.MatchesStub(channel)
        token = front.token
        tc = pb.TimeControl(grace_ms=30_000)
        ask = [pb.CreateMatchRequest(seed=i, deals=1, time_control=tc) for i in range(3)]
        created = [stub.Create(a, metadata=bearer(token), timeout=30) for a in ask]
        there = next(c for c in created if c.seat_address == address)
        tls_options = ["--tls-ca", ca, "--tls-cert", str(certs.client_cert),
                       "--tls-key", str(certs.client_key)]  # fmt: skip
        for seat, seat_token in enumerate(there.seat_tokens):
            bots.append(subprocess.Popen(
                [sys.executable, str(ROOT / "sample_bots" / "random_bot.py"), "--server",
                 front.target, "--token", seat_token, "--seed", str(seat), *tls_options],
                stdout=subprocess.DEVNULL, stderr=(tmp_path / f"bot{seat}.log").open("wb"),
            ))  # fmt: skip
        for seat, bot in enumerate(bots):
            assert bot.wait(timeout=120) == 0, (tmp_path / f"bot{seat}.log").read_text()
        info = stub.Get(pb.GetMatchRequest(match_id=there.match_id), metadata=bearer(token))
        assert info.state == pb.FINISHED  # forwarded to the joined worker, over TLS
        path = tmp_path / "remote" / f"{there.match_id}.jsonl"
        deadline = time.monotonic() + 10
        while not read_record(path).complete and time.monotonic() < deadline:
            time.sleep(0.1)
        assert verify(read_record(path)).ok
        fetched = list(stub.FetchRecord(pb.FetchRecordRequest(match_id=there.match_id),
                                        metadata=bearer(token)))  # fmt: skip
        assert [c.line for c in fetched] == path.read_text().splitlines()
    finally:
        stop_all([*bots, remote], channel, front)
