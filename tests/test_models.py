"""The typed models (msgspec) say what is wrong in arena's own words, and the forgiving
record reader stays forgiving (docs/architecture.md, "Typed models")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.errors import InvalidRules
from arena.game import MatchSetup
from arena.records import RecordHeader, RecordWriter, SeatRecord, parse_record, read_record
from arena.records.format import dump_line
from arena.records.models import AnswerModel
from arena.rules import Card, RuleSet
from arena.rules.models import ModelError, Problem, convert

ANSWER: dict[str, Any] = {
    "n": 5, "type": "answer", "seat": 1, "seq": 3, "kind": "play", "sent": ["AS"],
    "played": ["AS"], "requested_at_ms": 10.0, "latency_ms": 2, "verdict": "accepted",
    "fault": None,
}  # fmt: skip


def line(**changes: Any) -> bytes:
    data = {**ANSWER, **changes}
    return json.dumps({k: v for k, v in data.items() if v != "DROP"}).encode() + b"\n"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"fault": "DROP"}, "answer: missing 'fault'"),
        ({"seat": "1"}, "answer: 'seat' must be a whole number: '1'"),
        ({"seat": True}, "answer: 'seat' must be a whole number: True"),
        ({"latency_ms": "fast"}, "answer: 'latency_ms' must be a number: 'fast'"),
        ({"sent": ["AS", "XX"]}, "answer: sent[1]: bad card code 'XX'"),
        ({"played": "AS"}, "answer: 'played' must be a list: 'AS'"),
        ({"kind": "pass"}, "answer: answer kind 'pass' is not bid, bury or play"),
        ({"verdict": "ok"}, "answer: verdict 'ok' is not accepted, fault or absent"),
        ({"verdict": "fault"}, "answer: a fault answer without a fault"),
        ({"fault": {"kind": "timeout"}}, "answer: missing 'fault.reason'"),
    ],
)
def test_a_line_that_does_not_fit_is_a_problem_on_that_line(
    changes: dict[str, Any], message: str
) -> None:
    record = parse_record(line(n=0, type="header") + line(n=1, **changes))
    assert len(record.lines) == 2  # kept, with its problem
    problem = next(p for n, p in record.issues if n == 1)
    assert problem.startswith(message), problem


def test_a_fitting_line_converts_to_its_values() -> None:
    model = convert(ANSWER, AnswerModel)
    assert model.sent == (Card.parse("AS"),) and model.latency_ms == 2.0


def test_model_error_names_the_path_and_the_value() -> None:
    with pytest.raises(ModelError) as caught:
        convert({**ANSWER, "verdict": "fault", "fault": {"kind": 3, "reason": ""}}, AnswerModel)
    error = caught.value
    assert (error.path, error.problem, error.value) == ("fault.kind", Problem.TYPE, 3)
    assert str(error) == "'fault.kind' must be a string: 3"
    with pytest.raises(ModelError, match="the value must be an object"):
        convert([1], AnswerModel)


def test_the_rules_import_without_any_third_party_package() -> None:
    """Bots use arena.rules under ``python -S`` (tests/botzone): msgspec stays at the edges."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from arena.rules import RuleSet; "
        "RuleSet.from_mapping({'decks': 1}); "
        "assert not {'msgspec', 'arena.rules.models'} & set(sys.modules), sorted(sys.modules)"
    )
    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-S", "-c", code, root], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_rule_variants_keep_their_messages() -> None:
    assert RuleSet.from_mapping({"must_defend": ["5", 10, "A"], "start_level": 3}).start_level
    for values, message in [
        ({"decks": 4}, "rule 'decks' does not take 4: one of 2, 1, 3"),
        ({"decks": True}, "rule 'decks' does not take true"),
        ({"level_cap": 0}, "rule 'level_cap' does not take 0: null or a positive whole"),
        ({"must_defend": ["Z"]}, "rule 'must_defend' does not take [\"Z\"]"),
        ({"follow": "loose"}, "rule 'follow' does not take \"loose\""),
        ({"jokers": 0}, "unknown rule variant 'jokers'"),
    ]:
        with pytest.raises(InvalidRules) as caught:
            RuleSet.from_mapping(values)
        assert str(caught.value).startswith(message), caught.value


def test_a_seat_name_with_a_lone_surrogate_reads_back(tmp_path: Path) -> None:
    """msgspec refuses lone surrogates; the writer escapes them and the reader falls back."""
    seats = [SeatRecord(f"bot\ud800{i}", "builtin:random") for i in range(4)]
    path = tmp_path / "m.jsonl"
    RecordWriter.open(path, RecordHeader.for_setup("m", MatchSetup(), seats)).__exit__(
        None, None, None
    )
    record = read_record(path)
    assert record.problems == [] and record.header is not None
    assert record.header.seats[0].name == "bot\ud8000"


def test_one_encoding_of_a_line() -> None:
    data = {"n": 1, "type": "cancel", "reason": 'é \u2028 "q"'}
    assert dump_line(data) == msgspec.json.encode(data) + b"\n"
    assert json.loads(dump_line(data)) == data
    assert dump_line({"n": 2, "f": 0.1}) == b'{"n":2,"f":0.1}\n'
