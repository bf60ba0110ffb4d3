"""``arena batch --ray local``: one Ray task per match on a real local Ray instance.

Not a mock: the command starts a private Ray instance (``ray.init(address="local")``)
with two CPUs, runs each match as a Ray task in a Ray worker process, and the driver
writes the records the tasks send back. ``make setup`` installs Ray from
requirements-ray.lock, so this runs in CI; Ray's start-up makes it a slow test
(about 20-30 s on two cores).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.records import read_record, verify

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_a_batch_runs_on_a_local_ray_instance(tmp_path: Path) -> None:
    if importlib.util.find_spec("ray") is None:
        pytest.fail("Ray is not installed: `make setup` installs it (requirements-ray.lock)")
    python = sys.executable
    command = [
        python, "-m", "arena.cli.main", "batch", "--ray", "local", "--parallel", "2",
        "--matches", "2", "--deals", "1", "--seed", "3", "--json", "--out", "out",
        "--bot", "builtin:greedy",
        "--bot", f"{python} {ROOT / 'sample_bots' / 'random_bot.py'}",  # a subprocess bot
        "--bot", "builtin:greedy",
        "--bot", "builtin:random",
    ]  # fmt: skip
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    # Run in tmp_path: --out is relative to the driver's folder, not the Ray workers'.
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert (summary["matches"], summary["completed"], summary["failed"]) == (2, 2, [])
    assert summary["faults"] == 0

    out = tmp_path / "out"
    records = sorted(out.glob("match-*.jsonl"))
    assert [p.name for p in records] == ["match-00000.jsonl", "match-00001.jsonl"]
    for path in records:
        result = verify(read_record(path))
        assert result.ok, f"{path}: {result}"
    # the subprocess bot's log came back from the Ray worker too, beside the records
    assert len(list(out.glob("*.seat1.log"))) == 2
    rows = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    assert [r["record"] for r in rows] == [str(Path("out") / p.name) for p in records]
