"""``arena.server.placement``: which CPU a serving process's two Python threads take,
and ``arena serve --cpu-pinning``'s usage errors (one line, exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.server import placement
from arena.server.placement import cpu_for, parse_setting

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def four_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placement, "allowed_cpus", lambda: [2, 3, 6, 7])  # a container's set


def test_auto_gives_worker_i_the_i_th_allowed_cpu(four_cpus: None) -> None:
    assert [cpu_for("auto", i) for i in range(6)] == [2, 3, 6, 7, 2, 3]


def test_off_and_a_single_cpu_pin_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cpu_for("off", 0) is None
    monkeypatch.setattr(placement, "allowed_cpus", lambda: [5])
    assert cpu_for("auto", 0) is None and cpu_for("5", 0) is None
    with pytest.raises(ValueError, match=r"CPU 4 is not one this process may use \(5\)"):
        cpu_for("4", 0)  # refused even where there is nothing to choose
    monkeypatch.setattr(placement, "allowed_cpus", lambda: [])  # no affinity calls here
    assert cpu_for("auto", 0) is None


def test_a_cpu_number_must_be_one_the_process_may_use(four_cpus: None) -> None:
    assert cpu_for("6", 3) == 6  # the number, whatever the slot
    with pytest.raises(ValueError, match=r"CPU 4 is not one this process may use \(2,3,6,7\)"):
        cpu_for("4", 0)


@pytest.mark.parametrize("text", ["", "-1", "1.5", "first", "123456"])
def test_settings_other_than_auto_off_or_a_number_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="give auto, off or a CPU number"):
        parse_setting(text)
    assert parse_setting(" AUTO ") == "auto" and parse_setting("3") == "3"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--cpu-pinning", "first"], "'first': give auto, off or a CPU number"),
        (["--cpu-pinning", "0", "--workers", "2"], "would put all 2 workers on one CPU"),
        (["--cpu-pinning", "4095", "--workers", "1"], "CPU 4095 is not one this process"),
    ],
)
def test_serve_refuses_a_setting_it_cannot_follow_in_one_line(
    tmp_path: Path, options: list[str], said: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "serve", "--open", "--listen",
         "127.0.0.1:0", "--records", str(tmp_path / "records"), *options],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("arena serve")]
    assert len(lines) == 1 and said in lines[0], done.stderr
