"""``arena check-bot``: positions reached, faults named with their position, exit codes.

The first tests play the stacked scenarios with in-process bots (no subprocess: fast
and deterministic) to check that each position is built as described and that a fault
is reported where it happened. The ``slow`` ones run the real command line against the
sample bots (they must pass) and against the hostile bots of ``tests/hostile/`` (each
must fail, in the scenario, position and fault kind it provokes); the hostile runs go
in parallel, one ``arena check-bot`` process each, to keep the wall time down.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.batch.checkbot import (
    OWN_FAILED,
    CheckOptions,
    Plan,
    ScriptedBot,
    check_bot,
    junit_xml,
    render,
    run_scenario,
    stacked_scenarios,
)
from arena.bots import GreedyBot
from arena.cli.main import main
from arena.game import Action, Kind, Request, ThrowFailed, hands_of
from arena.records import read_record
from arena.rules import Suit, deck, parse_cards

ROOT = Path(__file__).resolve().parent.parent
PYTHON = shlex.quote(sys.executable)
SCENARIOS = {s.name: s for s in stacked_scenarios()}


def options(tmp_path: Path, **kw: Any) -> CheckOptions:
    return CheckOptions(out=tmp_path, parallel=1, **kw)


# -- the positions, in process ------------------------------------------------------------


def test_every_stacked_deck_is_a_whole_deck_dealt_as_described() -> None:
    for scenario in SCENARIOS.values():
        assert Counter(scenario.deck) == Counter(deck(2)), scenario.name
    tractor = SCENARIOS["follow-tractor"]
    hands, kitty = hands_of(tractor.deck)
    mine = hands[tractor.seat]
    hearts = Counter(c for c in mine if c.suit is Suit.HEARTS)
    clubs = Counter(c for c in mine if c.suit is Suit.CLUBS)
    assert hearts == Counter(parse_cards("9H 9H TH TH 7H"))
    assert clubs == Counter(parse_cards("7C 7C 4C 4C"))
    assert Counter(kitty) == Counter(parse_cards("2H 2H 2C 2C 2D 2D SJ BJ"))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_each_stacked_scenario_reaches_what_it_sets_up(name: str, tmp_path: Path) -> None:
    """With the built-in greedy bot in the seat under test, every target is reached,
    except the bot's own failed throw (greedy never throws)."""
    result = run_scenario("builtin:greedy", SCENARIOS[name], options(tmp_path))
    assert result.status == "pass", (result.error, result.faults)
    assert result.state == "finished"
    expected_missing = [OWN_FAILED] if name == "own-failed-throw" else []
    assert result.missed == expected_missing


def test_a_bot_that_throws_sees_its_own_throw_fail(tmp_path: Path) -> None:
    scenario = SCENARIOS["own-failed-throw"]
    thrower = ScriptedBot(Plan(bids=("2S", "2S 2S"), leads=("AC AC KC QC",)))
    result = run_scenario(thrower, scenario, options(tmp_path))
    assert result.status == "pass"
    assert OWN_FAILED in result.reached and result.missed == []
    failed = [e for e in read_record(result.record).events() if isinstance(e, ThrowFailed)]
    assert failed[0].seat == scenario.seat
    assert failed[0].played == tuple(parse_cards("QC"))


class Cheater:
    """Greedy, except that its first play is a card it does not hold."""

    name = "cheater"

    def __init__(self) -> None:
        self.inner = GreedyBot()
        self.cheated = False

    def decide(self, request: Request) -> Action:
        decision = request.decision
        if decision.kind is Kind.PLAY and not self.cheated:
            self.cheated = True
            missing = next(c for c in parse_cards("AS KS QS JS") if c not in request.view.hand)
            return (missing,) * max(1, decision.count)
        return self.inner.decide(request)


def test_a_fault_is_reported_with_its_position(tmp_path: Path) -> None:
    scenario = SCENARIOS["follow-tractor"]
    result = run_scenario(Cheater(), scenario, options(tmp_path))
    assert result.status == "fail"
    (fault,) = result.faults
    assert fault.kind == "illegal_action" and "not in hand" in fault.reason
    pos = fault.position
    assert pos is not None
    assert pos.kind is Kind.PLAY and pos.deal == 1 and pos.trick == 1
    assert "following a tractor of 2 pairs of hearts AH AH KH KH" in pos.what
    assert [seat for seat, _ in pos.plays] == [1, 2, 3]  # the bot (seat 0) plays last
    assert Counter(parse_cards("9H 9H TH TH")) <= Counter(pos.hand)
    assert fault.played == tuple(parse_cards("9H 9H TH TH"))  # the fallback
    assert "tractor holding a tractor" in " ".join(pos.situations)


