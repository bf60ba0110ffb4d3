"""``bench/remote.py``'s load level on ``arena serve --workers 2``: the bench bots dial the
``seat_address`` returned with their tokens, or (``--dial front``) the front and follow
the redirect at Hello to the worker hosting their match, and the figures come from the
server's records and ``/proc`` (a smoke run of the real bench, 2 matches)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.parametrize(("dial", "redirected"), [("front", 8), ("seat", 0)])
def test_the_load_level_runs_on_two_workers(tmp_path: Path, dial: str, redirected: int) -> None:
    figures = tmp_path / "figures.json"
    argv = [sys.executable, str(ROOT / "bench" / "remote.py"), "--only", "b", "--levels", "2",
            "--workers", "2", "--cap", "90", "--dial", dial,
            "--json-out", str(figures)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "arena serve --workers 2 (a front, 2 worker processes)" in out
    level = re.search(r"^\s+2\s+(\d+)\s+(\d+)", out, re.MULTILINE)
    assert level is not None, out
    assert level.group(1) == "2"  # both matches finished
    # the front and 2 workers; with --dial seat each bulk process dials one worker itself
    assert f"3 server processes, {redirected} seats redirected at Hello" in out
    got = json.loads(figures.read_text())
    assert got["load_workers"] == 2 and got["load_matches"] == 2
    assert got["load_dps"] > 0 and got["load_rss_mib_per_match"] > 0
    assert got["load_p99_ms"] >= 0  # fast bots are charged 0 within a kernel tick or two
    # the thinkers' charges were set against their own kernel's times, one by one (the
    # verdict itself is the bench's: tests/test_receive_clock.py checks the charges)
    assert math.isfinite(got["load_charged_beyond_own_ms"]), out


@pytest.mark.slow
@pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2 or shutil.which("taskset") is None,
    reason="needs 2 CPUs and taskset",
)
def test_the_load_level_pins_the_server_and_the_bots_apart(tmp_path: Path) -> None:
    """``--pin 0:1`` (a reading aid: the server's share of the delay apart from the bots'
    CPU): the front and its workers run on CPU 0 alone, and the level still plays out;
    ``--bot-think-ms`` has the bulk bots sleep before each answer, and the charged times
    beyond that sleep are printed."""
    figures = tmp_path / "figures.json"
    cpus = sorted(os.sched_getaffinity(0))
    pin = f"{cpus[0]}:{cpus[1]}"
    argv = [sys.executable, str(ROOT / "bench" / "remote.py"), "--only", "b", "--levels", "2",
            "--workers", "2", "--cap", "90", "--pin", pin, "--bot-think-ms", "5", "--dial", "front",
            "--json-out", str(figures)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"pinned (server:bots CPUs) {pin}; the bulk bots think 5 ms" in done.stdout
    assert "the bulk bots slept 5 ms per answer: charged p50 / p99 beyond that sleep" in (
        done.stdout
    )
    assert f"3 server processes, 8 seats redirected at Hello; the server on CPUs {cpus[0]}\n" in (
        done.stdout
    )
