"""Faulted matches end to end: real ``arena match`` and ``arena serve`` runs, real bots.

Every record of a match in which faults were charged — illegal plays, timeouts, garbage,
a crash, a seat that never connects, a strict forfeit — must verify with ``arena replay
--verify``; and ``arena serve`` killed with SIGKILL in the middle of a match with charged
faults must, once restarted and its bots back, finish that match with the same faults
and an unbroken match clock, its record verifying.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from servekit import (
    create_match,
    finish_after_restart,
    kill_9,
    reconnecting_bots,
    restart,
    start_serve,
    stop_all,
    wait_for_answers,
)

from arena.records import read_record, verify

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
pytestmark = pytest.mark.slow


def hostile(name: str, *args: str) -> str:
    return " ".join([PY, str(ROOT / "tests" / "hostile" / f"{name}.py"), *args])


CASES: dict[str, tuple[str, list[str]]] = {
    "illegal": (hostile("illegal"), []),
    "illegal-strict": (hostile("illegal"), ["--policy", "strict"]),
    "disqualified": (hostile("clumsy"), ["--max-faults", "3", "--deals", "3"]),
    "sleepy": (hostile("sleepy", "1"), []),
    "garbage": (hostile("garbage"), []),
    "crash": (hostile("crash", "5"), []),
    "silent": (hostile("silent"), ["--connect-timeout", "2"]),
}


def test_hostile_bots_in_arena_match_leave_records_that_verify(tmp_path: Path) -> None:
    runs = {}
    for name, (bot, extra) in CASES.items():
        record = tmp_path / f"{name}.jsonl"
        command = [PY, "-m", "arena.cli.main", "match", "--seed", "3", "--deals", "1",
                   "--bot", bot, "--bot", "builtin:greedy", "--bot", "builtin:random",
                   "--bot", "builtin:greedy", "--time-limit", "300", "--time-bank", "200",
                   "--grace", "300", "--record", str(record), *extra]  # fmt: skip
        runs[name] = (record, subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        ))  # fmt: skip
    faulted = 0
    for name, (record, process) in runs.items():
        out, _ = process.communicate(timeout=240)
        assert process.returncode in (0, 1), f"{name}: {out.decode()[-2000:]}"  # 1: bot died
        checked = verify(read_record(record))
        assert checked.ok, f"{name}: {checked}"
        done = read_record(record)
        assert done.footer is not None
        if name == "silent":  # missing at the start: its team forfeits before any deal
            assert done.result is not None and done.result.reason == "forfeit"
            continue
        assert done.footer.faults, name
        faulted += 1
        replay = subprocess.run([PY, "-m", "arena.cli.main", "replay", str(record), "--verify"],
                                cwd=ROOT, capture_output=True, text=True, check=False)  # fmt: skip
        assert replay.returncode == 0, replay.stdout + replay.stderr
        seqs = [a.seq for a in done.answers()]
        assert seqs == list(range(1, len(seqs) + 1)), name  # a bid window's in order too
        result = done.result
        assert result is not None
        if name in ("illegal-strict", "disqualified"):
            assert result.reason == "forfeit" and result.forfeited == 0, name
        if name == "crash":  # one absence, one fault: the rest played "absent"
            assert [f["kind"] for f in done.footer.faults] == ["disconnected"], name
            assert any(a.absent for a in done.answers()), name
    assert faulted == len(CASES) - 1


def test_a_killed_server_resumes_a_match_with_charged_faults(tmp_path: Path) -> None:
    options = ("--log-json", "--open", "--workers", "1")
    server = start_serve(tmp_path, *options)
    bots = []
    try:
        created = create_match(server, seed=5, deals=2, names=["c0", "g1", "r2", "g3"])
        scripts = [ROOT / "tests" / "hostile" / "clumsy.py"] + [
            ROOT / "sample_bots" / f"{s}.py" for s in ("greedy_bot", "random_bot", "greedy_bot")
        ]
        bots = reconnecting_bots(server, scripts, list(created.seat_tokens), tmp_path)
        record_path = server.records / f"{created.match_id}.jsonl"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # kill it once a fault has been charged
            wait_for_answers(record_path, 60)
            if record_path.read_bytes().count(b'"type":"penalty"') >= 2:
                break
            time.sleep(0.05)
        kill_9(server)
        before = read_record(record_path)
        assert not before.complete
        charged = [a for a in before.answers() if a.fault]
        assert charged, "no fault had been charged before the kill"
        server = restart(server, tmp_path, *options)
        after = finish_after_restart(server, bots, record_path, tmp_path, timeout=120)
        assert after.footer is not None
        footer = [(f["seq"], f["kind"], f["reason"]) for f in after.footer.faults]
        kept = [(a.seq, a.fault_kind, a.fault_reason) for a in charged]
        assert footer[: len(kept)] == kept  # the faults before the kill, all still there
        penalties = [line for line in after.lines if line.type == "penalty"]
        assert len(penalties) == len(footer)  # each charged once, none lost, none doubled
        times = [a.requested_at_ms for a in after.answers()]
        assert times == sorted(times)  # the match clock carried on, never back to 0
    finally:
        stop_all(server, bots)
