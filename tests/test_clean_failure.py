"""Clean failure: a full or read-only records directory, a damaged record at start,
text from a bot shown on a terminal, and bots that never take their seats.

Real ``arena serve`` / ``arena match`` processes on 127.0.0.1; the records directory is
a tiny tmpfs (skipped with the reason when mounting is not permitted here).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import abuse_kit as kit  # noqa: E402

pytestmark = pytest.mark.slow
ARENA = [sys.executable, "-m", "arena.cli.main"]


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs for the records (root and mount permission needed)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> Path:
    """Write a file until the disk is full."""
    filler = folder / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def test_a_full_or_read_only_records_directory_fails_cleanly(tiny_disk: Path) -> None:
    records = tiny_disk / "records"
    with kit.serve(records, "--min-free-bytes", str(1024 * 1024)) as server:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            playing = pool.submit(
                asyncio.run, kit.play_match(server.target, think=0.02, deals=2, seed=3)
            )
            deadline = time.monotonic() + 60
            while not list(records.glob("m-*.jsonl")) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # the match is being played and recorded
            filler = fill(tiny_disk)
            _match_id, seats = playing.result(timeout=60)
        # the write failed: every seat was told, with reason "failed", and let go
        for seat in seats:
            assert seat is not None and seat.status == "OK", seat
            assert seat.end is not None and seat.end.result.reason == "failed", seat
        with pytest.raises(grpc.RpcError) as full:
            asyncio.run(kit.create(server.target))
        assert full.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "KiB free" in (full.value.details() or "")
        filler.unlink()
        remount = subprocess.run(
            ["mount", "-o", "remount,ro", str(tiny_disk)], capture_output=True, check=False
        )
        if remount.returncode == 0:
            with pytest.raises(grpc.RpcError) as read_only:
                asyncio.run(kit.create(server.target))
            assert read_only.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "not writable" in (read_only.value.details() or "")
        assert asyncio.run(kit.alive(server.target))
        assert "Traceback" not in server.log()
    if remount.returncode == 0:  # and a server does not start on it: one line, exit 1
        refused = subprocess.run(
            [*ARENA, "serve", "--listen", "127.0.0.1:0", "--records", str(records)],
            capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
        )  # fmt: skip
        assert refused.returncode == 1
        assert refused.stderr.strip().splitlines() == [
            f"arena serve: the records directory {records} is not writable"
        ]


def _a_record(tmp_path: Path) -> Path:
    done = subprocess.run(
        [*ARENA, "match", "--deals", "1", "--seed", "4", *["--bot", "builtin:greedy"] * 4,
         "--record", str(tmp_path / "made" / "one.jsonl")],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path / "made" / "one.jsonl"


def test_a_damaged_record_at_start_is_skipped_with_one_warning(tmp_path: Path) -> None:
    lines = _a_record(tmp_path).read_text().splitlines()
    header = json.loads(lines[0])
    header["time_control"]["decision_ms"] = "fast"
    header["match_id"] = "m-00000000000a"
    records = tmp_path / "records"
    records.mkdir()
    damaged = records / "m-00000000000a.jsonl"  # incomplete (no footer), so resumable
    damaged.write_text("\n".join([json.dumps(header), *lines[1:20]]) + "\n")
    (records / "m-00000000000b.jsonl").write_text('{"n": 0, "type": "hea')  # cut at once
    with kit.serve(records) as server:
        assert asyncio.run(kit.alive(server.target))
        skipped = [line for line in server.log().splitlines() if "skipping" in line]
    assert skipped == [
        f"arena serve: skipping {damaged} line 0: "
        "header: time_control.decision_ms must be a number, not 'fast'",
        f"arena serve: skipping {records / 'm-00000000000b.jsonl'} line 0: no complete header line",
    ]


def test_text_from_a_bot_is_escaped_on_the_terminal(tmp_path: Path) -> None:
    record = _a_record(tmp_path)
    lines = record.read_text().splitlines()
    header = json.loads(lines[0])
    header["seats"][1]["name"] = "\x1b[2J\x1b[Hteam 1 wins\x07"
    sneaky = tmp_path / "sneaky.jsonl"
    sneaky.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    for command in ("show", "replay"):
        shown = subprocess.run(
            [*ARENA, command, str(sneaky), "--no-color"] if command == "show"
            else [*ARENA, command, str(sneaky)],
            capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
        )  # fmt: skip
        assert "\\x1b[2J\\x1b[Hteam 1 wins\\x07" in shown.stdout, shown.stdout
        assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout


@pytest.mark.parametrize(
    ("bot", "what", "said"),
    [
        ("nosuchbot", "could not start: No such file or directory", "could not start"),
        (f"{sys.executable} -c \"import sys; print('boom at start', file=sys.stderr); "
         "sys.exit(3)\"", "exited with status 3 before taking its seat", "| boom at start"),
        (f"{sys.executable} -c \"import time; print('thinking', flush=True); time.sleep(60)\"",
         "did not connect within 3 s", "| thinking"),
    ],
)  # fmt: skip
def test_arena_match_reports_a_bot_that_never_takes_its_seat_at_once(
    tmp_path: Path, bot: str, what: str, said: str
) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [*ARENA, "match", "--deals", "1", "--bot", bot, *["--bot", "builtin:greedy"] * 3,
         "--record", str(tmp_path / "m.jsonl"), "--connect-timeout", "3"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"seat 0: the bot {bot!r} {what}" in done.stderr
    assert said in done.stderr
    assert "result: team 1 (forfeit: seat 0 " in done.stdout  # the dead bot's team lost
    assert f"bot failure: seat 0 bot {what}" in done.stdout
    assert elapsed < 25, elapsed  # not the 30 s connect timeout: at once


def test_a_forfeit_before_the_first_deal_is_a_record_that_verifies(tmp_path: Path) -> None:
    subprocess.run(
        [*ARENA, "match", "--deals", "1", "--bot", "nosuchbot", *["--bot", "builtin:greedy"] * 3,
         "--record", str(tmp_path / "m.jsonl")],
        capture_output=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    replay = subprocess.run(
        [*ARENA, "replay", "--verify", str(tmp_path / "m.jsonl")],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stdout
    assert "forfeit: seat 0 could not start" in replay.stdout


def test_arena_batch_reports_a_bot_that_cannot_start_and_exits_1(tmp_path: Path) -> None:
    done = subprocess.run(
        [*ARENA, "batch", "--matches", "1", "--parallel", "1", "--deals", "1",
         "--bot", "nosuchbot", *["--bot", "builtin:greedy"] * 3, "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "could not start: No such file or directory" in done.stderr


def test_live_matches_are_bounded_in_total(tmp_path: Path) -> None:
    flags = ("--matches-total", "3", "--matches-per-organiser", "100")
    with kit.serve(tmp_path / "records", *flags) as server:
        made, refused, ids = asyncio.run(kit.create_flood(server.target, 10))
        assert made == 3
        assert refused == [
            "RESOURCE_EXHAUSTED: the server already runs 3 live matches (--matches-total)"
        ]
        asyncio.run(kit.cancel_all(server.target, ids))
        assert asyncio.run(kit.alive(server.target))
