"""Verdict modes end to end: a real ``arena match`` (its own server on a free loopback
port) with one bot of each protocol flavour, both real processes.

A bot that says nothing about verdicts in its Hello (as every bot written before
``Hello.verdicts`` existed) gets a Verdict after every answer and never an
``accepted_seq``; a bot that asks for ``VERDICT_FAULTS_ONLY`` gets a Verdict only for its
illegal answer, at once, and every accepted answer acknowledged exactly once, on the
first message after it. The record of the match, faults included, verifies.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.records import read_record, verify

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "tests" / "verdict_bot.py"
pytestmark = pytest.mark.slow


def _play(tmp_path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Path]:
    every, faults, record = tmp_path / "every.json", tmp_path / "faults.json", tmp_path / "m.jsonl"
    command = [
        sys.executable, "-m", "arena.cli.main", "match", "--seed", "5", "--deals", "1",
        "--record", str(record),
        "--bot", f"{sys.executable} {BOT} every {every}",
        "--bot", f"{sys.executable} {BOT} faults {faults} --illegal 10",
        "--bot", "builtin:greedy", "--bot", "builtin:random",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(every.read_text()), json.loads(faults.read_text()), record


def test_each_bot_gets_the_verdicts_it_asked_for(tmp_path: Path) -> None:
    every, faults, record = _play(tmp_path)

    # the original protocol: a Verdict after each answer, before the next request
    assert every[0] == {"kind": "welcome", "ack": 0, "verdicts": 0}
    assert all(m["ack"] == 0 for m in every)
    requests = [m for m in every if m["kind"] == "request"]
    assert len(requests) > 20
    for request in requests:
        after = every[every.index(request) + 1]
        assert after["kind"] == "verdict" and after["seq"] == request["seq"]
        assert after["accepted"]

    # faults only: one Verdict, for the illegal answer, at once; the rest acknowledged
    assert faults[0] == {"kind": "welcome", "ack": 0, "verdicts": 1}
    asked = [m for m in faults if m["kind"] == "request"]
    [wrong] = [m for m in asked if m.get("illegal")]
    verdicts = [m for m in faults if m["kind"] == "verdict"]
    assert verdicts == [{"kind": "verdict", "ack": 0, "seq": wrong["seq"], "accepted": False}]
    assert faults[faults.index(wrong) + 1] == verdicts[0]  # before anything else
    accepted = [m["seq"] for m in asked if m is not wrong]
    assert [m["ack"] for m in faults if m["ack"]] == accepted  # each once, in order
    for request in asked:  # the acknowledgement is on the first message after it
        if request is not wrong:
            assert faults[faults.index(request) + 1]["ack"] == request["seq"]
    assert faults[-1]["kind"] == "match_end"

    parsed = read_record(record)
    assert parsed.footer is not None
    assert [(f["seat"], f["kind"]) for f in parsed.footer.faults] == [(1, "illegal_action")]
    assert verify(parsed).ok