def test_report_json_and_junit_of_a_failing_run(tmp_path: Path) -> None:
    scenarios = [SCENARIOS["follow-tractor"], SCENARIOS["failed-throw"]]
    report = check_bot("builtin:greedy", scenarios, options(tmp_path))
    assert report.passed and report.exit_code == 0
    failing = run_scenario(Cheater(), SCENARIOS["follow-tractor"], options(tmp_path / "x"))
    report.results[0] = failing
    assert not report.passed and report.exit_code == 1
    text = render(report)
    assert "FAIL  follow-tractor" in text and "PASS  failed-throw" in text
    assert "illegal action" in text and "trick:   seat 1: AH AH KH KH" in text
    summary = json.loads(json.dumps(report.to_dict()))
    assert summary["faults"] == {"illegal_action": 1}
    assert [s["status"] for s in summary["scenarios"]] == ["fail", "pass"]
    suite = ET.fromstring(junit_xml(report)).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["follow-tractor"].find("failure")
    assert failure is not None and failure.get("type") == "illegal_action"
    assert "AH AH KH KH" in (failure.get("message") or "")
    assert cases["failed-throw"].find("failure") is None


def test_junit_names_the_process_ending_over_the_dropped_stream_before_it(
    tmp_path: Path,
) -> None:
    """A bot dying of its memory limit often closes its stream while it unwinds, and on a
    busy machine the grace for its return runs out before the sandbox's verdict lands:
    ``disconnected`` then comes first, but the failure's type is the cause."""
    failing = run_scenario(Cheater(), SCENARIOS["follow-tractor"], options(tmp_path))
    (fault,) = failing.faults
    gone = dataclasses.replace(fault, kind="disconnected", reason="no reconnection")
    hog = dataclasses.replace(fault, kind="memory_limit", reason="ran out of memory")
    failing.faults = [gone, hog]
    report = check_bot("builtin:greedy", [SCENARIOS["follow-tractor"]], options(tmp_path / "x"))
    report.results[0] = failing
    suite = ET.fromstring(junit_xml(report)).find("testsuite")
    assert suite is not None
    failure = next(suite.iter("failure"))
    assert failure.get("type") == "memory_limit", failure.attrib
    assert "(+1 more)" in (failure.get("message") or "")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-bot", "python bot.py", "--scenario", "no-such"]) == 2
    assert main(["check-bot", "builtin:nobody"]) == 2
    assert main(["check-bot", "python bot.py", "--no-stacked", "--matches", "0"]) == 2
    assert main(["check-bot"]) == 2  # no command
    assert main(["check-bot", "python 'unclosed"]) == 2
    for bad in (["--no-such-option"], ["--matches", "-1"], ["--deals", "0"]):
        with pytest.raises(SystemExit) as exc:
            main(["check-bot", "python bot.py", *bad])
        assert exc.value.code == 2
    assert main(["check-bot", "python bot.py", "--list", "--matches", "2"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in [*SCENARIOS, "random-1", "random-2"])


# -- the command line, over gRPC ------------------------------------------------------------


@dataclass
class Run:
    code: int
    out: str
    err: str
    folder: Path
    junit: ET.Element

    @property
    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.folder / "check-bot.json").read_text())
        return data

    def scenario(self, name: str) -> dict[str, Any]:
        found: list[dict[str, Any]] = [s for s in self.summary["scenarios"] if s["name"] == name]
        assert len(found) == 1
        return found[0]


def start(bot: str, folder: Path, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "arena.cli.main", "check-bot", bot, "--out", str(folder)]
    command += ["--junit", str(folder / "junit.xml"), *args]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(process: subprocess.Popen[str], folder: Path) -> Run:
    out, err = process.communicate(timeout=240)
    junit = ET.parse(folder / "junit.xml").getroot()
    return Run(process.returncode, out, err, folder, junit)


def suite_counts(run: Run) -> tuple[str | None, ...]:
    suite = run.junit.find("testsuite")
    assert suite is not None
    return suite.get("tests"), suite.get("failures"), suite.get("errors")


@dataclass(frozen=True)
class Hostile:
    script: str
    scenario: str
    kinds: tuple[str, ...]  # the fault it provokes (a disconnection that outlasts the
    # decision's own time may be judged a timeout first: a race the referee allows)
    where: str  # in its position's description ("" when it varies)
    args: tuple[str, ...] = ()


