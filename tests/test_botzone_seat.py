"""Botzone bots play whole matches through ``botzone:`` seats (real ``arena match``
processes, real gRPC on 127.0.0.1 port 0, real bot subprocesses).

The bots in ``tests/botzone/`` were written here from the protocol: one per process
mode, one with ``data``/``globaldata``, one with the simplified interaction, each
rebuilding its hand from the history and failing loudly on any inconsistent id — they
play against built-in bots; and a hostile one per Botzone error. All matches run at
once (``--rules botzone``: one deal each); then every record must verify (as ``arena
replay --verify`` does), the well-behaved bots must have no fault, and each hostile bot
exactly one: the arena fault that fits, with Botzone's name in its reason.

Bots run with ``python -S`` (no site-packages: a default-mode bot starts once per turn,
and a bare interpreter starts several times faster); the clocks are generous except in
the match with the hostile ``tle`` bot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.records import read_record, verify

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "botzone"
ARENA = [sys.executable, "-m", "arena.cli.main"]


def bz(script: str, *args: str, options: str = "") -> str:
    argv = " ".join([sys.executable, "-S", str(BOTS / script), *args])
    return f"botzone[{options}]:{argv}" if options else f"botzone:{argv}"


@dataclass
class Case:
    name: str
    bots: list[str]  # by seat
    faults: dict[int, tuple[str, str]]  # seat -> (fault kind, Botzone name in the reason)
    clock: tuple[str, ...] = ("--time-limit", "5000", "--time-bank", "60000")
    seed: int = 7
    declarer: int | None = None  # the seat whose Botzone bid wins (then it buries)


def cases(tmp: Path) -> list[Case]:
    greedy, rand = "builtin:greedy", "builtin:random"
    data = f"globaldata={tmp / 'globaldata.json'}"
    return [
        Case(
            "modes",
            [bz("bz_default.py"), rand, bz("bz_keep.py"), rand],
            {},
            seed=4,  # the keep-running bot declares and buries
            declarer=2,
        ),
        Case(
            "data",
            [bz("bz_data.py", options=data), rand, bz("bz_simple.py", options="simple"), rand],
            {},
            seed=3,  # the default-mode bot declares and buries
            declarer=0,
        ),
        Case(  # four hostile seats: none of them hurts another
            "hostile",
            [
                bz("bz_hostile.py", "nj"),
                bz("bz_hostile.py", "badid"),
                bz("bz_hostile.py", "nr"),
                bz("bz_hostile.py", "notyours"),
            ],
            {
                0: ("malformed", "botzone NJ:"),
                1: ("malformed", "botzone INVALID_POKERID:"),
                2: ("malformed", "botzone NR:"),
                3: ("illegal_action", "botzone NOT_YOUR_POKER:"),
            },
        ),
        Case(
            "re_tle",
            [bz("bz_hostile.py", "re"), greedy, bz("bz_hostile.py", "tle"), greedy],
            {0: ("malformed", "botzone RE:"), 2: ("timeout", "botzone TLE:")},
            ("--time-limit", "6000", "--time-bank", "500"),
        ),
    ]


@dataclass
class Played:
    case: Case
    record: Path
    output: str
    status: int


def play(case: Case, tmp: Path) -> Played:
    record = tmp / f"{case.name}.jsonl"
    argv = [
        *ARENA,
        "match",
        "--rules",
        "botzone",
        "--seed",
        str(case.seed),
        "--record",
        str(record),
        "--connect-timeout",
        "60",
        *case.clock,
    ]
    for bot in case.bots:
        argv += ["--bot", bot]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, cwd=ROOT)
    return Played(case, record, done.stdout + done.stderr, done.returncode)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Played]:
    tmp = tmp_path_factory.mktemp("botzone")
    (tmp / "globaldata.json").write_text(json.dumps({"games": 5}))
    todo = cases(tmp)
    with ThreadPoolExecutor(len(todo)) as pool:
        results = list(pool.map(lambda c: play(c, tmp), todo))
    out = {p.case.name: p for p in results}
    out["_tmp"] = Played(todo[0], tmp, "", 0)
    return out


def seat_logs(p: Played) -> str:
    return "\n".join(
        f.read_text(errors="replace")[-2000:] for f in sorted(p.record.parent.glob("*.seat*.log"))
    )


@pytest.mark.parametrize("name", ["modes", "data", "hostile", "re_tle"])
def test_match_completes_and_its_record_verifies(played: dict[str, Played], name: str) -> None:
    p = played[name]
    assert p.status == 0, p.output + seat_logs(p)
    record = read_record(p.record)
    verified = verify(record)  # what `arena replay --verify` runs
    assert verified.ok, verified
    assert record.complete and record.result is not None and record.result.deals == 1
    if p.case.declarer is not None:  # a Botzone bid went through arena's bid windows
        deal = record.deals()[-1]
        assert deal.trump is not None and deal.trump.dealer == p.case.declarer
        assert deal.trump.source == "bid" and deal.burial is not None


@pytest.mark.parametrize("name", ["modes", "data", "hostile", "re_tle"])
def test_faults_are_only_the_hostile_bots_and_carry_botzone_names(
    played: dict[str, Played], name: str
) -> None:
    p = played[name]
    faults = [a for a in read_record(p.record).answers() if a.verdict == "fault"]
    got = {(a.seat, a.fault_kind, (a.fault_reason or "").split(":")[0] + ":") for a in faults}
    want = {(seat, kind, reason) for seat, (kind, reason) in p.case.faults.items()}
    assert got == want and len(faults) == len(want), (faults, p.output, seat_logs(p))


def test_globaldata_persists_in_the_named_file(played: dict[str, Played]) -> None:
    # the bot counts the games it started: the file said 5 before the match's one deal
    stats = json.loads((played["_tmp"].record / "globaldata.json").read_text())
    assert stats == {"games": 6}


def test_debug_output_is_kept_in_the_seat_log(played: dict[str, Played]) -> None:
    logs = seat_logs(played["data"])
    assert "botzone debug: turn " in logs


def test_the_standalone_seat_joins_a_match_an_organiser_created(tmp_path: Path) -> None:
    """``arena botzone-seat --server --token`` in a match of an ``arena serve``."""
    import socket
    import time

    import grpc

    from arena.botzone.preset import PRESETS
    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        target = f"127.0.0.1:{s.getsockname()[1]}"
    serve = subprocess.Popen(
        [*ARENA, "serve", "--listen", target, "--records", str(tmp_path), "--open",
         "--workers", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        with grpc.insecure_channel(target) as channel:
            grpc.channel_ready_future(channel).result(timeout=60)
            rules = {k: json.dumps(v) for k, v in PRESETS["botzone"].items() if k != "deals"}
            create = pb.CreateMatchRequest(rules=rules, seed=4, deals=1)
            created = pb_grpc.MatchesStub(channel).Create(create, timeout=10)
        tokens = list(created.seat_tokens)
        seat = subprocess.Popen(
            [*ARENA, "botzone-seat", "--server", target, "--token", tokens[2], "--",
             sys.executable, "-S", str(BOTS / "bz_keep.py")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
        )  # fmt: skip
        others = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "bots" / "fallback_bot.py"), "--server",
             target, "--tokens-file", "-"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            text=True,
        )  # fmt: skip
        assert others.stdin is not None
        others.stdin.write("\n".join(tokens[:2] + tokens[3:]) + "\n")
        others.stdin.close()
        out, _ = seat.communicate(timeout=180)
        assert seat.returncode == 0, out
        assert others.wait(timeout=60) == 0
        path = tmp_path / f"{created.match_id}.jsonl"
        deadline = time.monotonic() + 20
        while not read_record(path).complete and time.monotonic() < deadline:
            time.sleep(0.2)
        record = read_record(path)
        assert verify(record).ok
        assert not [a for a in record.answers() if a.verdict == "fault"], out
        assert record.deals()[-1].burial is not None
    finally:
        serve.terminate()
        serve.wait(timeout=20)
