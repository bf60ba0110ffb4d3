"""The benchmarks' kernel-time reader works whatever arena is under test.

``bench/remote.py`` runs against an older checkout for its baselines
(``PYTHONPATH=<checkout>``), whose arena may lack ``arena/server/receive_clock.py``; the
bench's bots and levels load this checkout's copy by path (``bench/own_clock.py``). It
must load without importing ``arena`` at all (it once imported it, and every baseline run
failed at start-up).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_bench_reads_the_kernel_with_this_checkout_s_module_and_no_arena() -> None:
    probe = (
        "import sys; sys.path.insert(0, 'bench'); import own_clock; "
        "m = own_clock.receive_clock(); "
        "assert m.__file__ == str(own_clock.PATH), m.__file__; "
        "assert not any(n == 'arena' or n.startswith('arena.') for n in sys.modules), "
        "sorted(n for n in sys.modules if n.startswith('arena')); "
        "print(m.measure_jiffy() is None or 0 < m.measure_jiffy() <= 0.05)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_the_bench_bot_starts_on_an_arena_without_the_reader(tmp_path: Path) -> None:
    """``fallback_bot.py`` (the bench's Python bot, traced or not) on an arena that has
    no ``receive_clock`` module, as a baseline checkout's."""
    shutil.copytree(
        ROOT / "arena", tmp_path / "arena", ignore=shutil.ignore_patterns("receive_clock.py")
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "bench/bots/fallback_bot.py", "--help"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--trace" in done.stdout


def test_the_bench_levels_do_not_import_the_reader_from_arena() -> None:
    for script in ("bench/bots/fallback_bot.py", "bench/remote_level.py"):
        text = (ROOT / script).read_text()
        assert "from arena.server.receive_clock" not in text, script
        assert "from own_clock import receive_clock" in text, script
