"""Long work shows progress, run as a user runs it: off a terminal one line every
``ARENA_PROGRESS_SECONDS`` (done, rate, ETA, faults so far) for match, batch,
tournament, check-bot and selfplay, ``arena match`` naming the seats it still waits
for; on a terminal a bar redrawn in place. And ``arena match`` points at the seat logs
it wrote beside the record, running a bare ``python`` as arena's own."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.cli.progress import Progress

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("arena")
ARENA = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "arena.cli.main"]
BUILTINS = ["--bot", "builtin:greedy", "--bot", "builtin:random"] * 2
COUNTED = re.compile(
    r"^arena (?P<command>[a-z-]+): \d+/\d+ (matches|scenarios)"
    r"(, [\d.,]+/s, ETA \S+)?, faults \d+, \S+ elapsed"
)


@pytest.mark.slow
def test_each_long_command_prints_progress_lines_off_a_terminal(tmp_path: Path) -> None:
    late = f"sh -c 'sleep 2; exec {sys.executable} sample_bots/random_bot.py'"
    runs = {
        "selfplay": ["selfplay", "--matches", "4"],
        "batch": ["batch", *BUILTINS, "--matches", "4", "--parallel", "1"],
        "tournament": ["tournament", "--bot", "g=builtin:greedy", "--bot", "r=builtin:random",
                       "--rounds", "2", "--parallel", "1"],
        # enough to outlast the interval: 2 short scenarios ran in under 0.3 s at times
        "check-bot": ["check-bot", "builtin:greedy", "--no-stacked", "--matches", "8",
                      "--deals", "6", "--parallel", "1"],
        "match": ["match", "--deals", "1", "--bot", "builtin:greedy", "--bot", late,
                  "--bot", "builtin:greedy", "--bot", "builtin:random"],
    }  # fmt: skip
    env = {**os.environ, "ARENA_PROGRESS_SECONDS": "0.3"}
    started = {
        name: subprocess.Popen(
            [*ARENA, *args],
            cwd=ROOT if name == "match" else tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, args in runs.items()
    }
    for name, process in started.items():
        out, err = process.communicate(timeout=240)
        assert process.returncode == 0, (name, out, err)
        lines = [ln for ln in err.splitlines() if ln.startswith(f"arena {name}: ")]
        assert lines, (name, err)
        if name == "match":
            assert "arena match: waiting for seat 1 (random_bot) to connect" in err, err
            assert re.search(r"arena match: deal 1/1, \d+ decisions, faults 0", err), err
        else:
            assert all(COUNTED.match(ln) for ln in lines), lines


def test_a_log_ends_with_where_the_work_ended_once_it_has_lines() -> None:
    """Off a terminal: no line for a run shorter than the interval; otherwise the last
    line is the state at the end, not the last tick's (a match may run to its end
    between two ticks after a long wait for a bot)."""
    quick = io.StringIO()
    with Progress(3, "matches", "batch", stream=quick, interval=60) as bar:
        bar.advance(3)
    assert quick.getvalue() == ""
    log = io.StringIO()
    with Progress(3, "matches", "batch", stream=log, interval=0.05) as bar:
        while not log.getvalue():
            time.sleep(0.01)
        bar.advance(3, faults=1)
    last = log.getvalue().splitlines()[-1]
    assert last.startswith("arena batch: 3/3 matches") and "faults 1" in last, log.getvalue()


def test_a_terminal_gets_a_bar_redrawn_in_place() -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*ARENA, "selfplay", "--matches", "3", "--deals", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    out, _ = process.communicate(timeout=120)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the other side is closed: everything is read
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    text = seen.decode()
    assert process.returncode == 0 and "3 matches" in out
    assert "\r" in text and "█" in text and "3/3 matches" in text, text
    assert "arena selfplay:" not in text  # no log lines on a terminal


@pytest.mark.slow
def test_match_runs_python_as_its_own_and_points_at_the_seat_logs(tmp_path: Path) -> None:
    """A ``python`` on the PATH without grpc (here: one that only fails) is not the one
    that runs the bot; the seat log, beside the record and named after it, says so."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text("#!/bin/sh\necho 'not this python' >&2\nexit 1\n")
    (fake / "python").chmod(0o755)
    record = tmp_path / "games" / "first.jsonl"
    done = subprocess.run(
        [
            *ARENA,
            "match",
            "--seed",
            "3",
            "--deals",
            "1",
            "--record",
            str(record),
            "--bot",
            "python sample_bots/random_bot.py",
            *BUILTINS[2:],
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stderr
    log = tmp_path / "games" / "first.seat0.log"
    assert f"bot output (seat logs): {log}" in done.stdout
    assert re.search(r"^0 +0 +random_bot +0 ", done.stdout, re.M), done.stdout
    text = log.read_text()
    assert f"arena: running 'python' as {sys.executable}" in text
    assert "not this python" not in text


def _python_without_grpc() -> Path | None:
    base = Path(sys.base_prefix) / "bin" / "python3"
    if sys.prefix == sys.base_prefix or not base.exists():
        return None
    has = subprocess.run([str(base), "-c", "import grpc"], capture_output=True, check=False)
    return None if has.returncode == 0 else base


@pytest.mark.slow
@pytest.mark.skipif(_python_without_grpc() is None, reason="no Python without grpc here")
def test_match_says_why_a_bot_cannot_import_grpc(tmp_path: Path) -> None:
    python = _python_without_grpc()
    record = tmp_path / "m.jsonl"
    done = subprocess.run(
        [
            *ARENA,
            "match",
            "--seed",
            "1",
            "--deals",
            "1",
            "--record",
            str(record),
            "--connect-timeout",
            "3",
            "--grace",
            "0",
            "--time-limit",
            "20",
            "--bot",
            f"{python} sample_bots/random_bot.py",
            *BUILTINS[2:],
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = tmp_path / "m.seat0.log"
    assert (
        f"arena match: seat 0 (random_bot): the bot could not import grpc ({log}): its Python "
        "lacks it; start the command with a bare python (arena's own) or pip install grpcio "
        "protobuf for that Python"
    ) in done.stderr.splitlines()
    assert f"bot output (seat logs): {log}" in done.stdout
