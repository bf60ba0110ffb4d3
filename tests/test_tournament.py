"""``arena tournament`` (docs/batch.md): pairings, openskill ratings, the report and JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.batch import BotSpec, MatchSummary
from arena.batch.tournament import build_jobs, pairings, rate
from arena.cli.logs import configure_logging
from arena.cli.main import main
from arena.records import read_record, verify


@pytest.fixture(autouse=True)
def _logging_back_on_real_stderr() -> Iterator[None]:
    """``main`` binds the log output to the sys.stderr of the moment, which is capsys's
    (closed after the test): later tests must not log into it."""
    yield
    configure_logging("warning", stream=sys.__stderr__)


def _summary(index: int, bots: tuple[str, str, str, str], winner: int | None) -> MatchSummary:
    return MatchSummary(
        index, 0, 0, bots, "finished", winner, "", 1, ("2", "2"), (80,), (), (), 0, 0.0, None
    )


@pytest.mark.parametrize(("n", "expected"), [(2, 1), (3, 6), (4, 3), (5, 15), (6, 45)])
def test_every_pairing_is_two_teams_sharing_no_bot(n: int, expected: int) -> None:
    names = [chr(ord("A") + i) for i in range(n)]
    plan = pairings(names)
    assert len(plan) == expected
    assert len({frozenset((frozenset(a), frozenset(b))) for a, b in plan}) == expected
    for a, b in plan:
        assert not set(a) & set(b)
    # every bot meets every other bot on the opposing team somewhere
    met = {(x, y) for a, b in plan for x in a for y in b}
    assert all((x, y) in met or (y, x) in met for x in names for y in names if x != y)
    if n >= 4:
        assert all(a[0] != a[1] and b[0] != b[1] for a, b in plan)


def test_two_and_three_bots_partner_copies_of_themselves() -> None:
    assert pairings(["A", "B"]) == [(("A", "A"), ("B", "B"))]
    plan = pairings(["A", "B", "C"])
    assert (("A", "A"), ("B", "C")) in plan
    assert (("C", "C"), ("A", "B")) in plan


def test_pairings_refuse_one_bot_and_duplicate_names() -> None:
    with pytest.raises(ValueError, match="two bots"):
        pairings(["A"])
    with pytest.raises(ValueError, match="differ"):
        pairings(["A", "A"])


def test_jobs_play_each_round_twice_with_the_teams_swapped() -> None:
    bots = [BotSpec(n, "builtin:random") for n in "ABCD"]
    _, jobs = build_jobs(bots, 2, seed=5, out=Path("x"))
    assert len(jobs) == 3 * 2 * 2
    first, swapped = jobs[0], jobs[1]
    assert [b.name for b in first.bots] == ["A", "C", "B", "D"]  # A+B at seats 0 and 2
    assert {b.name for b in swapped.bots[0::2]} == {"C", "D"}  # the other team's seats
    assert (first.seed, swapped.seed, jobs[2].seed) == (5, 5, 6)
    assert first.record != swapped.record
    _, single = build_jobs(bots, 2, duplicate=False)
    assert len(single) == 3 * 2 and all(j.record is None for j in single)


def test_ratings_are_team_aware_and_a_draw_moves_nobody_apart() -> None:
    ratings = rate([_summary(0, ("A", "C", "B", "D"), 0)], "ABCD")
    assert ratings["A"]["mu"] == ratings["B"]["mu"] > 25 > ratings["C"]["mu"] == ratings["D"]["mu"]
    # a bot partnered with itself is one player
    self_team = rate([_summary(0, ("A", "B", "A", "B"), 1)], "AB")
    assert self_team["B"]["mu"] > 25 > self_team["A"]["mu"]
    draw = rate([_summary(0, ("A", "C", "B", "D"), None)], "ABCD")
    assert draw["A"]["mu"] == pytest.approx(25) and draw["C"]["mu"] == pytest.approx(25)
    # failed matches are not rated
    failed = rate([MatchSummary(0, 0, 0, ("A", "B", "A", "B"), "failed", None, "", 0,
                                ("", ""), (), (), (), 0, 0.0, None)], "AB")  # fmt: skip
    assert failed["A"] == failed["B"]


def test_a_three_bot_tournament_ranks_greedy_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t"
    code = main(
        [
            "tournament",
            "--bot", "greedy=builtin:greedy",
            "--bot", "random=builtin:random",
            "--bot", "random2=builtin:random",
            "--rounds", "1", "--deals", "1", "--parallel", "1",
            "--out", str(out),
        ]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0, text
    ranking_lines = [line.split() for line in text.splitlines() if line[:3].strip().isdigit()]
    assert ranking_lines[0][1] == "greedy", text
    assert {row[1] for row in ranking_lines[:3]} == {"greedy", "random", "random2"}, text
    assert "pairwise" in text

    data = json.loads((out / "tournament.json").read_text())
    assert data["format"] == "arena-tournament"
    assert data["model"]["package"] == "openskill"
    assert (data["matches"], data["completed"], data["failed"]) == (12, 12, [])
    assert len(data["pairings"]) == 6
    ranking = data["ranking"]
    assert ranking[0]["bot"] == "greedy"
    assert ranking[0]["ordinal"] > ranking[1]["ordinal"] >= ranking[2]["ordinal"]
    assert all(r["sigma"] < 25 / 3 for r in ranking)  # every bot played and was rated
    greedy = data["pairwise"]["greedy"]
    assert greedy["random"]["wins"] > greedy["random"]["losses"]
    assert data["pairwise"]["random"]["greedy"]["wins"] == greedy["random"]["losses"]
    assert sum(p["matches"] for p in data["pairings"]) == 12
    assert data["summary"]["completed"] == 12  # the `arena batch` summary too

    lines = (out / "matches.jsonl").read_text().splitlines()
    assert len(lines) == 12
    records = sorted(out.glob("pairing-*.jsonl"))
    assert len(records) == 12
    for path in records[:4]:
        assert verify(read_record(path)).ok, path


def test_tournament_refuses_bad_bot_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tournament", "--bot", "builtin:greedy", "--out", str(tmp_path)]) == 2
    assert "two bots" in capsys.readouterr().err
    twice = ["--bot", "builtin:random", "--bot", "builtin:random"]
    assert main(["tournament", *twice, "--out", str(tmp_path)]) == 2
    assert "NAME=CMD" in capsys.readouterr().err
    assert main(["tournament", "--bot", "a=builtin:nope", "--bot", "b=builtin:random"]) == 2
