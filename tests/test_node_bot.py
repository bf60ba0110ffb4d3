"""The Node.js sample bot (sample_bots/node) plays a real match over gRPC without a fault.

It runs ``arena match`` as a user would, the Node bot in seats 0 and 2 against the Python
sample bots in seats 1 and 3, and reads the record it writes. ``make setup`` installs the
bot's npm packages (``npm ci``); without node or those packages the test is skipped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODE_BOT = ROOT / "sample_bots" / "node"

pytestmark = pytest.mark.slow


def _need_node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node sample bot cannot run")
    if not (NODE_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip("sample_bots/node/node_modules is absent: run `make setup` (npm ci)")
    return node


def test_node_bot_plays_a_match_without_faults(tmp_path: Path) -> None:
    node = _need_node()
    record = tmp_path / "node.jsonl"
    python = sys.executable
    command = [
        python, "-m", "arena.cli.main", "match", "--seed", "11", "--deals", "2",
        "--bot", f"{node} {NODE_BOT / 'bot.js'}",
        "--bot", f"{python} {ROOT / 'sample_bots' / 'greedy_bot.py'}",
        "--bot", f"{node} {NODE_BOT / 'bot.js'} --name node_bot_2",
        "--bot", f"{python} {ROOT / 'sample_bots' / 'random_bot.py'} --seed 3",
        "--record", str(record),
    ]  # fmt: skip
    # Run in tmp_path: the bots' logs (seat0.log …) are written beside the record or
    # under ./records, never in the repository.
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " finished" in done.stdout.splitlines()[0], done.stdout

    # The result table: one row per seat, the faults column is 0 everywhere.
    rows = [line.split() for line in done.stdout.splitlines() if line[:1].isdigit()]
    assert [int(row[0]) for row in rows] == [0, 1, 2, 3], done.stdout
    assert all(row[3] == "0" for row in rows), done.stdout

    lines = [json.loads(line) for line in record.read_text().splitlines()]
    header, footer = lines[0], lines[-1]
    assert [s["name"] for s in header["seats"][::2]] == ["node_bot", "node_bot_2"]
    assert footer["type"] == "footer"
    assert footer["faults"] == []
    assert footer["result"]["deals"] == 2
    assert footer["result"]["reason"] == "deals_played"

    # The Node seats answered every kind of request themselves, all accepted.
    answers = [x for x in lines if x["type"] == "answer" and x["seat"] in (0, 2)]
    assert {a["kind"] for a in answers} >= {"bid", "play"}
    assert all(a["verdict"] == "accepted" for a in answers)
    played = sum(len(a["played"]) for a in answers if a["kind"] == "play")
    assert played == 2 * 2 * 25  # two seats, two deals, 25 cards each

    # The bot's own log (stderr): its logic never crashed into the fallback.
    logs = "".join(p.read_text() for p in tmp_path.rglob("*.seat[02].log"))
    assert "match over" in logs, logs
    assert "decide failed" not in logs and "fault on seq" not in logs, logs


def test_node_bot_needs_a_token() -> None:
    node = _need_node()
    done = subprocess.run(
        [node, str(NODE_BOT / "bot.js")],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "no seat token" in done.stderr