HOSTILE = [
    # sleeps 1.5 s on its first request: the bid window after round 1, 5× over the limit
    Hostile("sleepy", "bid-windows", ("timeout",), "a bid window after dealing round 1",
            ("--time-limit", "300")),
    # answers its first request with bytes that are no protobuf message
    Hostile("garbage", "bid-windows", ("malformed",), "a bid window after dealing round 1"),
    # its first play is a card it does not hold: following the tractor of trick 1
    Hostile("illegal", "follow-tractor", ("illegal_action",),
            "following a tractor of 2 pairs of hearts AH AH KH KH led by seat 1 in trick 1"),
    # dies on its sixth request (checked against the record below)
    Hostile("crash", "follow-tractor", ("disconnected", "timeout"), ""),
    # an answer for a sequence number never issued, among floods of copies (a roomy limit:
    # the flood itself may slow a loaded machine down)
    Hostile("flood", "bid-windows", ("unknown_sequence",), "", ("--time-limit", "5000")),
    # never says hello: never takes its seat, its first decision is the fault
    Hostile("silent", "follow-tractor", ("disconnected", "timeout"), "following a tractor",
            ("--connect-timeout", "2")),
]  # fmt: skip


ROOMY = ("--time-limit", "5000")  # a loaded machine must not fault a well-behaved bot
GREEDY_SCENARIOS = [
    arg for name in ("void-and-trump", "follow-throw", "random-1", "random-2")
    for arg in ("--scenario", name)
]  # fmt: skip
SAMPLES = {  # name: (bot, arguments, scenarios played)
    "random_bot": (
        f"{PYTHON} sample_bots/random_bot.py --seed 3",
        ("--matches", "1", "--deals", "1", "--parallel", "3", *ROOMY),
        9,
    ),
    "greedy_bot": (
        f"{PYTHON} sample_bots/greedy_bot.py",
        ("--matches", "2", "--parallel", "2", *ROOMY, *GREEDY_SCENARIOS),
        4,
    ),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """Every ``arena check-bot`` run of the slow tests, all started at once."""
    base = tmp_path_factory.mktemp("check-bot")
    started = {name: start(bot, base / name, *args) for name, (bot, args, _) in SAMPLES.items()}
    for h in [*HOSTILE, Hostile("wrong_token", "failed-throw", (), "")]:
        bot = f"{PYTHON} tests/hostile/{h.script}.py"
        args = ("--matches", "0", "--scenario", h.scenario, "--parallel", "1", *h.args)
        started[h.script] = start(bot, base / h.script, *args)
    yield {name: finish(process, base / name) for name, process in started.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_sample_bots_pass(name: str, runs: dict[str, Run]) -> None:
    run = runs[name]
    assert run.code == 0, run.out + run.err
    assert "result: PASS" in run.out and "FAIL" not in run.out
    assert suite_counts(run) == (str(SAMPLES[name][2]), "0", "0")
    assert run.summary["passed"] and run.summary["latency_ms"]["n"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.script for h in HOSTILE])
def test_each_hostile_bot_fails_in_the_right_position(
    hostile: Hostile, runs: dict[str, Run]
) -> None:
    run = runs[hostile.script]
    assert run.code == 1, run.out + run.err
    assert f"FAIL  {hostile.scenario}" in run.out
    assert "result: FAIL" in run.out
    scenario = run.scenario(hostile.scenario)
    first = next(f for f in scenario["faults"] if f["kind"] in hostile.kinds)
    assert first["position"] is not None
    assert hostile.where in first["position"]["what"]
    assert hostile.where in run.out
    assert suite_counts(run) == ("1", "1", "0")
    suite = run.junit.find("testsuite")
    assert suite is not None
    (case,) = suite.iter("testcase")
    failure = case.find("failure")
    assert case.get("name") == hostile.scenario
    assert failure is not None and first["kind"] in (failure.text or "")
    if scenario["faults"][0] is first:  # the message names the first fault
        assert failure.get("type") == first["kind"]
        assert hostile.where in (failure.get("message") or "")
    if hostile.script == "crash":  # five answers played, the sixth request killed it
        answers = [a for a in read_record(scenario["record"]).answers() if a.seat == 0]
        assert [a.fault for a in answers[:6]] == [False] * 5 + [True]
        assert answers[5].fault_kind in hostile.kinds and answers[5].seq == first["seq"]
        assert "exited with status 3" in run.out  # from the bot's log
    if hostile.script == "silent":
        assert not scenario["connected"] and "never took its seat" in run.out


@pytest.mark.slow
def test_a_refused_knock_then_a_clean_game_passes(runs: dict[str, Run]) -> None:
    """``wrong_token`` is refused once, then plays its seat properly: not a fault."""
    run = runs["wrong_token"]
    assert run.code == 0, run.out + run.err
    assert suite_counts(run) == ("1", "0", "0")
