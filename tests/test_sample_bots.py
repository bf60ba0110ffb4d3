"""The bots built from ``proto/`` alone, as an author in another language builds one:
the minimal Python bot (grpcio and generated stubs, no arena import) and the C++ bot
(Debian's gRPC packages, one make target), each playing a real match with 0 faults."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("arena")
ARENA = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "arena.cli.main"]
CPP_PACKAGES = "libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc pkg-config g++"


def make(target: str, timeout: float) -> None:
    done = subprocess.run(
        ["make", "-s", target], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr


def play(bot: str, tmp_path: Path) -> str:
    """A two-deal match, the bot in seats 0 and 2 against builtin:random; stdout."""
    done = subprocess.run(
        [
            *ARENA,
            "match",
            "--seed",
            "11",
            "--deals",
            "2",
            "--record",
            str(tmp_path / "m.jsonl"),
            "--bot",
            bot,
            "--bot",
            "builtin:random",
            "--bot",
            bot,
            "--bot",
            "builtin:random",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def faults_by_seat(out: str) -> dict[int, int]:
    rows = re.findall(r"^([0-3]) +[01] +\S+ +(\d+) ", out, re.M)
    assert len(rows) == 4, out
    return {int(seat): int(n) for seat, n in rows}


def test_the_minimal_bot_imports_nothing_of_arena() -> None:
    tree = ast.parse((ROOT / "sample_bots" / "minimal" / "bot.py").read_text())
    imported = {
        (a.name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names
    }
    assert imported - set(sys.stdlib_module_names) == {"grpc", "arena_pb2", "arena_pb2_grpc"}


@pytest.mark.slow
def test_the_minimal_bot_plays_without_faults(tmp_path: Path) -> None:
    make("minimal-bot", timeout=120)
    out = play("python sample_bots/minimal/bot.py", tmp_path)
    assert faults_by_seat(out) == {0: 0, 1: 0, 2: 0, 3: 0}
    assert re.search(r"^0 +0 +minimal ", out, re.M), out


def _cpp_missing() -> str:
    tools = ["g++", "pkg-config", "protoc", "grpc_cpp_plugin"]
    missing = [t for t in tools if shutil.which(t) is None]
    if not missing:
        check = subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"], check=False)
        missing += [] if check.returncode == 0 else ["grpc++.pc"]
    return ", ".join(missing)


@pytest.mark.slow
@pytest.mark.skipif(
    bool(_cpp_missing()), reason=f"C++ gRPC toolchain missing; install {CPP_PACKAGES}"
)
def test_the_cpp_bot_builds_with_one_target_and_plays_without_faults(tmp_path: Path) -> None:
    make("cpp-bot", timeout=600)  # ~25 s of CPU compiling the first time
    out = play("sample_bots/cpp/bot", tmp_path)
    assert faults_by_seat(out) == {0: 0, 1: 0, 2: 0, 3: 0}
    assert re.search(r"^0 +0 +cpp ", out, re.M), out
