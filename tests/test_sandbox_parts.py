"""The sandbox's pure parts: sizes, limits, verdicts, the bubblewrap command line, the
``sandbox:`` bot prefix; and the one-line error where bubblewrap is missing (which
runs everywhere: it needs no bubblewrap)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.batch import BotSpec
from arena.batch.sandbox import SandboxLimits, judge, parse_size
from arena.batch.sandbox.bwrap import SOCKET, bot_paths, bwrap_argv, free_uid, sandbox_env
from arena.batch.sandbox.watch import cpu_seconds
from arena.referee import FaultKind

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024


def test_sizes() -> None:
    assert parse_size("512M") == 512 * MB
    assert parse_size("2g") == 2048 * MB
    assert parse_size("100k") == 102400
    assert parse_size("1.5MB") == int(1.5 * MB)
    assert parse_size("4096") == 4096
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_limits_refuse_what_no_bot_could_live_with() -> None:
    SandboxLimits().check()
    with pytest.raises(ValueError, match="--sandbox-memory"):
        SandboxLimits(memory_bytes=MB).check()
    with pytest.raises(ValueError, match="--sandbox-cpu"):
        SandboxLimits(cpu_seconds=0).check()


def test_limits_say_how_they_are_enforced() -> None:
    text = SandboxLimits().describe()
    for part in ("memory 512 MB", "rlimit DATA", "CPU 600 s", "rlimit NPROC", "output 10 MB"):
        assert part in text
    assert "--data=536870912" in SandboxLimits().prlimit_args()


@pytest.mark.parametrize(
    ("status", "kwargs", "kind", "words"),
    [
        (0, {"output_stopped": True}, FaultKind.OUTPUT_LIMIT, "more than 10 MB"),
        (-signal.SIGKILL, {"output_stopped": True}, FaultKind.OUTPUT_LIMIT, "stopped"),
        (128 + signal.SIGXCPU, {}, FaultKind.CPU_LIMIT, "SIGXCPU: a process used its 600 s"),
        (128 + signal.SIGKILL, {"cpu_seconds": 601.0}, FaultKind.CPU_LIMIT, "601.0 s of CPU"),
        (1, {"tail": "...\nMemoryError\n"}, FaultKind.MEMORY_LIMIT, "exited with status 1"),
        (128 + signal.SIGABRT, {"tail": "std::bad_alloc"}, FaultKind.MEMORY_LIMIT, "SIGABRT"),
        (1, {"tail": "BlockingIOError: [Errno 11]"}, FaultKind.PROCESS_LIMIT, "limit 64"),
        (128 + signal.SIGABRT, {"at_process_limit": True}, FaultKind.PROCESS_LIMIT, "SIGABRT"),
        (128 + signal.SIGSEGV, {}, FaultKind.CRASHED, "killed by SIGSEGV"),
        (3, {}, FaultKind.CRASHED, "exited with status 3"),
        (127, {}, FaultKind.CRASHED, "could not be run in the sandbox"),
        (0, {}, FaultKind.CRASHED, "status 0 before the match ended"),
    ],
)
def test_verdicts(status: int, kwargs: dict[str, Any], kind: FaultKind, words: str) -> None:
    ending = judge(status, SandboxLimits(), **kwargs)
    assert ending.kind is kind
    assert words in ending.reason


def test_cpu_time_of_a_process_tree_counts_reaped_children() -> None:
    before = cpu_seconds(os.getpid())
    subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
    assert cpu_seconds(os.getpid()) > before  # the child's time, once reaped, is ours


def test_a_sandbox_run_by_root_gets_an_unused_uid() -> None:
    assert free_uid() >= 1000  # never root nor a system account (usually >= 100000)


def test_sandbox_prefix_per_bot() -> None:
    assert BotSpec.parse("sandbox:python bot.py") == BotSpec("bot", "python bot.py", True)
    assert BotSpec.parse("me=sandbox:python bot.py") == BotSpec("me", "python bot.py", True)
    assert BotSpec.parse("python bot.py") == BotSpec("bot", "python bot.py", False)
    assert BotSpec.parse("builtin:greedy").sandboxed is False
    with pytest.raises(ValueError, match="only commands can be sandboxed"):
        BotSpec.parse("sandbox:builtin:greedy").check()


def test_the_bot_environment_holds_nothing_of_the_referee() -> None:
    env = sandbox_env({"PATH": "/usr/bin", "SECRET_TOKEN": "x", "HOME": "/root"}, "unix:/s", "t", 2)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "ARENA_SERVER": "unix:/s",
        "ARENA_TOKEN": "t",
        "ARENA_SEAT": "2",
    }


def test_a_venv_python_bot_gets_its_venv_its_python_and_its_folder() -> None:
    paths = bot_paths([sys.executable, "sample_bots/random_bot.py"], ROOT, os.environ["PATH"])
    assert ROOT / "sample_bots" in paths
    assert Path(sys.prefix) in paths  # the venv
    assert Path(sys.base_prefix).resolve() in [p.resolve() for p in paths]  # its Python


def test_a_launcher_gets_the_folders_of_the_command_it_runs() -> None:
    words = [sys.executable, "-m", "arena.cli.main", "botzone-seat", "--", "python3", "b/x.py"]
    paths = bot_paths(words, ROOT / "tests", os.environ["PATH"])
    assert Path(sys.prefix) in paths
    assert ROOT / "tests" / "b" not in paths  # no such file: nothing made up
    words[-1] = "botzone/bz_simple.py"
    assert ROOT / "tests" / "botzone" in bot_paths(words, ROOT / "tests", os.environ["PATH"])


def test_command_line_hides_records_inside_a_bound_folder(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    (bot / "records").mkdir(parents=True)
    (bot / "bot.py").write_text("")
    argv = bwrap_argv(
        ["python3", "bot.py"], "/tmp/x/arena.sock", SandboxLimits(), bot, "/usr/bin",
        [bot / "records"],
    )  # fmt: skip
    line = " ".join(argv)
    assert "--unshare-net" in argv and "--die-with-parent" in argv
    assert f"--ro-bind {bot} {bot}" in line
    assert f"--tmpfs {bot / 'records'} --remount-ro {bot / 'records'}" in line
    assert f"--bind /tmp/x/arena.sock {SOCKET}" in line
    assert "--remount-ro / " in line
    assert argv[-2:] == ["python3", "bot.py"]


def test_a_clear_error_where_bubblewrap_is_missing(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "match", "--sandbox", "--bot", "python3 x.py",
         "--bot", "builtin:greedy", "--bot", "builtin:greedy", "--bot", "builtin:greedy"],
        capture_output=True, text=True, env={**os.environ, "PATH": str(empty)}, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "bubblewrap" in lines[0] and "apt-get install bubblewrap" in lines[0]
