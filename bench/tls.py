"""What TLS costs a match: referee time per decision over plaintext and over TLS.

One match of ``--deals`` deals on an embedded arena server (as ``arena serve`` runs it),
four ``bench/bots/fallback_bot.py`` processes answering at once with their fallbacks; the
referee's own latency per decision (request sent → answer received) is the server's
overhead plus the network. The same match is played over plaintext and over TLS
(a throw-away CA and server certificate made with ``openssl``; ECDSA P-256), in
alternating rounds, and the samples of each are pooled, so that load from elsewhere on
the machine falls on both alike. TLS adds a handshake per connection (once per match per
bot) and record encryption on every message.

    .venv/bin/python bench/tls.py            # ~1 minute
    .venv/bin/python bench/tls.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import trio
from remote_kit import BOT, LatencyRecorder, Spawner  # bench/ is on sys.path

from arena.cli.logs import configure_logging
from arena.referee import TimeControl
from arena.rules import RuleSet
from arena.server.app import open_arena_server
from arena.server.host import MatchSpec
from arena.server.tls import ServerTls

SEED = 21


def make_certificates(folder: Path) -> tuple[Path, ServerTls]:
    """A CA and a server certificate for 127.0.0.1 (what tests/servekit.py does)."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
            "-subj", "/CN=bench CA", "-addext", "basicConstraints=critical,CA:TRUE")  # fmt: skip
    (folder / "server.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=bench")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "1",
            "-extfile", "server.ext")  # fmt: skip
    tls = ServerTls.from_files(str(folder / "server.pem"), str(folder / "server.key"))
    return folder / "ca.pem", tls


async def play(
    deals: int, tls: ServerTls | None, ca: Path, spawner: Spawner
) -> tuple[list[float], int]:
    """One match; the referee's latencies (s) and the faults plus late answers."""
    recorder = LatencyRecorder()
    rules = RuleSet.from_mapping({"deals": deals})
    async with open_arena_server(recorder_factory=lambda _h: (recorder, ""), tls=tls) as server:
        hosted = server.host.create(MatchSpec(rules=rules, seed=SEED, time_control=TimeControl()))
        if tls is not None:
            os.environ["ARENA_TLS_CA"] = str(ca)  # the bots' environment (Spawner copies it)
        argv = [sys.executable, str(BOT), "--server", server.target]
        procs = [spawner.spawn([*argv, f"--token={t}"]) for t in hosted.tokens if t is not None]
        os.environ.pop("ARENA_TLS_CA", None)
        await hosted.done.wait()
        reports = [json.loads(out) for out in await spawner.wait_all(procs)]
    referee = hosted.referee
    assert referee is not None and hosted.state.value == "finished", hosted.error
    assert not any(r["errors"] for r in reports), reports
    latencies = [x for seat in referee.latencies for x in seat]
    return latencies, len(referee.faults) + referee.late_answers


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def main(deals: int, rounds: int) -> None:
    samples: dict[str, list[float]] = {"plaintext": [], "TLS": []}
    faults = 0
    with tempfile.TemporaryDirectory() as tmp, Spawner() as spawner:
        ca, tls = make_certificates(Path(tmp))
        for r in range(rounds):
            for name in ("plaintext", "TLS") if r % 2 == 0 else ("TLS", "plaintext"):
                lat, bad = await play(deals, tls if name == "TLS" else None, ca, spawner)
                samples[name] += lat
                faults += bad
    load = os.getloadavg()[0]
    print(f"one match, seed {SEED}, {deals} deals, {rounds} rounds of each (load {load:.2f})")
    print(f"  {'path':<12}{'decisions':>10}{'p50 µs':>9}{'p99 µs':>9}{'p50 ×plain':>12}")
    base = statistics.median(samples["plaintext"])
    for name, lat in samples.items():
        p50 = statistics.median(lat)
        print(f"  {name:<12}{len(lat):>10}{p50 * 1e6:>9.0f}{pct(lat, 0.99) * 1e6:>9.0f}"
              f"{p50 / base:>11.2f}×")  # fmt: skip
    print(f"  faults + late answers: {faults}")


def cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="1 deal, 2 rounds")
    args = parser.parse_args()
    if shutil.which("openssl") is None:
        print("bench/tls.py: needs the openssl command (Debian package openssl)")
        return 0
    configure_logging("warning")
    deals, rounds = (1, 2) if args.quick else (args.deals, args.rounds)
    trio.run(main, deals, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
