"""``arena batch``: built-in and command bots, duplicate deals, summaries, records."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from arena.batch import BotSpec, MatchJob, duplicate_seating, run_job, summarize
from arena.cli.main import main
from arena.records import read_record, verify

ROOT = Path(__file__).resolve().parent.parent
GREEDY, RANDOM = "builtin:greedy", "builtin:random"


def batch(tmp_path: Path, *extra: str, bots: tuple[str, ...] = (GREEDY, RANDOM) * 2) -> dict:
    out = tmp_path / "out"
    args = ["batch", "--out", str(out), "--json", "--deals", "1", *extra]
    for bot in bots:
        args += ["--bot", bot]
    assert main(args) == 0
    summary: dict = json.loads((out / "summary.json").read_text())
    return summary


def test_a_builtin_batch_summarizes_and_every_record_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = batch(tmp_path, "--matches", "3", "--parallel", "1")
    printed = json.loads(capsys.readouterr().out)
    assert printed == summary
    assert summary["matches"] == summary["completed"] == 3
    assert summary["faults"] == 0 and summary["failed"] == []
    for key in ("results", "matches_per_s", "deals_per_match", "mean_attacker_points"):
        assert key in summary
    teams = summary["results"]["teams"]
    assert set(teams) == {f"{GREEDY}+{GREEDY}", f"{RANDOM}+{RANDOM}"}
    assert sum(t["wins"] + t["draws"] for t in teams.values()) >= 3
    bots = summary["results"]["bots"]
    assert bots[GREEDY]["decisions"] > 0 and bots[GREEDY]["latency_p99_ms"] >= 0
    records = sorted((tmp_path / "out").glob("match-*.jsonl"))
    assert len(records) == 3
    for path in records:
        assert verify(read_record(path)).ok


def test_duplicate_plays_the_same_decks_with_the_partnerships_swapped(tmp_path: Path) -> None:
    batch(tmp_path, "--matches", "2", "--duplicate", "--parallel", "2")
    out = tmp_path / "out"
    for i in range(2):
        first = read_record(out / f"match-{i:05d}.jsonl")
        second = read_record(out / f"match-{i:05d}-b.jsonl")
        assert verify(first).ok and verify(second).ok
        assert first.header is not None and second.header is not None
        assert first.header.seed == second.header.seed
        # the same cards in the same deal…
        assert first.decks()[0].cards == second.decks()[0].cards
        # …with every partnership moved one seat on, so it is dealt the other's hands
        names = [s.name for s in first.header.seats]
        moved = [s.name for s in second.header.seats]
        assert moved == [names[3], names[0], names[1], names[2]]


def test_duplicate_seating_swaps_the_partnerships() -> None:
    a, b, c, d = (BotSpec(n, f"builtin:{n}") for n in ("a", "b", "c", "d"))
    seated = duplicate_seating((a, b, c, d))
    assert {seated[0].name, seated[2].name} == {b.name, d.name}  # a+c now on seats 1 and 3
    assert {seated[1].name, seated[3].name} == {a.name, c.name}


@pytest.mark.slow
def test_a_batch_of_command_bots_plays_over_grpc(tmp_path: Path) -> None:
    bot = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
    summary = batch(tmp_path, "--matches", "2", "--parallel", "2", bots=(bot, RANDOM, bot, GREEDY))
    assert summary["completed"] == 2 and summary["faults"] == 0
    assert summary["results"]["bots"]["random_bot"]["decisions"] > 0
    for path in sorted((tmp_path / "out").glob("match-*.jsonl")):
        assert verify(read_record(path)).ok
    assert list((tmp_path / "out").glob("*.seat0.log"))  # the bots' own output is kept


def test_a_failed_match_is_reported_not_lost(tmp_path: Path) -> None:
    bots = (BotSpec("x", "builtin:nosuchbot"),) * 4
    summary = run_job(MatchJob(0, 1, bots, record=str(tmp_path / "m.jsonl")))  # type: ignore[arg-type]
    assert summary.state == "failed" and "nosuchbot" in summary.error
    report = summarize([summary], 1.0)
    assert report["completed"] == 0 and report["failed"][0]["index"] == 0


def test_bad_arguments_are_refused_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["batch", "--bot", GREEDY, "--out", str(tmp_path)]) == 2
    assert "exactly four --bot" in capsys.readouterr().err
    args = ["batch", "--out", str(tmp_path), "--rules", "no_such_rule=1"]
    assert main(args + ["--bot", GREEDY] * 4) == 2
    assert "no_such_rule" in capsys.readouterr().err
